// The time of a component that runs on threads of its own and waits on condition variables
// (the slice publisher): what time it is, a wait until a time on the same clock, and every
// other wait and wake-up of those threads. A component that takes a ThreadClock waits and
// notifies only through it (never cv.wait or cv.notify_all directly), so that a clock a test
// holds sees every thread that is blocked and every wake-up:
//  - SteadyThreadClock() is std::chrono::steady_clock and plain condition variables;
//  - test/support/scaled_clock.h runs faster than real time, so that a fleet bench measures
//    ten minutes of steady state in one;
//  - test/support/manual_clock.h is time a test moves: Now() stands still until the test
//    advances it, and the test waits until every thread of the component is blocked on the
//    clock before it does, so request times are exact and runs are repeatable.
//
// Threads: every call from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"

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
  // Waits on `cv` (its mutex held in `lock`) until NotifyAll(cv), or a spurious wake-up:
  // callers loop over their own condition.
  virtual void Wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock) const = 0;
  // Wakes every waiter on `cv` (WaitUntil or Wait). The caller changed the state they wait
  // for under their mutex first; it may hold that mutex here or not.
  virtual void NotifyAll(std::condition_variable& cv) const = 0;
};

// std::chrono::steady_clock, shared by every publisher that is given no other.
const ThreadClock& SteadyThreadClock();

// Waits until `done()` or `deadline` on `clock`; returns done().
// (Not analysed for thread safety: `done` may require the caller's mutex, which the template
// cannot name; the caller's lambda says it requires it: pkg/sync/mutex.h.)
template <typename Done>
bool WaitUntil(const ThreadClock& clock, std::condition_variable& cv,
               std::unique_lock<std::mutex>& lock, ThreadClock::time_point deadline,
               Done done) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  while (!done()) {
    if (clock.Now() >= deadline) return false;
    clock.WaitUntil(cv, lock, deadline);
  }
  return true;
}

// Waits until `done()` on `clock` (no deadline).
template <typename Done>
void Wait(const ThreadClock& clock, std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
          Done done) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  while (!done()) clock.Wait(cv, lock);
}

}  // namespace rdmadp::kube
