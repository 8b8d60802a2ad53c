// The time of a component that runs on threads of its own and waits on condition variables
// (the slice publisher): what time it is, and a wait until a time on the same clock.
// SteadyThreadClock() is std::chrono::steady_clock; test/support/scaled_clock.h runs faster
// than real time, so that a fleet bench measures ten minutes of steady state in one (what
// the publisher does on its own timers, and what the fake API server does on its, both
// scaled alike).
//
// Threads: every call from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace rdmadp::kube {

class ThreadClock {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~ThreadClock() = default;
  virtual time_point Now() const = 0;
  // Waits on `cv` (its mutex held in `lock`) until it is notified, wakes spuriously, or
  // Now() reaches `deadline`, as condition_variable::wait_until does: callers loop over
  // their own condition.
  virtual void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         time_point deadline) const = 0;
};

// std::chrono::steady_clock, shared by every publisher that is given no other.
const ThreadClock& SteadyThreadClock();

// Waits until `done()` or `deadline` on `clock`; returns done().
template <typename Done>
bool WaitUntil(const ThreadClock& clock, std::condition_variable& cv,
               std::unique_lock<std::mutex>& lock, ThreadClock::time_point deadline, Done done) {
  while (!done()) {
    if (clock.Now() >= deadline) return false;
    clock.WaitUntil(cv, lock, deadline);
  }
  return true;
}

}  // namespace rdmadp::kube
