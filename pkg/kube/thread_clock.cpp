#include "pkg/kube/thread_clock.h"

namespace rdmadp::kube {
namespace {

class SteadyClock final : public ThreadClock {
 public:
  time_point Now() const override { return std::chrono::steady_clock::now(); }
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 time_point deadline) const override {
    cv.wait_until(lock, deadline);
  }
  void Wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock) const override {
    cv.wait(lock);
  }
  void NotifyAll(std::condition_variable& cv) const override { cv.notify_all(); }
};

}  // namespace

const ThreadClock& SteadyThreadClock() {
  static const SteadyClock kClock;
  return kClock;
}

}  // namespace rdmadp::kube
