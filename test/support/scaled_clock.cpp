#include "test/support/scaled_clock.h"

#include <algorithm>

namespace rdmadp::testing {

ScaledClock::ScaledClock(std::chrono::seconds recheck)
    : recheck_(recheck), real_at_(std::chrono::steady_clock::now()), scaled_at_(real_at_) {}

ScaledClock::time_point ScaledClock::NowLocked(std::chrono::steady_clock::time_point real) const {
  const std::chrono::duration<double> since = real - real_at_;
  return scaled_at_ +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(since * rate_);
}

void ScaledClock::SetRate(double rate) {
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
  const auto real_now = std::chrono::steady_clock::now();
  auto real_deadline = real_now + recheck_;
  std::multiset<std::condition_variable*>::iterator me;
  {
    std::lock_guard clock_lock(mu_);
    me = waiters_.insert(&cv);
    // In double seconds: a deadline years away must not overflow on the way.
    const std::chrono::duration<double> left = deadline - NowLocked(real_now);
    const std::chrono::duration<double> real_left = left / rate_;
    if (real_left < std::chrono::duration<double>(recheck_)) {
      real_deadline = real_now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::max(real_left, std::chrono::duration<double>(0)));
    }
  }
  cv.wait_until(lock, real_deadline);
  std::lock_guard clock_lock(mu_);
  waiters_.erase(me);
}

}  // namespace rdmadp::testing
