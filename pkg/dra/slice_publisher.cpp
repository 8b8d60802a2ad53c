#include "pkg/dra/slice_publisher.h"

#include <charconv>
#include <random>

#include "pkg/text/cat.h"

namespace rdmadp::dra {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kSlices = "/apis/resource.k8s.io/v1/resourceslices";
constexpr milliseconds kFirstBackoff{1000};
constexpr milliseconds kMaxBackoff{30000};
constexpr size_t kMaxTombstones = 1024;  // a wipe of 1024 slices between two answers

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// resourceVersions are opaque; the API server's are integers, and an older one must never
// replace a newer one we already hold (our own write's answer can precede its watch event).
bool Older(const std::string& a, const std::string& b) {
  uint64_t x = 0;
  uint64_t y = 0;
  const auto [pa, ea] = std::from_chars(a.data(), a.data() + a.size(), x);
  const auto [pb, eb] = std::from_chars(b.data(), b.data() + b.size(), y);
  if (ea != std::errc() || eb != std::errc()) return false;
  return x < y;
}

PublishedSlice FromObject(const nlohmann::json& object) {
  const auto& meta = object.value("metadata", nlohmann::json::object());
  return {meta.value("name", ""), meta.value("resourceVersion", ""), object};
}

std::string StatusMessage(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    return j["message"].get<std::string>();
  }
  return body.substr(0, 200);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SlicePublisher>> SlicePublisher::Start(PublisherOptions options) {
  std::unique_ptr<SlicePublisher> p(new SlicePublisher(std::move(options)));
  auto watch = kube::RestClient::Create(p->options_.api);
  if (!watch.ok()) return watch.status();
  auto write = kube::RestClient::Create(p->options_.api);
  if (!write.ok()) return write.status();
  p->watch_client_ = std::move(*watch);
  p->write_client_ = std::move(*write);
  p->watcher_ = std::thread([raw = p.get()] { raw->WatchLoop(); });
  p->writer_ = std::thread([raw = p.get()] { raw->WriteLoop(); });
  return p;
}

SlicePublisher::SlicePublisher(PublisherOptions options) : options_(std::move(options)) {}

SlicePublisher::~SlicePublisher() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (watch_client_) watch_client_->Cancel();
  if (write_client_) write_client_->Cancel();
  if (watcher_.joinable()) watcher_.join();
  if (writer_.joinable()) writer_.join();
}

void SlicePublisher::Publish(std::vector<WantedPool> wanted) {
  {
    std::lock_guard lock(mu_);
    wanted_ = std::move(wanted);
    have_wish_ = true;
    dirty_ = true;
  }
  changed_.notify_all();
}

PublisherStats SlicePublisher::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::string SlicePublisher::Selector() const {
  return PercentEncode(Cat("spec.nodeName=", options_.node_name, ",spec.driver=", options_.driver));
}

bool SlicePublisher::Pause(milliseconds d) {
  std::unique_lock lock(mu_);
  changed_.wait_for(lock, d, [this] { return stopping_; });
  return !stopping_;
}

void SlicePublisher::Problem(const std::string& line) {
  {
    std::lock_guard lock(mu_);
    if (line == last_problem_) return;
    last_problem_ = line;
  }
  if (options_.on_problem) options_.on_problem(line);
}

bool SlicePublisher::List() {
  auto r = watch_client_->Call("GET", Cat(kSlices, "?fieldSelector=", Selector()));
  auto list =
      r.ok() && r->code == 200 ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    {
      std::lock_guard lock(mu_);
      ++stats_.lists;
      ++stats_.failures;
    }
    Problem(!r.ok() ? std::string(r.status().message())
                    : Cat("listing ResourceSlices: HTTP ", r->code, ": ", StatusMessage(r->body),
                          r->code == 403 ? " (grant the DaemonSet's service account list/watch "
                                           "on resourceslices: images/overlays/dra)"
                                         : ""));
    return false;
  }
  std::lock_guard lock(mu_);
  ++stats_.lists;
  published_.clear();
  deleted_.clear();  // the list is the whole truth again
  for (const auto& item : list["items"]) {
    PublishedSlice s = FromObject(item);
    published_[s.name] = std::move(s);
  }
  resource_version_ = list.value("metadata", nlohmann::json::object()).value("resourceVersion", "");
  stats_.synced = true;
  relist_ = false;
  dirty_ = true;
  last_problem_.clear();
  changed_.notify_all();
  return true;
}

