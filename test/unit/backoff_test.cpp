// The API back-off is jittered, so a fleet that failed together (an API server outage)
// spreads its retries instead of arriving in the same half second (docs/reliability.md,
// "Crash, hang, flood").
#include "pkg/kube/backoff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "pkg/kube/retry_schedule.h"

namespace rdmadp::kube {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DoublesToTheCapAndStartsOverOnReset) {
  Backoff b(milliseconds(1000), milliseconds(30000));
  std::vector<long> steps;
  for (int i = 0; i < 7; ++i) {
    steps.push_back(static_cast<long>(b.step().count()));
    b.Next();
  }
  EXPECT_EQ(steps, (std::vector<long>{1000, 2000, 4000, 8000, 16000, 30000, 30000}));
  b.Reset();
  EXPECT_EQ(b.step(), milliseconds(1000));
}

// 100 nodes, each with its own seed, at every step of the back-off: every wait lies in
// [d/2, d], and the fleet's waits cover that range rather than sharing one instant (before
// the fix: all 100 retried at +1, +3, +7, +15, +31 s).
TEST(Backoff, AFleetSpreadsOverTheUpperHalfOfEachStep) {
  constexpr int kNodes = 100;
  std::vector<Backoff> fleet(kNodes, Backoff(milliseconds(1000), milliseconds(30000)));
  std::vector<std::minstd_rand> rngs;
  for (int i = 0; i < kNodes; ++i) rngs.emplace_back(1234 + i);
  for (int step = 0; step < 6; ++step) {
    const milliseconds d = fleet[0].step();
    std::vector<milliseconds> waits;
    for (int i = 0; i < kNodes; ++i) waits.push_back(fleet[i].Next(rngs[i]));
    const auto [lo, hi] = std::minmax_element(waits.begin(), waits.end());
    EXPECT_GE(*lo, d / 2) << "step " << step;
    EXPECT_LE(*hi, d) << "step " << step;
    // Each quarter of [d/2, d] holds some of the fleet: spread, not clustered.
    int quarters[4] = {};
    for (auto w : waits) ++quarters[std::min<int64_t>(3, (w - d / 2) * 8 / d)];
    for (int q = 0; q < 4; ++q) EXPECT_GT(quarters[q], 0) << "step " << step << " quarter " << q;
  }
}

TEST(Backoff, TinyWaitsAreNotJittered) {
  std::minstd_rand rng(1);
  EXPECT_EQ(Jittered(milliseconds(0), rng), milliseconds(0));
  EXPECT_EQ(Jittered(milliseconds(1), rng), milliseconds(1));
  EXPECT_EQ(RandomUpTo(0, rng), 0u);
}

// Every wait after a failure, as the publisher's loops take it (docs/reliability.md, "Retries
// on the server's terms"). The jitter is the identity here (the upper end of each step), so
// every time is exact.
class Schedule : public ::testing::Test {
 protected:
  using Time = RetrySchedule::Time;
  RetrySchedule retry{[](milliseconds d) { return d; },
                      [](milliseconds) { return milliseconds(0); },
                      [](milliseconds) { return milliseconds(0); }};
  const Time t0 = Time() + std::chrono::hours(1);
  // Offsets from t0, in ms, of the next request after each answer in turn.
  std::vector<long> After(const std::vector<std::pair<long, FailedAnswer>>& answers) {
    std::vector<long> out;
    for (const auto& [at_ms, answer] : answers) {
      out.push_back(static_cast<long>(std::chrono::duration_cast<milliseconds>(
                                          retry.Failed(t0 + milliseconds(at_ms), answer) - t0)
                                          .count()));
    }
    return out;
  }
};

