#include "pkg/observe/pod_events.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "pkg/text/cat.h"
#include "pkg/text/hash.h"

namespace rdmadp::observe {
namespace {

// A whole UTF-8 prefix of `s` of at most `max` bytes.
std::string Cut(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n));
}

}  // namespace

std::string UnusedEventName(const UnusedEvent& e) {
  uint64_t hash = Fnv1a(e.pod_uid);
  hash = Fnv1a("/", hash);
  hash = Fnv1a(e.container, hash);
  hash = Fnv1a("/", hash);
  hash = Fnv1a(e.container_id, hash);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  // ".rdma-unused." and 16 digits: 29 bytes of a DNS subdomain's 253. A pod's name is one;
  // cut, it must still end in a letter or digit.
  std::string pod = e.pod.substr(0, 253 - 29);
  while (!pod.empty() && (pod.back() == '-' || pod.back() == '.')) pod.pop_back();
  return Cat(pod, ".rdma-unused.", hex);
}

std::string MicroTime(std::chrono::system_clock::time_point t) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char buf[40];
  const size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof(buf) - n, ".%06lldZ", static_cast<long long>(micros % 1000000));
  return buf;
}

std::string UnusedEventBody(const UnusedEvent& e, std::string_view node,
                            std::chrono::system_clock::time_point now) {
  const nlohmann::json event = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", UnusedEventName(e)}, {"namespace", e.pod_namespace}}},
      {"eventTime", MicroTime(now)},
      {"reportingController", kEventReportingController},
      {"reportingInstance", Cut(node, kMaxEventFieldBytes)},
      {"action", "Observe"},
      {"reason", kUnusedEventReason},
      {"type", "Warning"},
      {"regarding",
       {{"apiVersion", "v1"},
        {"kind", "Pod"},
        {"namespace", e.pod_namespace},
        {"name", e.pod},
        {"uid", e.pod_uid}}},
      {"note", Cut(e.note, kMaxEventNoteBytes)}};
  return event.dump();
}

EventSender::EventSender(std::unique_ptr<kube::ApiTransport> api,
                         std::function<Clock::time_point()> now)
    : api_(std::move(api)), now_(std::move(now)), refilled_(now_()), blocked_until_(refilled_) {}

EventResult EventSender::Send(const UnusedEvent& e, std::string_view node,
                              std::chrono::system_clock::time_point wall, std::string* error) {
  if (error != nullptr) error->clear();
  const Clock::time_point now = now_();
  if (now < blocked_until_) return EventResult::kHeld;
  tokens_ =
      std::min<double>(kEventBurst, tokens_ + std::chrono::duration<double>(now - refilled_) /
                                                  std::chrono::duration<double>(kEventRefill));
  refilled_ = now;
  if (tokens_ < 1) return EventResult::kHeld;
  tokens_ -= 1;
  api_->ResetCancel();
  auto answer =
      api_->Call("POST", Cat("/apis/events.k8s.io/v1/namespaces/", e.pod_namespace, "/events"),
                 UnusedEventBody(e, node, wall), kEventCallTimeout);
  if (!answer.ok()) {
    if (error != nullptr) *error = std::string(answer.status().message());
    return EventResult::kFailed;
  }
  if (answer->code == 201 || answer->code == 200) return EventResult::kCreated;
  if (answer->code == 409) return EventResult::kExists;
  if (answer->code == 429 || answer->code == 503) {
    // The server's wait, never shortened; 10 s when it names none.
    const int wait = answer->retry_after_seconds > 0 ? answer->retry_after_seconds : 10;
    blocked_until_ = now + std::chrono::seconds(wait);
    tokens_ += 1;  // not spent: nothing was written
    return EventResult::kHeld;
  }
  if (error != nullptr) {
    *error = Cat("the API server answered ", answer->code, ": ", Cut(answer->body, 300));
  }
  return EventResult::kFailed;
}

}  // namespace rdmadp::observe
