#include "test/support/scaled_clock.h"

#include <algorithm>
#include <cstdlib>

namespace rdmadp::testing {

ScaledClock::ScaledClock(std::chrono::seconds recheck)
    : recheck_(recheck), real_at_(std::chrono::steady_clock::now()), scaled_at_(real_at_) {}

ScaledClock::time_point ScaledClock::NowLocked(std::chrono::steady_clock::time_point real) const {
  const std::chrono::duration<double> since = real - real_at_;
  return scaled_at_ +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(since * rate_);
}

void ScaledClock::SetRate(double rate) {
  if (!(rate > 0)) std::abort();  // a programming error of the bench: time never stops
  std::lock_guard lock(mu_);
  const auto real = std::chrono::steady_clock::now();
  scaled_at_ = NowLocked(real);
  real_at_ = real;
  rate_ = rate;
  for (auto* cv : waiters_) cv->notify_all();
}

double ScaledClock::rate() const {
  std::lock_guard lock(mu_);
  return rate_;
}

ScaledClock::time_point ScaledClock::Now() const {
  std::lock_guard lock(mu_);
  return NowLocked(std::chrono::steady_clock::now());
}

void ScaledClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                            time_point deadline) const {
  std::chrono::steady_clock::time_point real_deadline;
  std::multiset<std::condition_variable*>::iterator me;
  {
    std::lock_guard clock_lock(mu_);
    const auto real_now = std::chrono::steady_clock::now();
    me = waiters_.insert(&cv);
    // In double seconds from each time's epoch: no deadline, however far, overflows.
    using Seconds = std::chrono::duration<double>;
    const Seconds left =
        Seconds(deadline.time_since_epoch()) - Seconds(NowLocked(real_now).time_since_epoch());
    const Seconds real_left = std::clamp(left / rate_, Seconds(0), Seconds(recheck_));
    real_deadline =
        real_now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(real_left);
  }
  cv.wait_until(lock, real_deadline);
  std::lock_guard clock_lock(mu_);
  waiters_.erase(me);
}

}  // namespace rdmadp::testing