// "After 429 with Retry-After: 4 the update was resent 1.0 s later": never before the
// server's Retry-After; our own step applies when it is longer.
TEST_F(Schedule, A429IsNeverRetriedBeforeItsRetryAfter) {
  EXPECT_EQ(After({{0, {429, 4}}}), (std::vector<long>{4000}));
  EXPECT_EQ(After({{4000, {429, 1}}}), (std::vector<long>{6000})) << "step 2 s > 1 s asked";
  EXPECT_EQ(After({{6000, {503, 3}}}), (std::vector<long>{10000})) << "step 4 s > 3 s asked";
}

// A throttled fleet must not come back in the same second: each node waits its Retry-After
// plus up to a quarter more, and the default spread covers that range.
TEST(ScheduleSpread, ARetryAfterIsSpreadOverAQuarterMore) {
  const auto t0 = RetrySchedule::Time() + std::chrono::hours(1);
  RetrySchedule injected{[](milliseconds d) { return d; }, [](milliseconds d) { return d / 4; }};
  EXPECT_EQ(injected.Failed(t0, {429, 4}) - t0, milliseconds(5000));
  std::set<long> seen;
  for (int i = 0; i < 2000; ++i) {
    RetrySchedule retry{[](milliseconds d) { return d; }};
    const long ms =
        std::chrono::duration_cast<milliseconds>(retry.Failed(t0, {429, 4}) - t0).count();
    ASSERT_GE(ms, 4000) << "before the server's Retry-After";
    ASSERT_LE(ms, 5000);
    if (ms < 5000) seen.insert(ms / 100);  // 5.0 s itself: one draw in 1,001
  }
  EXPECT_EQ(seen.size(), 10u) << "every tenth of a second from 4.0 to 5.0 s is taken";
}

// "A server cannot park us for years": Retry-After is honoured up to kMaxRetryAfter.
TEST_F(Schedule, AHugeRetryAfterWaitsTheDocumentedCap) {
  EXPECT_EQ(After({{0, {429, 2147483647}}}),
            (std::vector<long>{static_cast<long>(milliseconds(kMaxRetryAfter).count())}));
  EXPECT_EQ(kMaxRetryAfter, std::chrono::seconds(120));
}

// "After four 500s in a row the gaps were 0.78, 0.22, 1.0, 1.0 s": a change that waits
// against a server that is away is retried on the series' grid, one request a kUrgentPeriod
// at the series' phase (0 here), and never sooner than kMinGridWait after a failure.
TEST_F(Schedule, AWaitingChangeIsRetriedOnTheSeriesGrid) {
  EXPECT_EQ(After({{0, {500, 0}}, {9600, {500, 0}}, {19000, {0, 0}}, {28600, {502, 0}}}),
            (std::vector<long>{9500, 19000, 28500, 38000}))
      << "each grid point in turn, whatever the answer's latency";
  EXPECT_EQ(After({{35600, {429, 0}}}), (std::vector<long>{47500}))
      << "a grid point 2.4 s away is too close (kMinGridWait): the next one";
  EXPECT_EQ(kUrgentPeriod, milliseconds(9500)) << "answered within 10 s of a server's return";
}

// The series' phase places its grid: 3 s of kIdlePeriod is a tenth, 950 ms of kUrgentPeriod.
TEST(SchedulePhase, ThePhaseIsOneFractionOfWhicheverPeriodApplies) {
  const auto t0 = RetrySchedule::Time() + std::chrono::hours(1);
  RetrySchedule retry{[](milliseconds d) { return d; },
                      [](milliseconds) { return milliseconds(0); },
                      [](milliseconds) { return milliseconds(3000); }};
  EXPECT_EQ(retry.Failed(t0 + milliseconds(10), {503, 0}) - t0, milliseconds(10460))
      << "the series began at 10 ms; 960 ms is sooner than kMinGridWait: the next point";
  EXPECT_EQ(retry.Failed(t0 + milliseconds(10460), {503, 0}, Pace::kIdle) - t0, milliseconds(11460))
      << "idle: the series' one quick retry";
  EXPECT_EQ(retry.Failed(t0 + milliseconds(11460), {503, 0}, Pace::kIdle) - t0, milliseconds(33010))
      << "then the idle grid of the same series: its start + 3 s + 30 s";
}

