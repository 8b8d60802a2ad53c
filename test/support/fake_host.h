// A frontend::Host for in-process tests of a front end: the ManualScheduler's fake time
// instead of the event loop, a kubelet root in a temporary directory, and every problem a
// front end reports kept as state (class and message) for the test to assert on.
//
// Threads: the loop thread's (the thread that made it), like the Manager it stands in for.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pkg/frontend/front_end.h"
#include "test/support/manual_scheduler.h"

namespace rdmadp::testing {

class FakeHost final : public frontend::Host {
 public:
  struct Problem {
    std::string error_class;
    std::string message;
    bool operator==(const Problem&) const = default;
  };

  explicit FakeHost(std::string kubelet_root);

  ManualScheduler& scheduler() { return scheduler_; }
  // What the front end reported, in order (ReportOnce: the first time only).
  const std::vector<Problem>& problems() const { return problems_; }
  int watch_requests() const { return watch_requests_; }
  void set_stopping() { stopping_ = true; }
  // Kubelet-directory events the kernel has queued and the loop has not read yet: `sink`
  // (the front end under test) gets them at its next CatchUpKubeletWatch(), in order.
  void QueueKubeletEvent(frontend::FrontEnd* sink, frontend::KubeletEvent event);
  int catch_ups() const { return catch_ups_; }

  loop::Scheduler& Loop() override { return scheduler_; }
  lifecycle::TokenSource& Tokens() override { return tokens_; }
  const std::string& InstanceId() const override { return instance_id_; }
  const frontend::KubeletDirs& Dirs() const override { return dirs_; }
  void ReportProblem(log::Level level, std::string_view error_class, const std::string& message,
                     const log::Fields& fields) override;
  void ReportOnce(log::Level level, std::string_view error_class, const std::string& message,
                  const log::Fields& fields) override;
  loop::HeapTrimmer& Trimmer() override { return trimmer_; }
  bool WatchKubeletDirs() override;
  void CatchUpKubeletWatch() override;
  bool Stopping() const override { return stopping_; }

 private:
  ManualScheduler scheduler_;
  lifecycle::TokenSource tokens_;
  const std::string instance_id_ = "0123abcd";
  frontend::KubeletDirs dirs_;
  loop::HeapTrimmer trimmer_;
  std::vector<Problem> problems_;
  std::set<std::string> said_once_;
  int watch_requests_ = 0;
  std::vector<std::pair<frontend::FrontEnd*, frontend::KubeletEvent>> queued_;
  int catch_ups_ = 0;
  bool stopping_ = false;
};

}  // namespace rdmadp::testing
