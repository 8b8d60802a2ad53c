#include "pkg/server/timer_horizon.h"

#include <algorithm>

namespace rdmadp::server {

bool TimerHorizon::Arm(const void* timer, int64_t deadline) {
  Forget(timer);
  deadline_of_.emplace(timer, deadline);
  by_deadline_.emplace(deadline, timer);
  if (deadline >= wake_at_) return false;
  // The thread will be woken and look again at once; until then, later deadlines need no
  // further wake-up.
  wake_at_ = deadline;
  return true;
}

void TimerHorizon::Cancel(const void* timer) { Forget(timer); }

int64_t TimerHorizon::Sleep(int64_t now, int64_t grpc_next) {
  // A deadline at or before `now` that gRPC did not fire: its check looked at a view of its
  // shards older than the timer (another of its threads was kicked for it). gRPC's own next
  // check covers it; this round sleeps no longer than that.
  const bool unfired = ForgetDue(now);
  const int64_t earliest = by_deadline_.empty() ? kNever : by_deadline_.begin()->first;
  wake_at_ = unfired ? std::min(earliest, grpc_next) : earliest;
  return wake_at_;
}

void TimerHorizon::Fired(int64_t now) {
  ForgetDue(now);
  wake_at_ = now;
}

bool TimerHorizon::ForgetDue(int64_t now) {
  bool any = false;
  while (!by_deadline_.empty() && by_deadline_.begin()->first <= now) {
    deadline_of_.erase(by_deadline_.begin()->second);
    by_deadline_.erase(by_deadline_.begin());
    any = true;
  }
  return any;
}

void TimerHorizon::Reset() {
  by_deadline_.clear();
  deadline_of_.clear();
  wake_at_ = kNever;
}

void TimerHorizon::Forget(const void* timer) {
  const auto it = deadline_of_.find(timer);
  if (it == deadline_of_.end()) return;
  by_deadline_.erase({it->second, timer});
  deadline_of_.erase(it);
}

}  // namespace rdmadp::server