// Nothing to write, only a watch to resume: one quick retry for a blip, then kIdlePeriod.
TEST_F(Schedule, AnIdleLoopRetriesOnceQuicklyThenEveryIdlePeriod) {
  std::vector<long> out;
  for (long at : {0L, 1000L, 30000L, 60000L}) {
    out.push_back(
        static_cast<long>(std::chrono::duration_cast<milliseconds>(
                              retry.Failed(t0 + milliseconds(at), {0, 0}, Pace::kIdle) - t0)
                              .count()));
  }
  EXPECT_EQ(out, (std::vector<long>{1000, 30000, 60000, 90000}));
  retry.Succeeded();
  EXPECT_EQ(retry.Failed(t0 + milliseconds(200000), {0, 0}, Pace::kIdle) - t0, milliseconds(201000))
      << "a success: the next series has its quick retry again";
}

// A loop that waited on another's retries resumes at its own series' next grid point, and
// that is no failure: the series goes on, and a success ends it as before.
TEST_F(Schedule, TheNextGridPointContinuesTheSeries) {
  EXPECT_EQ(retry.NextGridPoint(t0, Pace::kIdle), t0) << "nothing failing: now";
  EXPECT_EQ(After({{0, {0, 0}}}), (std::vector<long>{9500}));
  EXPECT_EQ(retry.NextGridPoint(t0 + milliseconds(19000), Pace::kIdle) - t0, milliseconds(30000))
      << "19 s after the series began (well after its wait ended): its 30 s point";
  retry.Succeeded();
  EXPECT_EQ(retry.NextGridPoint(t0 + milliseconds(40000), Pace::kIdle), t0 + milliseconds(40000));
}

// A change deferred because the watcher already found the server away: its first retry is
// at least a whole period away (phase 0: the grid from the join, 9.5 s), then the grid.
TEST_F(Schedule, AJoinedChangeWaitsAWholePeriodFirst) {
  EXPECT_EQ(retry.Join(t0 + milliseconds(5000)) - t0, milliseconds(14500));
  EXPECT_EQ(After({{14500, {503, 0}}}), (std::vector<long>{24000}));
}

// An outage longer than kLongFailure: a waiting change is retried every kIdlePeriod from
// then on, and a success starts over.
TEST_F(Schedule, ALongOutageTakesTheIdlePeriod) {
  std::vector<std::pair<long, FailedAnswer>> failures;  // each at the end of the last wait
  for (long t = 0; t < 120000; t += 9500) failures.push_back({t, {503, 0}});
  EXPECT_EQ(After(failures).back(), 123500) << "the last failure inside 120 s: its grid point";
  EXPECT_EQ(After({{123500, {503, 0}}, {150000, {0, 0}}}), (std::vector<long>{150000, 180000}))
      << "the series' 30 s grid from its start";
  retry.Succeeded();
  EXPECT_EQ(After({{300000, {503, 0}}}), (std::vector<long>{309500}));
}

