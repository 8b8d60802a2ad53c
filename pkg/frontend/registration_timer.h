// The one timer a registration state machine arms (lifecycle::RegistrationExecutor's
// ArmTimer and DisarmTimer), for both front ends: an alarm on the loop that hands back the
// token it was armed with, so the machine tells its current timer from a stale one.
//
// Threads: loop thread only (construction, Arm, Disarm, and the firing): each aborts on
// another thread (loop::AssertOnLoop).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "pkg/loop/scheduler.h"

namespace rdmadp::frontend {

class RegistrationTimer {
 public:
  // `fire(token)` hands the machine Timer(token).
  RegistrationTimer(loop::Scheduler& loop, std::function<void(uint64_t token)> fire)
      : loop_(loop), alarm_(loop.NewAlarm([this, fire = std::move(fire)] { fire(token_); })) {
    loop::AssertOnLoop(loop_);
  }
  RegistrationTimer(const RegistrationTimer&) = delete;
  RegistrationTimer& operator=(const RegistrationTimer&) = delete;

  // Replaces an armed timer. "At once" still goes through the loop: no recursion, and
  // other events interleave.
  void Arm(uint64_t token, std::chrono::milliseconds delay) {
    loop::AssertOnLoop(loop_);
    token_ = token;
    alarm_->ArmOnce(std::max(delay, std::chrono::milliseconds(1)));
  }
  void Disarm() {
    loop::AssertOnLoop(loop_);
    alarm_->Disarm();
    token_ = 0;
  }

 private:
  loop::Scheduler& loop_;
  uint64_t token_ = 0;
  std::unique_ptr<loop::Alarm> alarm_;  // after token_: destroyed first
};

}  // namespace rdmadp::frontend
