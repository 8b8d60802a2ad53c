// A rate limit: `burst` events at once, then one every `interval` (the generic cell rate
// algorithm, whose whole state is one time point). Take() counts one event and answers when
// it may happen: `now`, or later once the burst is spent; a caller that waits until then
// before taking again never waits more than `interval`.
//
// The one implementation behind the registration machine's re-registrations after lost
// streams (pkg/lifecycle, 3 at once then 1/s) and the DRA publisher's write budget
// (pkg/dra/slices, 32 at once then 1/s).
//
// Pure (the caller passes the time); not thread-safe: its owner's thread or lock covers it.
#pragma once

#include <algorithm>
#include <chrono>

namespace rdmadp::rate {

class CellRateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  CellRateLimiter(int burst, Clock::duration interval) : burst_(burst), interval_(interval) {}

  // `reserve`: events of the burst this caller leaves to others (a lower priority): it
  // waits while fewer than reserve + 1 are left, so callers taking with no reserve still
  // find `reserve` at once (one less while this caller's event waits: it is counted when
  // taken); every event counts against the one rate either way.
  Clock::time_point Take(Clock::time_point now, int reserve = 0) {
    next_ = std::max(next_, now);  // the theoretical arrival time of this event
    const int tolerance = std::max(0, burst_ - 1 - reserve);
    const Clock::time_point at = std::max(now, next_ - tolerance * interval_);
    next_ = std::max(next_, at) + interval_;
    return at;
  }

 private:
  const int burst_;
  const Clock::duration interval_;
  Clock::time_point next_ = Clock::time_point::min();
};

}  // namespace rdmadp::rate
