#include "test/support/manual_clock.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rdmadp::testing {

ManualClock::ManualClock(int participants)
    : start_(std::chrono::hours(1000)), now_(start_), participants_(participants) {}

ManualClock::~ManualClock() = default;

void ManualClock::AddParticipants(int n) {
  std::lock_guard lock(mu_);
  participants_ += n;
  quiet_.notify_all();
}

std::chrono::milliseconds ManualClock::Elapsed() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Now() - start_);
}

ManualClock::time_point ManualClock::Now() const {
  std::lock_guard lock(mu_);
  return now_;
}

void ManualClock::Wake(Waiter& w) const {
  if (w.woken) return;
  w.woken = true;
  --blocked_;
  w.wake.notify_all();
}

void ManualClock::Block(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                        time_point deadline) const {
  std::unique_lock clock_lock(mu_);
  if (deadline <= now_) return;  // as wait_until with a deadline already passed
  auto me = waiters_.emplace(waiters_.end());
  me->on = &cv;
  me->deadline = deadline;
  ++blocked_;
  quiet_.notify_all();
  // Registered under mu_ before the caller's lock goes: a NotifyAll after the caller's state
  // change finds this waiter (the caller checked its state under its own lock).
  lock.unlock();
  me->wake.wait(clock_lock, [&] { return me->woken; });
  waiters_.erase(me);
  clock_lock.unlock();
  lock.lock();
}

void ManualClock::WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                            time_point deadline) const {
  Block(cv, lock, deadline);
}

void ManualClock::Wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock) const {
  Block(cv, lock, time_point::max());
}

void ManualClock::NotifyAll(std::condition_variable& cv) const {
  std::lock_guard lock(mu_);
  for (auto& w : waiters_) {
    if (w.on == &cv) Wake(w);
  }
}

void ManualClock::SettleLocked(std::unique_lock<std::mutex>& lock) const {
  if (!quiet_.wait_for(lock, kStuck, [&] { return blocked_ >= participants_; })) {
    std::fprintf(stderr,
                 "ManualClock: %d of %d threads blocked on the clock after %lld s of real "
                 "time: a thread waits elsewhere (real I/O, a plain condition variable)\n",
                 blocked_, participants_, static_cast<long long>(kStuck.count()));
    std::abort();
  }
}

void ManualClock::Settle() {
  std::unique_lock lock(mu_);
  SettleLocked(lock);
}

void ManualClock::AdvanceTo(time_point until) {
  std::unique_lock lock(mu_);
  while (true) {
    SettleLocked(lock);
    time_point next = time_point::max();
    for (const auto& w : waiters_) {
      if (!w.woken) next = std::min(next, w.deadline);
    }
    if (next > until) break;
    now_ = std::max(now_, next);
    for (auto& w : waiters_) {
      if (!w.woken && w.deadline <= now_) Wake(w);
    }
  }
  now_ = std::max(now_, until);
}

}  // namespace rdmadp::testing
