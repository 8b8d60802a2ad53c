// test/support/scaled_clock.h: the faster clock fleet_bench's steady wave runs the
// publishers on. Its times are bracketed by real readings taken around them, never bounded
// by a wall-clock guess.
#include "test/support/scaled_clock.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace rdmadp::testing {
namespace {

using std::chrono::steady_clock;

TEST(ScaledClock, AtRateOneItIsTheSteadyClock) {
  ScaledClock clock;
  const auto before = steady_clock::now();
  const auto now = clock.Now();
  const auto after = steady_clock::now();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
}

TEST(ScaledClock, AfterARateChangeItRunsThatManyTimesAsFast) {
  ScaledClock clock;
  clock.SetRate(1000);
  EXPECT_EQ(clock.rate(), 1000);
  const auto real0 = steady_clock::now();
  const auto scaled0 = clock.Now();
  const auto real1 = steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // time to measure, not a sync
  const auto real2 = steady_clock::now();
  const auto scaled1 = clock.Now();
  const auto real3 = steady_clock::now();
  // scaled1 - scaled0 lies between 1000 x the shortest and the longest real span between them.
  EXPECT_GE(scaled1 - scaled0, (real2 - real1) * 1000);
  EXPECT_LE(scaled1 - scaled0, (real3 - real0) * 1000);
}

TEST(ScaledClock, ItNeverGoesBackAcrossARateChange) {
  ScaledClock clock;
  clock.SetRate(100);
  const auto fast = clock.Now();
  clock.SetRate(1);
  EXPECT_LE(fast, clock.Now());
}

TEST(ScaledClock, AWaitForADeadlinePassedReturnsAtOnce) {
  ScaledClock clock;
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock lock(mu);
  EXPECT_FALSE(kube::WaitUntil(clock, cv, lock, clock.Now() - std::chrono::seconds(1),
                               [] { return false; }));
}

TEST(ScaledClock, ARateChangeWakesAWaiterWhoseDeadlineItBringsNear) {
  // An hour of this clock at rate 1; at a million times, 3.6 ms. The waiter must recompute
  // its real deadline when the rate changes, not sleep the hour out (nor the recheck: a day).
  ScaledClock clock(std::chrono::hours(24));
  std::mutex mu;
  std::condition_variable cv;
  const auto deadline = clock.Now() + std::chrono::hours(1);
  std::promise<bool> waiting;
  auto result = std::async(std::launch::async, [&] {
    std::unique_lock lock(mu);
    waiting.set_value(true);
    const bool done = kube::WaitUntil(clock, cv, lock, deadline, [] { return false; });
    return !done && clock.Now() >= deadline;
  });
  waiting.get_future().wait();
  { std::lock_guard lock(mu); }  // taken once the waiter has blocked: the wake-up finds it
  clock.SetRate(1e6);
  // A failure guard, not a bound: the wait ends in milliseconds, or in a day without the
  // rate change's wake-up.
  ASSERT_EQ(result.wait_for(std::chrono::minutes(1)), std::future_status::ready);
  EXPECT_TRUE(result.get());
}

TEST(ScaledClock, AWaiterNotifiedReturnsToCheckItsCondition) {
  ScaledClock clock(std::chrono::hours(24));  // only the notification can end the wait
  std::mutex mu;
  std::condition_variable cv;
  bool flag = false;
  auto result = std::async(std::launch::async, [&] {
    std::unique_lock lock(mu);
    return kube::WaitUntil(clock, cv, lock, clock.Now() + std::chrono::hours(1),
                           [&] { return flag; });
  });
  {
    std::lock_guard lock(mu);
    flag = true;
  }
  cv.notify_all();
  ASSERT_EQ(result.wait_for(std::chrono::minutes(1)), std::future_status::ready);
  EXPECT_TRUE(result.get());
}

}  // namespace
}  // namespace rdmadp::testing
