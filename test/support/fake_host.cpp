#include "test/support/fake_host.h"

#include <chrono>

namespace rdmadp::testing {

FakeHost::FakeHost(std::string kubelet_root)
    : dirs_{std::move(kubelet_root)}, trimmer_(scheduler_, std::chrono::milliseconds(100)) {}

void FakeHost::ReportProblem(log::Level level, std::string_view error_class,
                             const std::string& message, const log::Fields& fields) {
  loop::AssertOnLoop(scheduler_);
  log::Write(level, message, fields);  // as the Manager does: the test's output shows it
  problems_.push_back({std::string(error_class), message});
}

void FakeHost::ReportOnce(log::Level level, std::string_view error_class,
                          const std::string& message, const log::Fields& fields) {
  if (said_once_.insert(message).second) ReportProblem(level, error_class, message, fields);
}

bool FakeHost::WatchKubeletDirs() {
  loop::AssertOnLoop(scheduler_);
  ++watch_requests_;
  return true;  // a test tells the front end of directory events itself (OnKubeletEvent)
}

void FakeHost::QueueKubeletEvent(frontend::FrontEnd* sink, frontend::KubeletEvent event) {
  queued_.emplace_back(sink, std::move(event));
}

void FakeHost::CatchUpKubeletWatch() {
  loop::AssertOnLoop(scheduler_);
  ++catch_ups_;
  auto queued = std::move(queued_);
  queued_.clear();
  for (auto& [sink, event] : queued) sink->OnKubeletEvent(event);
}

}  // namespace rdmadp::testing