// The writer's half of fleet_bench's outage wave: 5,000 nodes whose change waits through a
// 60 s outage that began in one instant. Each writer retries at most 6 times during it
// (grid points; with its first write and the watch's re-open, the node's 8: the watcher's
// share is slice_publisher_test's), each retry after the return is answered within 10 s
// (sent within 9.5 s, latencies up to 300 ms), and the return is spread evenly over
// kUrgentPeriod: no second after it holds more than 15 % over an even share (N/9.5; that
// all N must come back within 10 s is why the bench's outage changes a tenth of the pools,
// docs/performance.md). Phases and latencies come from a fixed seed.
TEST(ScheduleFleet, AWaitingChangeRetriesAtMost6TimesInAnOutageAndTheReturnIsSpread) {
  const auto t0 = RetrySchedule::Time() + std::chrono::hours(1);
  std::minstd_rand rng(2026);
  constexpr int kNodes = 5000;
  constexpr long kOutageMs = 60000;
  std::vector<int> per_second(11, 0);
  for (int node = 0; node < kNodes; ++node) {
    RetrySchedule retry{nullptr, nullptr, [&](milliseconds d) {
                          return milliseconds(static_cast<int64_t>(
                              RandomUpTo(static_cast<uint64_t>(d.count()), rng)));
                        }};
    long at = static_cast<long>(RandomUpTo(100, rng));  // the first write, as it begins
    int retries = -1;                                   // the first write is no retry
    long latency = 0;
    while (at < kOutageMs) {
      ++retries;
      latency = static_cast<long>(RandomUpTo(300, rng));
      at = static_cast<long>(std::chrono::duration_cast<milliseconds>(
                                 retry.Failed(t0 + milliseconds(at + latency), {503, 0}) - t0)
                                 .count());
    }
    ASSERT_LE(retries, 6) << "node " << node;
    latency = static_cast<long>(RandomUpTo(300, rng));  // the retry that finds it back
    ASSERT_LT(at + latency - kOutageMs, 10000) << "node " << node << ": answered after the return";
    ++per_second[static_cast<size_t>((at - kOutageMs) / 1000)];
  }
  for (size_t s = 0; s < per_second.size(); ++s) {
    EXPECT_LE(per_second[s], kNodes * 115 / 950) << "second " << s << " after the return";
  }
}

// 401/403 (and 422): an operator must act; retrying sooner cannot help.
TEST_F(Schedule, RefusalsTakeTheSlowSchedule) {
  EXPECT_EQ(After({{0, {403, 0}}, {8000, {403, 0}}, {24000, {401, 0}}, {56000, {422, 0}}}),
            (std::vector<long>{8000, 24000, 56000, 120000}));
}

TEST_F(Schedule, ASuccessStartsBothOver) {
  After({{0, {500, 0}}, {1000, {500, 0}}, {3000, {403, 0}}});
  retry.Succeeded();
  EXPECT_EQ(After({{100000, {500, 0}}, {109500, {403, 0}}}), (std::vector<long>{109500, 117500}))
      << "a new grid from the new series' start, and the slow back-off's first step";
}

// A failure long after the last wait ended (a refused dry-run probe, then an hour of work)
// starts a new series: its grid starts there (the old one's next point was 209,000), and it
// has not lasted kLongFailure.
TEST_F(Schedule, AFailureLongAfterTheLastWaitStartsANewSeries) {
  EXPECT_EQ(After({{0, {403, 0}}}), (std::vector<long>{8000}));
  EXPECT_EQ(After({{200000, {503, 0}}, {209500, {503, 0}}}), (std::vector<long>{209500, 219000}));
}

// A failure answered before the current wait is over never shortens it.
TEST_F(Schedule, AnEarlierEndIsNeverTaken) {
  EXPECT_EQ(After({{0, {429, 30}}, {1000, {500, 0}}}), (std::vector<long>{30000, 30000}));
}

TEST(ScheduleClass, EveryAnswerHasOneClass) {
  EXPECT_EQ(Classify({429, 1}), FailureClass::kThrottled);
  EXPECT_EQ(Classify({503, 2}), FailureClass::kThrottled);
  EXPECT_EQ(Classify({429, 0}), FailureClass::kTransient);
  EXPECT_EQ(Classify({503, 0}), FailureClass::kTransient);
  EXPECT_EQ(Classify({0, 0}), FailureClass::kTransient);
  EXPECT_EQ(Classify({500, 7}), FailureClass::kThrottled);
  EXPECT_EQ(Classify({500, 0}), FailureClass::kTransient);
  for (long code : {400L, 401L, 403L, 404L, 409L, 422L}) {
    EXPECT_EQ(Classify({code, 0}), FailureClass::kRefused) << code;
  }
}

}  // namespace
}  // namespace rdmadp::kube
