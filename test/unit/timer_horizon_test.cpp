// TimerHorizon: when gRPC's timer thread must be woken, and until when it may sleep.
#include "pkg/server/timer_horizon.h"

#include <gtest/gtest.h>

namespace rdmadp::server {
namespace {

// Distinct keys standing for grpc_timer objects.
const int kTimers[4] = {};
const void* const a = &kTimers[0];
const void* const b = &kTimers[1];
const void* const c = &kTimers[2];

TEST(TimerHorizon, TheFirstTimerWakesTheThreadNoOneHasReportedOn) {
  TimerHorizon h;
  EXPECT_TRUE(h.Arm(a, 7'200'000));
  EXPECT_EQ(h.wake_at(), 7'200'000);
}

TEST(TimerHorizon, SleepsUntilTheEarliestPendingDeadline) {
  TimerHorizon h;
  h.Arm(a, 5000);
  h.Arm(b, 3000);
  h.Arm(c, 9000);
  EXPECT_EQ(h.Sleep(1000, 2000), 3000);  // gRPC's own list would wake at 2000
  EXPECT_EQ(h.pending(), 3u);
}

TEST(TimerHorizon, WithNothingPendingSleepsForever) {
  TimerHorizon h;
  EXPECT_EQ(h.Sleep(1000, 2000), TimerHorizon::kNever);
}

TEST(TimerHorizon, OnlyAnEarlierDeadlineWakesASleepingThread) {
  TimerHorizon h;
  h.Arm(a, 5000);
  ASSERT_EQ(h.Sleep(1000, 2000), 5000);
  EXPECT_FALSE(h.Arm(b, 5000));  // the thread wakes then anyway
  EXPECT_FALSE(h.Arm(c, 6000));
  EXPECT_TRUE(h.Arm(c, 4999));
  // Woken for 4999, the thread looks again before then: 4000 needs a wake-up, 4999 does not.
  EXPECT_FALSE(h.Arm(b, 4999));
  EXPECT_TRUE(h.Arm(b, 4000));
}

TEST(TimerHorizon, ForgetsWhatFired) {
  TimerHorizon h;
  h.Arm(a, 2000);
  h.Arm(b, 3000);
  h.Arm(c, 4000);
  h.Fired(3000);  // gRPC fired a and b at 3000
  EXPECT_EQ(h.pending(), 1u);
  EXPECT_EQ(h.Sleep(3000, 3500), 4000);
}

// gRPC's check can look at a stale view of its shards (one of its threads was kicked, another
// checks): a due timer it did not fire keeps gRPC's own schedule for that round.
TEST(TimerHorizon, ADueTimerGrpcDidNotFireKeepsGrpcsOwnNextCheck) {
  TimerHorizon h;
  h.Arm(a, 2000);
  h.Arm(b, 5000);
  EXPECT_EQ(h.Sleep(2500, 3000), 3000);
  EXPECT_EQ(h.pending(), 1u);
  EXPECT_EQ(h.Sleep(3000, 4000), 5000);
}

TEST(TimerHorizon, ACancelledTimerIsNoLongerWaitedFor) {
  TimerHorizon h;
  h.Arm(a, 2000);
  h.Arm(b, 3000);
  h.Cancel(a);
  h.Cancel(a);  // twice, or after firing: nothing
  EXPECT_EQ(h.Sleep(1000, 2000), 3000);
  EXPECT_EQ(h.pending(), 1u);
}

TEST(TimerHorizon, ReArmingATimerMovesItsDeadline) {
  TimerHorizon h;
  h.Arm(a, 2000);
  h.Arm(a, 8000);  // the same grpc_timer, armed again (keepalives are)
  EXPECT_EQ(h.pending(), 1u);
  EXPECT_EQ(h.Sleep(1000, 2000), 8000);
}

TEST(TimerHorizon, AfterFiringTheThreadLooksAgainBeforeItSleeps) {
  TimerHorizon h;
  h.Arm(a, 2000);
  h.Sleep(1000, 2000);
  h.Fired(2000);
  EXPECT_FALSE(h.Arm(b, 2500));  // the check that follows sees it
  EXPECT_EQ(h.Sleep(2000, 3000), 2500);
}

TEST(TimerHorizon, ResetForgetsEverything) {
  TimerHorizon h;
  h.Arm(a, 2000);
  h.Sleep(1000, 2000);
  h.Reset();
  EXPECT_EQ(h.pending(), 0u);
  EXPECT_TRUE(h.Arm(b, 9000));
}

}  // namespace
}  // namespace rdmadp::server
