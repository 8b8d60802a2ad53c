// The daemon's view of per-container RDMA use (docs/observability.md, "Per-container RDMA
// use"), on when --rdma-usage-interval is set: every interval one sample is read off the node
// (node_use.h) on the observer's own thread, and back on the loop each container's verdict
// is kept (usage::VerdictBook), a line is logged when a verdict changes (a warning when it
// turns unused; never one per sample), and the metrics view carries the latest sample.
// Observe only: it changes no allocation, health state or pod.
//
// With `events_api`, a container that turns unused also gets one Kubernetes Event on its
// pod (pod_events.h: reason RDMAUnused, deduplicated by name), written on the observer's
// thread within the API server's budget; held ones wait for the next turn (a sample, or
// another Event), at most kMaxPendingEvents of them.
//
// It sits beside the front ends behind frontend::FrontEnd: Apply hands it the config and
// every scan (which resources and HCAs are ours), Collect adds its series, Stop ends its
// thread. A sample still running when the next is due is not doubled: that tick is skipped.
//
// Threads: every FrontEnd call on the loop thread (asserted); the reads on the observer's
// thread, which hands its result back with Loop().Post().
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/frontend/front_end.h"
#include "pkg/loop/scheduler.h"
#include "pkg/observe/node_use.h"
#include "pkg/observe/pod_events.h"
#include "pkg/sync/mutex.h"
#include "pkg/usage/verdict.h"

namespace rdmadp::observe {

struct ObserverOptions {
  std::chrono::milliseconds interval{60000};
  std::chrono::seconds grace{600};
  NodeUseSources sources;
  std::string node_name;   // the DRA pools' names; the Events' reportingInstance
  std::string dra_driver;  // our DRA devices in the pod-resources answer
  // Where RDMAUnused Events go, made on the observer's thread at its first Event; empty: no
  // Events.
  std::function<absl::StatusOr<std::unique_ptr<kube::ApiTransport>>()> events_api;
  // The clock the Events' budget runs on (steady_clock::now by default; tests hold one).
  std::function<std::chrono::steady_clock::time_point()> events_clock;
};

// One sample: ReadNodeUse by default; a test may read its own. Runs on the observer's thread.
using ReadUseFn =
    std::function<NodeUse(const OurDevices& ours, std::chrono::system_clock::time_point now)>;

std::string_view EventResultName(EventResult r);  // "created", "exists", "held", "failed"

class RdmaUseObserver final : public frontend::FrontEnd {
 public:
  RdmaUseObserver(frontend::Host& host, ObserverOptions options, ReadUseFn read = {});
  ~RdmaUseObserver() override;  // Stop()

  void Apply(const config::Config& config, const sysfs::NodeInventory& inventory,
             std::string_view reason) override;
  void OnKubeletEvent(const frontend::KubeletEvent&) override {}
  std::vector<std::string> Problems(const config::Config&,
                                    const std::vector<size_t>&) const override {
    return {};
  }
  void Collect(metrics::View& view) const override;
  void Stop() override;

  // The verdicts kept (loop thread), for tests.
  const usage::VerdictBook& verdicts() const { return book_; }

 private:
  void Tick();
  void Sampled(const NodeUse& use, const OurDevices& ours, double seconds, double unix_seconds);
  void Say(const usage::VerdictBook::Change& change, const usage::ContainerUse& use,
           const OurDevices& ours) const;
  void SayListState(const NodeUse& use);
  void SayNewProblems(const std::vector<std::string>& problems);
  void QueueEvent(const usage::ContainerUse& use, std::string note);
  void Work();
  // The observer's thread: writes what is queued, in order, until one is held.
  void SendEvents();
  void EventsSent(const std::map<EventResult, uint64_t>& results,
                  const std::vector<std::string>& errors);

  frontend::Host& host_;
  const ObserverOptions options_;
  const ReadUseFn read_;
  // Loop thread.
  std::unique_ptr<loop::Alarm> alarm_;
  std::shared_ptr<const OurDevices> ours_;
  bool sampling_ = false;  // a request is with the thread
  usage::VerdictBook book_;
  metrics::RdmaUseView view_;
  std::set<std::string> problems_said_;                         // the last sample's
  std::set<std::string> event_errors_said_;                     // at most kMaxPendingEvents
  bool list_failing_ = false;                                   // the last List failed (said once)
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // posted results check it
  // The observer's thread and what it is handed.
  sync::Mutex mu_;
  std::condition_variable wake_;
  std::shared_ptr<const OurDevices> request_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<UnusedEvent> events_ ABSL_GUARDED_BY(mu_);
  bool events_added_ ABSL_GUARDED_BY(mu_) = false;  // since the thread last looked
  std::unique_ptr<EventSender> sender_;             // the observer's thread only
  const std::string reporting_instance_;            // the Events' reportingInstance
  std::thread thread_;
};

}  // namespace rdmadp::observe
