// A kube::ThreadClock that runs `rate` times as fast as std::chrono::steady_clock, the rate
// changeable at any time: fleet_bench's steady wave runs ten minutes of the publishers' time
// in one (with the fake API server's timers scaled alike, POST /time-scale).
//
// A rate change wakes every waiter to recompute its real deadline. A waiter that read the
// old rate just before the change and had not yet blocked misses that wake-up; it wakes
// within kRecheck of real time anyway and recomputes then.
//
// Threads: every call from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include "pkg/kube/thread_clock.h"

namespace rdmadp::testing {

class ScaledClock final : public kube::ThreadClock {
 public:
  static constexpr std::chrono::seconds kRecheck{10};  // of real time

  // Rate 1, and Now() == steady_clock::now() until the first change. `recheck`: the longest
  // real wait before a waiter recomputes its deadline (a test passes hours: only the
  // rate change's wake-up can end its wait then).
  explicit ScaledClock(std::chrono::seconds recheck = kRecheck);
  // From now on, `rate` (> 0) seconds of this clock per real second.
  void SetRate(double rate);
  double rate() const;

  time_point Now() const override;
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 time_point deadline) const override;
  void Wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock) const override {
    cv.wait(lock);
  }
  void NotifyAll(std::condition_variable& cv) const override { cv.notify_all(); }

 private:
  time_point NowLocked(std::chrono::steady_clock::time_point real) const;  // requires mu_

  const std::chrono::seconds recheck_;
  mutable std::mutex mu_;
  std::chrono::steady_clock::time_point real_at_;  // the last change, in real time ...
  time_point scaled_at_;                           // ... and on this clock
  double rate_ = 1;
  mutable std::multiset<std::condition_variable*> waiters_;  // two threads may share one
};

}  // namespace rdmadp::testing
