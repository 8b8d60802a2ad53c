#include "test/support/fake_slice_api.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <ctime>
#include <deque>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "pkg/kube/json_read.h"
#include "pkg/text/cat.h"

namespace rdmadp::testing {
namespace {

using kube::HttpResponse;
using kube::Member;
using kube::Obj;
using kube::Str;
using Selector = std::map<std::string, std::string>;

constexpr std::string_view kSlices = "/apis/resource.k8s.io/v1/resourceslices";
constexpr std::string_view kNodes = "/api/v1/nodes/";
// fake_apiserver.mjs kEventWindow (its --event-window default): the watch cache's window.
constexpr size_t kEventWindow = 50000;
// A watch's timeoutSeconds past this is taken as this: a time_point of nanoseconds holds 292
// years, and no watch outlives a test.
constexpr uint64_t kMaxTimeoutSeconds = 10ULL * 365 * 86400;

// RFC 1321. fake_apiserver.mjs answers a Node's uid as the MD5 of its name, and tests of the
// owner reference compare it (e2e/slice_publisher_test.cpp: n1's).
std::string Md5Hex(std::string_view data) {
  static constexpr uint32_t kK[64] = {
      0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
      0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
      0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
      0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
      0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
      0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
      0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
      0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
      0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
      0xeb86d391};
  static constexpr int kShift[4][4] = {
      {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};
  std::string message(data);
  const uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  message += static_cast<char>(0x80);
  while (message.size() % 64 != 56) message += '\0';
  for (int i = 0; i < 8; ++i) message += static_cast<char>((bits >> (8 * i)) & 0xff);
  uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  for (size_t at = 0; at < message.size(); at += 64) {
    uint32_t m[16];
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const unsigned char*>(message.data() + at + 4 * i);
      m[i] = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
             static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    for (int i = 0; i < 64; ++i) {
      uint32_t f = 0;
      int g = 0;
      switch (i / 16) {
        case 0:
          f = (b & c) | (~b & d);
          g = i;
          break;
        case 1:
          f = (d & b) | (~d & c);
          g = (5 * i + 1) % 16;
          break;
        case 2:
          f = b ^ c ^ d;
          g = (3 * i + 5) % 16;
          break;
        default:
          f = c ^ (b | ~d);
          g = (7 * i) % 16;
          break;
      }
      f += a + kK[i] + m[g];
      a = d;
      d = c;
      c = b;
      b += std::rotl(f, kShift[i / 16][i % 4]);
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const uint32_t word : h) {
    for (int i = 0; i < 4; ++i) {
      const unsigned byte = (word >> (8 * i)) & 0xff;
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

// fake_apiserver.mjs stamp() takes crypto.randomUUID(); here a UUID-shaped hash of what is
// unique about the write (name and revision), so that runs are repeatable.
std::string Uid(const std::string& seed) {
  const std::string hex = Md5Hex(seed);
  return Cat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
             hex.substr(16, 4), "-", hex.substr(20));
}

// fake_apiserver.mjs stamp(): new Date().toISOString(). Here the fake's clock read as Unix
// time: a steady clock has no calendar, but a ManualClock's stamps are then repeatable.
std::string IsoTime(FakeSliceApi::TimePoint t) {
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const time_t seconds = static_cast<time_t>(ms / 1000);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[96];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                static_cast<int>(ms % 1000));
  return text;
}

// kube_validation.mjs generateName: the base (at most 58 bytes) and five characters of
// apiserver's alphabet. Not random: the revision the create will get, spread over the 27^5
// suffixes by a multiplier prime to 27, so that two stored creates never share a name.
std::string GenerateName(const std::string& base, uint64_t revision) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t x = (revision * 7919) % 14348907;  // 27^5
  std::string name = base.substr(0, 58);
  for (int i = 0; i < 5; ++i) {
    name += kAlphabet[x % kAlphabet.size()];
    x /= kAlphabet.size();
  }
  return name;
}

// URLSearchParams' decoding: %XX and '+'; a malformed escape stays as it is.
std::string PercentDecode(std::string_view s) {
  const auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Url {
  std::string path;                          // as sent (fake_apiserver.mjs: url.pathname)
  std::map<std::string, std::string> query;  // decoded; the first of a name, as .get() does

  std::string Get(const std::string& name) const {
    const auto it = query.find(name);
    return it == query.end() ? "" : it->second;
  }
};

Url ParseUrl(const std::string& url) {
  Url u;
  const size_t q = url.find('?');
  u.path = url.substr(0, q);
  if (q == std::string::npos) return u;
  std::string_view rest = std::string_view(url).substr(q + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    u.query.emplace(PercentDecode(pair.substr(0, eq)), eq == std::string_view::npos
                                                           ? std::string()
                                                           : PercentDecode(pair.substr(eq + 1)));
  }
  return u;
}

// fake_apiserver.mjs selectorOf: "k=v,k=v" (already decoded), the value up to a second '='
// as its split does; a part without '=' is left out (the JavaScript's would match only
// objects without that field; nothing sends one).
Selector SelectorOf(const Url& u) {
  Selector selector;
  const std::string text = u.Get("fieldSelector");
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view value = part.substr(eq + 1);
    selector[std::string(part.substr(0, eq))] = std::string(value.substr(0, value.find('=')));
  }
  return selector;
}

// fake_apiserver.mjs matches: each dotted path of the selector is a string equal to its value.
bool Matches(const nlohmann::json& object, const Selector& selector) {
  for (const auto& [key, want] : selector) {
    const nlohmann::json* at = &object;
    size_t start = 0;
    while (at != nullptr) {
      const size_t dot = key.find('.', start);
      at = Member(*at, key.substr(start, dot - start).c_str());
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (at == nullptr || !at->is_string() || at->get<std::string>() != want) return false;
  }
  return true;
}

// Number(x) of a count or a revision: digits only, else 0.
uint64_t ParseCount(const std::string& s) {
  if (s.empty() || s.size() > 18) return 0;
  uint64_t n = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

// fake_apiserver.mjs status().
HttpResponse StatusAnswer(long code, std::string_view reason, const std::string& message) {
  const nlohmann::json status = {
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", std::string(reason)},
      {"code", code}};
  return {code, status.dump(), 0};
}

// fake_apiserver.mjs injected(): the reason of an injected code.
std::string_view ReasonOf(long code) {
  switch (code) {
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    default:
      return "Unknown";
  }
}

// One watch line, as fake_apiserver.mjs record() writes it: {"type", "object"}, type first.
std::string EventLine(const std::string& type, const nlohmann::json& object) {
  return Cat("{\"type\":\"", type, "\",\"object\":", object.dump(), "}");
}

// The metadata of a written object, an object from here on (fake_apiserver.mjs:
// obj.metadata ??= {}).
nlohmann::json& Metadata(nlohmann::json& object) {
  nlohmann::json& meta = object["metadata"];
  if (!meta.is_object()) meta = nlohmann::json::object();
  return meta;
}

// RestClient's line for a stream that carried nothing for its idle limit.
std::string IdleMessage(const std::string& path, std::chrono::seconds idle) {
  return Cat("watch ", path, ": nothing for ", idle.count(),
             " s (not even a bookmark): the connection is dead");
}

}  // namespace

// One open watch (fake_apiserver.mjs watch()'s `w`). Owned by the stream's transport while
// its Stream() runs; in watches_ (under mu_) from the answer until that Stream() leaves.
struct FakeSliceApi::Watch {
  Selector selector;
  bool bookmarks = false;  // allowWatchBookmarks=true
  // /black-hole-watches: nothing more is written to it (fake_apiserver.mjs `w.silent`).
  bool silent = false;
  // The server ended it (timeoutSeconds is the stream's own deadline, ends_at): once the
  // lines written before are read, the stream ends with 200.
  bool ended = false;
  std::optional<TimePoint> ends_at;
  std::deque<std::string> lines;  // written, not yet read by the stream's thread
};

class FakeSliceApi::Transport final : public kube::ApiTransport {
 public:
  explicit Transport(FakeSliceApi& api) : api_(api) {}

  absl::StatusOr<kube::HttpResponse> Call(
      std::string_view method, const std::string& path, const std::string& body = "",
      std::chrono::milliseconds timeout = kube::kCallTimeout) override {
    call_timeout_ = timeout;
    auto answer = api_.Handle(*this, std::string(method), path, body);
    // RestClient: a cancelled transfer is a transport error like any other.
    if (!answer.ok() && absl::IsCancelled(answer.status())) {
      return absl::UnavailableError(answer.status().message());
    }
    return answer;
  }

  absl::StatusOr<long> Stream(const std::string& path,
                              const std::function<bool(std::string_view line)>& on_line,
                              const std::function<void()>& on_open = nullptr) override {
    return api_.Stream(*this, path, on_line, on_open);
  }

  // The flags are under the fake's mu_ and every wait of this transport's thread is on
  // changed_: the wake-up reaches a held answer or an open watch at once.
  void Cancel() override {
    std::lock_guard lock(api_.mu_);
    cancelled_ = true;
    api_.clock_.NotifyAll(api_.changed_);
  }
  void ResetCancel() override {
    std::lock_guard lock(api_.mu_);
    cancelled_ = shut_down_;
  }
  void Shutdown() override {
    std::lock_guard lock(api_.mu_);
    shut_down_ = true;
    cancelled_ = true;
    api_.clock_.NotifyAll(api_.changed_);
  }
  int stream_retry_after_seconds() const override { return stream_retry_after_; }

 private:
  friend class FakeSliceApi;
  FakeSliceApi& api_;
  // Under api_.mu_ (Cancel and Shutdown come from other threads).
  bool cancelled_ = false;
  bool shut_down_ = false;
  // The owner thread's.
  bool streaming_ = false;  // the request in Handle is a Stream()'s
  std::chrono::milliseconds call_timeout_ = kube::kCallTimeout;
  std::unique_ptr<Watch> watch_;  // opened by Handle for Stream()
  int stream_retry_after_ = 0;
};

FakeSliceApi::FakeSliceApi(const kube::ThreadClock& clock, std::chrono::seconds watch_idle,
                           std::chrono::seconds bookmark_every)
    : clock_(clock), watch_idle_(watch_idle), bookmark_every_(bookmark_every) {}

FakeSliceApi::~FakeSliceApi() {
  // Streams and held answers run on their callers' threads against this object: end them
  // (a server gone: nothing listening, watches cut) and wait until each has left.
  std::unique_lock lock(mu_);
  down_ = true;
  for (Watch* w : watches_) w->ended = true;
  clock_.NotifyAll(changed_);
  kube::Wait(clock_, changed_, lock, [this] { return watches_.empty() && stats_.held == 0; });
}

std::unique_ptr<kube::ApiTransport> FakeSliceApi::Connect() {
  return std::make_unique<Transport>(*this);
}

absl::StatusOr<kube::HttpResponse> FakeSliceApi::Handle(Transport& from, const std::string& method,
                                                        const std::string& url,
                                                        const std::string& body) {
  const Url u = ParseUrl(url);
  // RestClient's one-line errors: "<method> <path>: ..." for a call, "watch <path>: ..."
  // for a stream.
  const std::string what = from.streaming_ ? Cat("watch ", u.path) : Cat(method, " ", u.path);
  std::unique_lock lock(mu_);
  // RestClient: a cancelled client sends nothing (its socket is shut down as it opens).
  if (from.cancelled_) return absl::CancelledError(Cat(what, ": cancelled"));
  // fake_apiserver.mjs apiServer's handler: logged as it arrives, its code set as it is
  // answered (0 until then, and for good when it never is).
  const TimePoint arrival = clock_.Now();
  requests_.push_back({arrival, method, url, 0});
  const size_t entry = requests_.size() - 1;
  // /down: the server is closed. (The JavaScript logs nothing then; here the attempt is
  // in the log, code 0, so a test reads when the client tried.)
  if (down_) {
    return absl::UnavailableError(
        Cat(what, ": Failed to connect to the fake API server: Connection refused"));
  }

  bool park = false;  // held: answered at Release()
  // fake_apiserver.mjs api(): the routes, after outage and injected faults.
  const auto route = [&]() -> HttpResponse {
    if (method == "GET" && u.path.starts_with(kNodes) && u.path.size() > kNodes.size() &&
        u.path.find('/', kNodes.size()) == std::string::npos) {
      const std::string name = u.path.substr(kNodes.size());
      const nlohmann::json node = {{"kind", "Node"},
                                   {"apiVersion", "v1"},
                                   {"metadata", {{"name", name}, {"uid", Md5Hex(name)}}}};
      return {200, node.dump(), 0};
    }
    if (u.path == kSlices && method == "GET") {
      const std::string watch = u.Get("watch");
      if (watch == "true" || watch == "1") {
        // An in-process client reads a watch as a stream only (the JavaScript would send
        // a Call's answer once the watch ends).
        if (!from.streaming_) {
          return StatusAnswer(400, "BadRequest",
                              "fake apiserver: a watch is read with Stream(), not Call()");
        }
        // fake_apiserver.mjs watch().
        const uint64_t since = ParseCount(u.Get("resourceVersion"));
        ++stats_.watches_opened;
        stats_.last_watch_from = std::to_string(since);
        auto w = std::make_unique<Watch>();
        w->selector = SelectorOf(u);
        if (short_watches_) {
          w->ended = true;  // a server (or proxy) that ends every watch at once
        } else if (black_hole_) {
          w->silent = true;  // headers came through, then nothing
        } else if (since != 0 && since < compacted_rv_) {
          const nlohmann::json expired = {
              {"kind", "Status"},
              {"apiVersion", "v1"},
              {"status", "Failure"},
              {"message", Cat("too old resource version: ", since, " (", compacted_rv_, ")")},
              {"reason", "Expired"},
              {"code", 410}};
          w->lines.push_back(EventLine("ERROR", expired));
          w->ended = true;
        } else {
          for (const Event& e : events_) {
            if (e.rv > since && Matches(e.object, w->selector)) {
              w->lines.push_back(EventLine(e.type, e.object));
            }
          }
          w->bookmarks = u.Get("allowWatchBookmarks") == "true";
          if (const uint64_t timeout = ParseCount(u.Get("timeoutSeconds")); timeout != 0) {
            w->ends_at = arrival + std::chrono::seconds(
                                       static_cast<int64_t>(std::min(timeout, kMaxTimeoutSeconds)));
          }
        }
        // Every watch is in the set until its stream leaves (an ended one is skipped by
        // Record and Bookmark): the destructor waits for the set to empty.
        watches_.insert(w.get());
        from.watch_ = std::move(w);
        return {200, "", 0};
      }
      ++stats_.lists;
      const Selector selector = SelectorOf(u);
      nlohmann::json items = nlohmann::json::array();
      for (const auto& [name, slice] : slices_) {
        if (Matches(slice, selector)) items.push_back(slice);
      }
      const nlohmann::json list = {{"kind", "ResourceSliceList"},
                                   {"apiVersion", "resource.k8s.io/v1"},
                                   {"metadata", {{"resourceVersion", std::to_string(rv_)}}},
                                   {"items", std::move(items)}};
      return {200, list.dump(), 0};
    }
    // fake_apiserver.mjs stamp().
    const auto stamp = [&](nlohmann::json& object, const nlohmann::json* existing) {
      ++rv_;
      static const nlohmann::json kNone = nlohmann::json::object();
      nlohmann::json& meta = Metadata(object);
      const nlohmann::json& old = existing != nullptr ? Obj(*existing, "metadata") : kNone;
      meta["resourceVersion"] = std::to_string(rv_);
      const std::string old_uid = Str(old, "uid");
      meta["uid"] = !old_uid.empty() ? old_uid : Uid(Cat(Str(meta, "name"), "@", rv_));
      const std::string old_created = Str(old, "creationTimestamp");
      meta["creationTimestamp"] = !old_created.empty() ? old_created : IsoTime(arrival);
      const nlohmann::json* generation = Member(old, "generation");
      meta["generation"] =
          (generation != nullptr && generation->is_number_integer() ? generation->get<int64_t>()
                                                                    : 0) +
          1;
    };
    if (u.path == kSlices && method == "POST") {
      nlohmann::json object = nlohmann::json::parse(body, nullptr, false);
      // The JavaScript's JSON.parse throws, and its handler answers 500.
      if (!object.is_object()) {
        return StatusAnswer(500, "InternalError", "SyntaxError: the body is not a JSON object");
      }
      nlohmann::json& meta = Metadata(object);
      // rest.BeforeCreate names the object before validating it (names.SimpleNameGenerator).
      if (Str(meta, "name").empty() && !Str(meta, "generateName").empty()) {
        meta["name"] = GenerateName(Str(meta, "generateName"), rv_ + 1);
      }
      const std::string name = Str(meta, "name");
      // The one check of admitSlice kept: a nameless object cannot be stored.
      if (name.empty()) {
        return StatusAnswer(422, "Invalid",
                            "ResourceSlice.resource.k8s.io \"\" is invalid: metadata.name: "
                            "Required value: name or generateName is required");
      }
      if (slices_.contains(name)) {
        return StatusAnswer(409, "AlreadyExists", Cat("\"", name, "\" already exists"));
      }
      if (u.Get("dryRun") == "All") {
        // Nothing is stored and no event is sent (apiserver's dry-run).
        ++stats_.dry_runs;
        meta["uid"] = Uid(Cat("dry-run ", name, "@", rv_));
        meta["creationTimestamp"] = IsoTime(arrival);
        return {201, object.dump(), 0};
      }
      stamp(object, nullptr);
      slices_[name] = object;
      ++stats_.writes;
      ++stats_.creates;
      Record("ADDED", object);
      park = hold_writes_;  // answerWrite
      return {201, object.dump(), 0};
    }
    if (u.path.starts_with(Cat(kSlices, "/")) && u.path.size() > kSlices.size() + 1 &&
        u.path.find('/', kSlices.size() + 1) == std::string::npos) {
      const std::string name = u.path.substr(kSlices.size() + 1);
      const auto existing = slices_.find(name);
      const std::string not_found = Cat("resourceslices \"", name, "\" not found");
      if (method == "PUT") {
        nlohmann::json object = nlohmann::json::parse(body, nullptr, false);
        if (!object.is_object()) {
          return StatusAnswer(500, "InternalError", "SyntaxError: the body is not a JSON object");
        }
        if (existing == slices_.end()) return StatusAnswer(404, "NotFound", not_found);
        // The registry's Update compares resource versions before validating; an update
        // without one is unconditional (the strategy's AllowUnconditionalUpdate).
        nlohmann::json& meta = Metadata(object);
        const nlohmann::json* stored = Member(Obj(existing->second, "metadata"), "resourceVersion");
        const nlohmann::json stored_rv = stored != nullptr ? *stored : nlohmann::json();
        const nlohmann::json* sent = Member(meta, "resourceVersion");
        // JavaScript's `!obj.metadata.resourceVersion`: absent, null, "" or 0.
        if (sent == nullptr || sent->is_null() ||
            (sent->is_string() && sent->get_ref<const std::string&>().empty()) ||
            (sent->is_number() && sent->get<double>() == 0)) {
          meta["resourceVersion"] = stored_rv;
        }
        if (meta["resourceVersion"] != stored_rv) {
          ++stats_.conflicts;
          return StatusAnswer(
              409, "Conflict",
              Cat("Operation cannot be fulfilled on resourceslices \"", name,
                  "\": the object has been modified; please apply your changes to the latest "
                  "version and try again"));
        }
        // Where the JavaScript validates, the object is stored under the URL's name: the
        // real handler's check of the two.
        if (Str(meta, "name").empty()) meta["name"] = name;
        if (Str(meta, "name") != name) {
          return StatusAnswer(400, "BadRequest",
                              Cat("the name of the object (", Str(meta, "name"),
                                  ") does not match the name on the URL (", name, ")"));
        }
        stamp(object, &existing->second);
        existing->second = object;
        ++stats_.writes;
        ++stats_.updates;
        Record("MODIFIED", object);
        park = hold_writes_;  // answerWrite
        return {200, object.dump(), 0};
      }
      if (method == "DELETE") {
        // The body (DeleteOptions, preconditions) is not read, as in the JavaScript.
        if (existing == slices_.end()) return StatusAnswer(404, "NotFound", not_found);
        const nlohmann::json gone = std::move(existing->second);
        slices_.erase(existing);
        ++rv_;  // the object keeps its last resourceVersion, as the JavaScript sends it
        ++stats_.writes;
        ++stats_.deletes;
        Record("DELETED", gone);
        return {200, gone.dump(), 0};
      }
    }
    return StatusAnswer(404, "NotFound", Cat("fake apiserver: no route for ", method, " ", u.path));
  };

  HttpResponse answer;
  const auto fault = std::find_if(faults_.begin(), faults_.end(), [&](const Fault& f) {
    return (f.method.empty() || f.method == method) && url.find(f.match) != std::string::npos;
  });
  if (outage_) {
    ++stats_.refused;
    // No Retry-After: fake_apiserver.mjs sends none with /outage's 503.
    answer = StatusAnswer(503, "ServiceUnavailable", "the API server is overloaded (/outage)");
  } else if (fault != faults_.end()) {
    // fake_apiserver.mjs injected(): the first match, `count` times.
    const Fault f = *fault;
    if (--fault->count <= 0) faults_.erase(fault);
    ++stats_.faults_served;
    answer = f.body ? HttpResponse{f.code, *f.body, 0}
                    : StatusAnswer(f.code, ReasonOf(f.code), Cat("injected ", f.code));
    // A 429 carries Retry-After as the real server's throttles send it.
    if (f.code == 429) answer.retry_after_seconds = f.retry_after;
    park = f.hold;
  } else {
    answer = route();
  }

  if (park) {
    // fake_apiserver.mjs answerWrite / injected with hold: the answer waits for /release
    // (a write is stored and its event sent already). The client's own limits still run:
    // RestClient ends a call after its timeout and a stream after its idle limit.
    ++stats_.held;
    const uint64_t generation = release_generation_;
    const std::chrono::milliseconds patience =
        from.streaming_ ? std::chrono::milliseconds(watch_idle_) : from.call_timeout_;
    const bool released =
        kube::WaitUntil(
            clock_, changed_, lock, arrival + patience,
            [&] { return release_generation_ != generation || from.cancelled_ || down_; }) &&
        release_generation_ != generation;
    --stats_.held;
    clock_.NotifyAll(changed_);  // the destructor waits for held answers to leave
    if (!released) {
      if (from.cancelled_) return absl::CancelledError(Cat(what, ": cancelled"));
      if (down_) {
        return absl::UnavailableError(Cat(what, ": Recv failure: Connection reset by peer"));
      }
      if (from.streaming_) return absl::DeadlineExceededError(IdleMessage(u.path, watch_idle_));
      return absl::UnavailableError(Cat(what, ": Operation timed out after ",
                                        from.call_timeout_.count(),
                                        " milliseconds with 0 bytes received"));
    }
  }
  requests_[entry].code = answer.code;
  return answer;
}

absl::StatusOr<long> FakeSliceApi::Stream(Transport& from, const std::string& url,
                                          const std::function<bool(std::string_view)>& on_line,
                                          const std::function<void()>& on_open) {
  from.streaming_ = true;
  auto answer = Handle(from, "GET", url, "");
  from.streaming_ = false;
  if (!answer.ok()) {
    from.stream_retry_after_ = 0;
    // RestClient: a cancelled transfer that got no status line returns its code, 0.
    if (absl::IsCancelled(answer.status())) return 0L;
    return answer.status();
  }
  if (from.watch_ == nullptr) {
    // An answer, not a watch (RestClient::Stream): a non-200 body goes to on_line whole,
    // with the Retry-After of a 429.
    from.stream_retry_after_ = answer->code == 200 ? 0 : answer->retry_after_seconds;
    if (answer->code != 200) {
      on_line(answer->body);
      return answer->code;
    }
    // A 200 that is not a watch (a broken answer's body): its lines, as RestClient reads a
    // stream, then the end.
    if (on_open) on_open();
    std::string_view rest = answer->body;
    while (!rest.empty()) {
      const size_t end = std::min(rest.find('\n'), rest.size());
      if (end > 0 && !on_line(rest.substr(0, end))) break;
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    return answer->code;
  }
  from.stream_retry_after_ = 0;
  if (on_open) on_open();
  const std::string path = ParseUrl(url).path;
  std::unique_lock lock(mu_);
  Watch& w = *from.watch_;
  // The transport's idle limit counts from the last line (RestClient: curl's low-speed
  // limit of 1 byte/s over watch_idle).
  TimePoint last = clock_.Now();
  // fake_apiserver.mjs --bookmark-ms, from this watch's start.
  const bool bookmarked = w.bookmarks && bookmark_every_.count() > 0;
  TimePoint next_bookmark = bookmarked ? last + bookmark_every_ : TimePoint::max();
  absl::StatusOr<long> result = 200L;
  while (true) {
    // RestClient: a cancelled 200 stream returns 200, whatever it had not read yet.
    if (from.cancelled_) break;
    if (!w.lines.empty()) {
      // One line at a time, outside mu_: the caller's on_line takes its own locks.
      const std::string line = std::move(w.lines.front());
      w.lines.pop_front();
      last = clock_.Now();
      lock.unlock();
      const bool more = on_line(line);
      lock.lock();
      if (!more) break;
      continue;
    }
    // fake_apiserver.mjs endWatch and res.destroy(): the stream ends, 200 either way.
    if (w.ended) break;
    const TimePoint now = clock_.Now();
    // fake_apiserver.mjs armWatchEnd: timeoutSeconds reached.
    if (w.ends_at && now >= *w.ends_at) break;
    if (now >= next_bookmark) {
      next_bookmark += bookmark_every_;
      if (!w.silent) w.lines.push_back(BookmarkLine());
      continue;
    }
    const TimePoint idle_end = last + watch_idle_;
    if (now >= idle_end) {
      result = absl::DeadlineExceededError(IdleMessage(path, watch_idle_));
      break;
    }
    TimePoint until = std::min(idle_end, next_bookmark);
    if (w.ends_at) until = std::min(until, *w.ends_at);
    clock_.WaitUntil(changed_, lock, until);
  }
  watches_.erase(&w);
  from.watch_.reset();
  clock_.NotifyAll(changed_);  // the destructor waits for streams to leave
  return result;
}

void FakeSliceApi::Record(const std::string& type, const nlohmann::json& object) {
  // fake_apiserver.mjs record(): the event at the current revision, into the window (its
  // oldest out, compactedRv its revision), and to every open watch that selects it.
  events_.push_back({rv_, type, object});
  while (events_.size() > kEventWindow) {
    compacted_rv_ = events_.front().rv;
    events_.erase(events_.begin());
  }
  const std::string line = EventLine(type, object);
  for (Watch* w : watches_) {
    if (!w->silent && !w->ended && Matches(object, w->selector)) w->lines.push_back(line);
  }
  clock_.NotifyAll(changed_);
}

void FakeSliceApi::AddFault(Fault fault) {
  std::lock_guard lock(mu_);
  faults_.push_back(std::move(fault));
}

int FakeSliceApi::Wipe(const std::map<std::string, std::string>& selector) {
  // fake_apiserver.mjs wipe(): a delete-collection, one revision and one event each; not a
  // client's delete (stats count none).
  std::lock_guard lock(mu_);
  int deleted = 0;
  for (auto it = slices_.begin(); it != slices_.end();) {
    if (!Matches(it->second, selector)) {
      ++it;
      continue;
    }
    const nlohmann::json gone = std::move(it->second);
    it = slices_.erase(it);
    ++rv_;
    Record("DELETED", gone);
    ++deleted;
  }
  return deleted;
}

void FakeSliceApi::Hold() {
  std::lock_guard lock(mu_);
  hold_writes_ = true;
}

void FakeSliceApi::Release() {
  std::lock_guard lock(mu_);
  hold_writes_ = false;
  ++release_generation_;
  clock_.NotifyAll(changed_);
}

void FakeSliceApi::DropWatches() {
  std::lock_guard lock(mu_);
  for (Watch* w : watches_) w->ended = true;
  clock_.NotifyAll(changed_);
}

void FakeSliceApi::Compact() {
  // fake_apiserver.mjs /compact: other objects' writes moved the revision on, then etcd
  // compacted: a watch from any version handed out is too old.
  std::lock_guard lock(mu_);
  ++rv_;
  compacted_rv_ = rv_;
  events_.clear();
}

void FakeSliceApi::BlackHoleWatches(bool on) {
  // fake_apiserver.mjs /black-hole-watches: a dead connection stays dead; turning it off
  // only spares the watches opened later.
  std::lock_guard lock(mu_);
  black_hole_ = on;
  if (on) {
    for (Watch* w : watches_) w->silent = true;
  }
}

void FakeSliceApi::ShortWatches(bool on) {
  // fake_apiserver.mjs /short-watches: the open watches end, on or off.
  std::lock_guard lock(mu_);
  short_watches_ = on;
  for (Watch* w : watches_) w->ended = true;
  clock_.NotifyAll(changed_);
}

void FakeSliceApi::Outage(bool on) {
  // fake_apiserver.mjs /outage: a restarting API server cuts its watches.
  std::lock_guard lock(mu_);
  outage_ = on;
  if (on) {
    for (Watch* w : watches_) w->ended = true;
  }
  clock_.NotifyAll(changed_);
}

void FakeSliceApi::Down() {
  // fake_apiserver.mjs /down: the server closes and destroys every socket: watches end,
  // held answers are lost (their clients see a reset).
  std::lock_guard lock(mu_);
  down_ = true;
  for (Watch* w : watches_) w->ended = true;
  clock_.NotifyAll(changed_);
}

void FakeSliceApi::Up() {
  std::lock_guard lock(mu_);
  down_ = false;
}

void FakeSliceApi::Tick() {
  // fake_apiserver.mjs /tick: another object was written; no event of ours.
  std::lock_guard lock(mu_);
  ++rv_;
}

std::string FakeSliceApi::BookmarkLine() const {
  const nlohmann::json object = {{"kind", "ResourceSlice"},
                                 {"apiVersion", "resource.k8s.io/v1"},
                                 {"metadata", {{"resourceVersion", std::to_string(rv_)}}}};
  return EventLine("BOOKMARK", object);
}

void FakeSliceApi::Bookmark() {
  // fake_apiserver.mjs bookmark(): the watches that asked for bookmarks, at the revision.
  std::lock_guard lock(mu_);
  const std::string line = BookmarkLine();
  for (Watch* w : watches_) {
    if (w->bookmarks && !w->silent && !w->ended) w->lines.push_back(line);
  }
  clock_.NotifyAll(changed_);
}

std::vector<FakeSliceApi::Request> FakeSliceApi::Requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

FakeSliceApi::Stats FakeSliceApi::stats() const {
  std::lock_guard lock(mu_);
  Stats out = stats_;
  // fake_apiserver.mjs watchesOpen: a watch the server ended is out of its set at once.
  out.open_watches = static_cast<int>(
      std::count_if(watches_.begin(), watches_.end(), [](const Watch* w) { return !w->ended; }));
  return out;
}

std::map<std::string, nlohmann::json> FakeSliceApi::Slices() const {
  std::lock_guard lock(mu_);
  return slices_;
}

std::string FakeSliceApi::resource_version() const {
  std::lock_guard lock(mu_);
  return std::to_string(rv_);
}

}  // namespace rdmadp::testing
