// When gRPC's timer thread next has something to do: the earliest pending timer.
//
// Why: gRPC 1.51's I/O manager keeps its timers in shards whose heaps it refills in windows
// of at most 1 s, so its timer thread wakes once a second whether or not a timer is near (an
// idle plugin's every wake-up; more when the shards' windows come apart). The timers an idle
// plugin holds are hours away (HTTP/2 keepalives). QuietTimers (quiet_timers.h) keeps gRPC's
// own timer list and only tells its thread to sleep until the earliest real deadline; this
// class is the bookkeeping behind that: pending deadlines, and the moment the checking thread
// will look again, so that arming an earlier timer wakes it and a later one does not.
//
// Contract: times are gRPC's milliseconds after process start; timers are opaque keys.
// Arm() re-arms a key that is still pending. Timers that fire are not reported one by one:
// after a check at `now` that fired timers, Fired(now) forgets every deadline at or before
// `now` (gRPC fires all that are due). The value Sleep() returns is where the checking thread
// must wake; Arm() returns true exactly when a deadline comes before that moment (the caller
// must then wake the thread at once).
//
// Threads: none of its own; not thread-safe (the adapter holds a mutex around every call).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <unordered_map>
#include <utility>

namespace rdmadp::server {

class TimerHorizon {
 public:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

  // A timer is armed for `deadline`. True when the checking thread must be woken now.
  bool Arm(const void* timer, int64_t deadline);
  // A timer is cancelled (no-op if it is not pending).
  void Cancel(const void* timer);
  // The checking thread found nothing due at `now` and sleeps: returns until when, the
  // earliest pending deadline; or, if a deadline at or before `now` is still here (gRPC's
  // check did not fire it), no later than `grpc_next`, when gRPC's own list would wake it.
  int64_t Sleep(int64_t now, int64_t grpc_next);
  // The checking thread fired every timer due at `now` and checks again before sleeping.
  void Fired(int64_t now);
  // gRPC's timer list was (re)initialised: nothing is pending, nobody sleeps yet.
  void Reset();

  size_t pending() const { return deadline_of_.size(); }
  int64_t wake_at() const { return wake_at_; }

 private:
  void Forget(const void* timer);
  bool ForgetDue(int64_t now);  // true if there was any

  std::set<std::pair<int64_t, const void*>> by_deadline_;
  std::unordered_map<const void*, int64_t> deadline_of_;
  // The earliest moment the checking thread will look at the timers again. Until a thread
  // has reported, assume none will: the first timer armed wakes it.
  int64_t wake_at_ = kNever;
};

}  // namespace rdmadp::server
