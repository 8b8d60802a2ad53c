// RDMAUnused Events (docs/observability.md, "Per-container RDMA use"): one Kubernetes Event
// on the pod when a container of it turns unused, written through events.k8s.io/v1 as
// kube-apiserver validates it (pkg/apis/core/validation/events.go ValidateEventCreate: an
// eventTime, reportingController, reportingInstance <= 128 bytes, action and reason <= 128,
// type Warning, regarding in the Event's namespace, note <= 1 kB).
//
// Deduplicated by name: an Event's name comes from the pod's UID, the container's name and
// its container ID, so the same container instance is told once, whatever restarts of ours
// come between (the server answers a second create 409 AlreadyExists); a restarted container
// is a new instance and may be told again.
//
// EventSender writes them on the API server's terms: at most kEventBurst at once and one
// per kEventRefill after that (a node never floods the API server's Event store), nothing at
// all while a Retry-After the server gave runs, and no retry of its own: an Event the budget
// or a Retry-After holds back waits for the caller's next turn; one the server refuses is
// dropped and said.
//
// Threads: the builders are pure; an EventSender is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "pkg/kube/api_transport.h"

namespace rdmadp::observe {

struct UnusedEvent {
  std::string pod_namespace;
  std::string pod;
  std::string pod_uid;
  std::string container;
  std::string container_id;
  std::string note;  // cut to kMaxEventNoteBytes
};

inline constexpr std::string_view kUnusedEventReason = "RDMAUnused";
inline constexpr std::string_view kEventReportingController = "k8s-rdma-shared-dp";
inline constexpr size_t kMaxEventNoteBytes = 1024;  // events.go NoteLengthLimit
inline constexpr size_t kMaxEventFieldBytes = 128;  // reportingInstance, action, reason
inline constexpr int kEventBurst = 5;
inline constexpr std::chrono::seconds kEventRefill{12};
// One write's wait at most: the daemon's shutdown waits for it.
inline constexpr std::chrono::milliseconds kEventCallTimeout{5000};
// Events waiting for their turn at most; more are dropped and counted.
inline constexpr size_t kMaxPendingEvents = 64;

// "<pod>.rdma-unused.<16 hex digits>": the pod's name (cut so that the whole stays a DNS
// subdomain) and a hash of the pod UID, container name and container ID.
std::string UnusedEventName(const UnusedEvent& e);

// The events.k8s.io/v1 Event's JSON, reported by `node` (reportingInstance) at `now`.
std::string UnusedEventBody(const UnusedEvent& e, std::string_view node,
                            std::chrono::system_clock::time_point now);

// "2026-12-07T09:40:00.123456Z": metav1.MicroTime's form.
std::string MicroTime(std::chrono::system_clock::time_point t);

enum class EventResult {
  kCreated,  // 201
  kExists,   // 409: told before (by us, before a restart)
  kHeld,     // not sent: the budget or a Retry-After holds it; try at the next turn
  kFailed,   // refused (403 without the RBAC, 422) or not delivered: dropped
};

class EventSender {
 public:
  using Clock = std::chrono::steady_clock;
  EventSender(std::unique_ptr<kube::ApiTransport> api, std::function<Clock::time_point()> now);

  // Writes `e` unless held. `error` gets one line for a failure ("" otherwise).
  EventResult Send(const UnusedEvent& e, std::string_view node,
                   std::chrono::system_clock::time_point wall, std::string* error);

 private:
  std::unique_ptr<kube::ApiTransport> api_;
  std::function<Clock::time_point()> now_;
  double tokens_ = kEventBurst;
  Clock::time_point refilled_;
  Clock::time_point blocked_until_;  // a Retry-After the server gave
};

}  // namespace rdmadp::observe
