// ManualClock: time moves only when the test moves it, one deadline at a time, and the test
// waits until every participant is blocked on the clock before it does.
#include "test/support/manual_clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace rdmadp::testing {
namespace {

using namespace std::chrono_literals;

// A thread that sleeps on the clock for each of `steps` in turn, recording the time it woke.
class Sleeper {
 public:
  Sleeper(const ManualClock& clock, std::vector<std::chrono::milliseconds> steps)
      : thread_([this, &clock, steps] {
          std::unique_lock lock(mu_);
          for (auto step : steps) {
            const auto until = clock.Now() + step;
            kube::WaitUntil(clock, cv_, lock, until, [] { return false; });
            woke_.push_back(clock.Now() - clock.start());
          }
          // Still a participant: blocks until told to go (the destructor).
          kube::Wait(clock, cv_, lock, [this] { return stop_; });
        }),
        clock_(clock) {}
  ~Sleeper() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    clock_.NotifyAll(cv_);
    thread_.join();
  }
  std::vector<std::chrono::nanoseconds> woke() {
    std::lock_guard lock(mu_);
    return woke_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::chrono::nanoseconds> woke_;
  bool stop_ = false;
  std::thread thread_;
  const ManualClock& clock_;
};

TEST(ManualClock, TimeStandsStillUntilAdvanced) {
  ManualClock clock(0);
  const auto t = clock.Now();
  EXPECT_EQ(clock.Now(), t);
  clock.Advance(90s);
  EXPECT_EQ(clock.Now() - t, 90s);
  EXPECT_EQ(clock.Elapsed(), 90s);
}

TEST(ManualClock, WaitersWakeAtTheirDeadlinesInOrder) {
  ManualClock clock(2);
  Sleeper a(clock, {3s, 3s, 3s});
  Sleeper b(clock, {5s, 1s});
  clock.Advance(10s);
  EXPECT_THAT(a.woke(), ::testing::ElementsAre(3s, 6s, 9s));
  EXPECT_THAT(b.woke(), ::testing::ElementsAre(5s, 6s));
  EXPECT_EQ(clock.Elapsed(), 10s);
}

TEST(ManualClock, ADeadlineAfterTheTargetIsNotReached) {
  ManualClock clock(1);
  Sleeper a(clock, {5s});
  clock.Advance(5s - 1ns);
  EXPECT_THAT(a.woke(), ::testing::IsEmpty());
  clock.Advance(1ns);
  EXPECT_THAT(a.woke(), ::testing::ElementsAre(5s));
}

// A wake-up counts at once: Settle() after NotifyAll waits for the woken thread to block again
// (here: after it has done its work), never mistaking it for one still blocked.
TEST(ManualClock, SettleWaitsForAThreadANotifyWoke) {
  ManualClock clock(1);
  std::mutex mu;
  std::condition_variable cv;
  int asked = 0;
  int done = 0;
  std::thread worker([&] {
    std::unique_lock lock(mu);
    while (done < 3) {
      kube::Wait(clock, cv, lock, [&] { return asked > done; });
      ++done;
    }
  });
  for (int i = 1; i <= 3; ++i) {
    {
      std::lock_guard lock(mu);
      ++asked;
    }
    clock.NotifyAll(cv);
    if (i < 3) {
      clock.Settle();
      std::lock_guard lock(mu);
      EXPECT_EQ(done, i);
    }
  }
  worker.join();
  EXPECT_EQ(done, 3);
}

// NotifyAll wakes only the waiters of its condition variable; a wait with a deadline ends
// early on it, and only then.
TEST(ManualClock, NotifyWakesOnlyItsOwnWaiters) {
  ManualClock clock(2);
  Sleeper a(clock, {60s});
  Sleeper b(clock, {60s});
  clock.Settle();
  std::condition_variable other;
  clock.NotifyAll(other);
  clock.Advance(59s);
  EXPECT_THAT(a.woke(), ::testing::IsEmpty());
  EXPECT_THAT(b.woke(), ::testing::IsEmpty());
  clock.Advance(1s);
  EXPECT_THAT(a.woke(), ::testing::ElementsAre(60s));
}

}  // namespace
}  // namespace rdmadp::testing