bool SlicePublisher::WatchOnce() {
  std::string from;
  {
    std::lock_guard lock(mu_);
    from = resource_version_;
    ++stats_.watches;
  }
  // The server ends a watch after timeoutSeconds; a jittered 5-10 minutes spreads the
  // re-watches of a thousand nodes.
  static thread_local std::minstd_rand rng(std::random_device{}());
  const int timeout = 300 + static_cast<int>(rng() % 300);
  bool relist = false;
  auto code = watch_client_->Stream(
      Cat(kSlices, "?watch=true&allowWatchBookmarks=true&timeoutSeconds=", timeout,
          "&resourceVersion=", from, "&fieldSelector=", Selector()),
      [&](std::string_view line) {
        auto event = nlohmann::json::parse(line, nullptr, false);
        if (!event.is_object()) return true;
        const std::string type = event.value("type", "");
        const nlohmann::json& object = event.contains("object") ? event["object"] : event;
        std::lock_guard lock(mu_);
        if (type == "ERROR" || !event.contains("type")) {
          relist = true;  // 410 Expired (compacted) or anything else: start over
          return false;
        }
        const auto& meta = object.value("metadata", nlohmann::json::object());
        const std::string rv = meta.value("resourceVersion", "");
        if (!rv.empty()) resource_version_ = rv;
        if (type == "BOOKMARK") return true;
        PublishedSlice s = FromObject(object);
        auto it = published_.find(s.name);
        if (type == "DELETED") {
          if (it != published_.end()) published_.erase(it);
          if (deleted_.size() >= kMaxTombstones) deleted_.erase(deleted_.begin());
          deleted_.insert(s.name);
        } else if (it == published_.end() ||
                   !Older(s.resource_version, it->second.resource_version)) {
          published_[s.name] = std::move(s);
        }
        dirty_ = true;
        changed_.notify_all();
        return true;
      });
  if (!code.ok()) {
    Problem(std::string(code.status().message()));
    return false;
  }
  if (*code != 200) return false;
  return !relist;
}

void SlicePublisher::WatchLoop() {
  milliseconds backoff = kFirstBackoff;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    watch_client_->ResetCancel();
    bool relist = false;
    {
      std::lock_guard lock(mu_);
      relist = relist_;
    }
    if (relist && !List()) {
      if (!Pause(backoff)) return;
      backoff = std::min(backoff * 2, kMaxBackoff);
      continue;
    }
    if (WatchOnce()) {
      backoff = kFirstBackoff;  // the server ended a healthy watch: resume at once
      continue;
    }
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      // A cancel from the writer (409) asks for the relist itself; anything else relists
      // after a pause, since the events in between may be gone.
      relist_ = true;
    }
    if (!Pause(backoff)) return;
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

bool SlicePublisher::Write(const SliceWrite& w, milliseconds* retry_after) {
  absl::StatusOr<kube::HttpResponse> r;
  switch (w.kind) {
    case SliceWrite::Kind::kCreate:
      r = write_client_->Call("POST", std::string(kSlices), w.object.dump());
      break;
    case SliceWrite::Kind::kUpdate:
      r = write_client_->Call("PUT", Cat(kSlices, "/", w.name), w.object.dump());
      break;
    case SliceWrite::Kind::kDelete: {
      const nlohmann::json options = {{"kind", "DeleteOptions"},
                                      {"apiVersion", "v1"},
                                      {"preconditions", {{"resourceVersion", w.resource_version}}}};
      r = write_client_->Call("DELETE", Cat(kSlices, "/", w.name), options.dump());
      break;
    }
  }
  std::unique_lock lock(mu_);
  if (r.ok() && (r->code == 200 || r->code == 201)) {
    ++stats_.writes;
    if (w.kind == SliceWrite::Kind::kDelete) {
      published_.erase(w.name);
    } else {
      auto object = nlohmann::json::parse(r->body, nullptr, false);
      if (object.is_object()) {
        PublishedSlice s = FromObject(object);
        if (deleted_.count(s.name) != 0) return true;  // the watch saw it go meanwhile
        auto it = published_.find(s.name);
        if (it == published_.end() || !Older(s.resource_version, it->second.resource_version)) {
          published_[s.name] = std::move(s);
        }
      }
    }
    return true;
  }
  ++stats_.failures;
  if (r.ok() && r->retry_after_seconds > 0)
    *retry_after = std::chrono::seconds(r->retry_after_seconds);
  if (r.ok() && r->code == 404 && w.kind != SliceWrite::Kind::kCreate) {
    published_.erase(w.name);  // already gone (a wipe raced us): reconcile again
    return true;
  }
  if (r.ok() && r->code == 409) {
    ++stats_.conflicts;  // our copy is stale: the watcher relists, then we reconcile
    relist_ = true;
    lock.unlock();
    watch_client_->Cancel();
    return false;
  }
  const std::string what = w.kind == SliceWrite::Kind::kCreate   ? "creating"
                           : w.kind == SliceWrite::Kind::kUpdate ? "updating"
                                                                 : "deleting";
  lock.unlock();
  if (!r.ok()) {
    Problem(Cat(what, " a ResourceSlice: ", std::string(r.status().message())));
  } else {
    Problem(Cat(what, " ResourceSlice ", w.name.empty() ? "(new)" : w.name, ": HTTP ", r->code,
                ": ", StatusMessage(r->body),
                r->code == 403 ? " (grant the DaemonSet's service account create/update/delete "
                                 "on resourceslices: images/overlays/dra)"
                               : ""));
  }
  return false;
}

void SlicePublisher::WriteLoop() {
  milliseconds backoff = kFirstBackoff;
  while (true) {
    std::vector<SliceWrite> writes;
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [this] {
        return stopping_ || (dirty_ && have_wish_ && stats_.synced && !relist_);
      });
      if (stopping_) return;
      dirty_ = false;
      writes = Reconcile(published_, wanted_);
      stats_.in_sync = writes.empty();
    }
    bool ok = true;
    milliseconds retry_after{0};
    for (const auto& w : writes) {
      if (!(ok = Write(w, &retry_after))) break;
    }
    {
      std::lock_guard lock(mu_);
      if (!writes.empty()) dirty_ = true;  // check the result: nothing more to write?
    }
    if (ok) {
      backoff = kFirstBackoff;
      continue;
    }
    if (!Pause(std::max(backoff, retry_after))) return;
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

}  // namespace rdmadp::dra
