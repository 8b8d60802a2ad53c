// A CellRateLimiter (cell_rate_limiter.h) that several threads draw from: the DRA driver's
// one write budget, which its slice publisher and its claim status writer share, so a node
// never sends the API server more than kWriteBurst writes at once and one a second after
// that, whatever mix of objects it writes. The status writer takes with a reserve: a burst of
// claims' status never holds up a slice change (a port going down).
//
// Threads: every call from any thread.
#pragma once

#include <mutex>

#include "pkg/rate/cell_rate_limiter.h"

namespace rdmadp::rate {

class SharedBudget {
 public:
  SharedBudget(int burst, CellRateLimiter::Clock::duration interval) : limiter_(burst, interval) {}
  // Counts one write; answers when it may be sent (`now`, or later once the burst is spent).
  // `reserve`: CellRateLimiter::Take's (a lower priority's writes leave that much of the
  // burst to the others).
  CellRateLimiter::Clock::time_point Take(CellRateLimiter::Clock::time_point now, int reserve = 0) {
    std::lock_guard<std::mutex> lock(mu_);
    return limiter_.Take(now, reserve);
  }

 private:
  std::mutex mu_;
  CellRateLimiter limiter_;
};

}  // namespace rdmadp::rate
