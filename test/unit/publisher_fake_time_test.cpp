// The ResourceSlice publisher's rules in time, on a clock the test holds (ManualClock) against
// the in-process fake of the API server's slice endpoints (FakeSliceApi): retry grids,
// Retry-After, outages, the quick retry, 409/410, a half-open watch, the write budget and the
// update spacing, at the real periods (9.5 s, 30 s, 90 s, 120 s), each request's time exact.
// A suite that waited out those periods in real time took minutes; this one takes well under
// a second. What the JavaScript fake server adds (TLS, tokens, schema and per-release
// validation) stays in test/e2e/slice_publisher_test.cpp.
//
// These tests kept their names when they moved here from the end-to-end suite (CI's test
// list is the same: scripts/test-names.sh): Publisher.*, PublisherWatchFailing.*,
// PublisherHalfOpen.*.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>

#include "pkg/dra/slices/resource_slices.h"
#include "pkg/dra/slices/slice_publisher.h"
#include "pkg/text/cat.h"
#include "test/support/fake_slice_api.h"
#include "test/support/manual_clock.h"
#include "test/support/wanted_pool.h"

namespace rdmadp::dra {
namespace {

using namespace std::chrono_literals;
using testing::FakeSliceApi;
using testing::ManualClock;
using Request = FakeSliceApi::Request;

using testing::Wanted;

class Publisher : public ::testing::Test {
 protected:
  // The publisher's two threads wait on clock_; the server sends a bookmark every minute, as
  // kube-apiserver's watch cache does, and the transports' idle limit is the real one.
  Publisher() : clock_(2), api_(clock_, /*watch_idle=*/90s, /*bookmark_every=*/60s) {}

  // `exact`: every retry waits the upper end of its step (no jitter) and the grid of a
  // server that is away has phase 0, so request times are exact (a Retry-After's spread
  // stays random). Returns once both threads wait.
  std::unique_ptr<SlicePublisher> Start(bool exact = false) {
    PublisherOptions o;
    o.driver = "rdma.example.com";
    o.node_name = "n1";
    o.on_problem = [this](std::string p) {
      std::lock_guard lock(mu_);
      problems_.push_back(std::move(p));
    };
    if (exact) {
      o.jitter = [](std::chrono::milliseconds d) { return d; };
      o.phase = [](std::chrono::milliseconds) { return std::chrono::milliseconds(0); };
    }
    o.clock = &clock_;
    o.connect = [this]() -> absl::StatusOr<std::unique_ptr<kube::ApiTransport>> {
      return api_.Connect();
    };
    auto p = SlicePublisher::Start(o);
    EXPECT_TRUE(p.ok()) << p.status();
    clock_.Settle();
    return p.ok() ? std::move(*p) : nullptr;
  }
  // Nothing more is written in `window` of the publisher's time.
  void ExpectQuiet(uint64_t writes, std::chrono::seconds window = 120s) {
    clock_.Advance(window);
    EXPECT_EQ(api_.stats().writes, writes);
  }
  std::vector<std::string> Problems() {
    std::lock_guard lock(mu_);
    return problems_;
  }
  // The requests whose method is `method` and URL contains `match`, in arrival order.
  std::vector<Request> Requests(const std::string& method, const std::string& match,
                                const std::string& without = "") const {
    std::vector<Request> out;
    for (const Request& r : api_.Requests()) {
      if (r.method != method || r.url.find(match) == std::string::npos) continue;
      if (!without.empty() && r.url.find(without) != std::string::npos) continue;
      out.push_back(r);
    }
    return out;
  }
  int Wipe() { return api_.Wipe({{"spec.nodeName", "n1"}}); }
  size_t Devices() const {
    const auto slices = api_.Slices();
    return slices.empty() ? 0 : slices.begin()->second["spec"]["devices"].size();
  }

  ManualClock clock_;
  FakeSliceApi api_;
  std::mutex mu_;
  std::vector<std::string> problems_;
};

// A flapping port: the first change goes out at once; the changes within kUpdateSpacing of
// it wait, and go out as one update carrying the latest wish, exactly kUpdateSpacing after
// the first (fleet_bench's flap wave: 500 flapping nodes would otherwise update a slice every
// 2 s each). A wipe meanwhile is no update: its repair never waits.
TEST_F(Publisher, AFlappingPoolIsUpdatedAtMostOncePerSpacing) {
  auto p = Start();
  p->Publish({Wanted(1)});
  clock_.Settle();
  ASSERT_EQ(api_.stats().creates, 1u);
  p->Publish({Wanted(2)});
  clock_.Settle();
  ASSERT_EQ(api_.stats().updates, 1u);
  const auto first = clock_.Now();
  p->Publish({Wanted(3)});  // down, up, down again: only the last is written
  clock_.Advance(1s);
  p->Publish({Wanted(1)});
  clock_.Advance(1s);
  p->Publish({Wanted(3)});
  clock_.AdvanceTo(first + kUpdateSpacing - 1ms);
  EXPECT_EQ(api_.stats().updates, 1u);
  clock_.AdvanceTo(first + kUpdateSpacing);
  ASSERT_EQ(api_.stats().updates, 2u);
  EXPECT_EQ(Devices(), 3u);
  EXPECT_EQ(api_.Slices().begin()->second["spec"]["pool"]["generation"], 3);
  const auto puts = Requests("PUT", "/resourceslices/");
  ASSERT_EQ(puts.size(), 2u);
  EXPECT_EQ(puts[1].t - puts[0].t, kUpdateSpacing);
  p->Publish({Wanted(2)});
  clock_.Advance(1500ms);
  EXPECT_EQ(api_.stats().updates, 2u) << "held: without the spacing it goes at once";
  EXPECT_EQ(Wipe(), 1);
  clock_.Settle();
  EXPECT_EQ(api_.Slices().size(), 1u);
  EXPECT_EQ(api_.stats().creates, 2u);
  EXPECT_EQ(Devices(), 2u);  // the latest wish, created
  EXPECT_EQ(api_.stats().updates, 2u);
  ExpectQuiet(4);
}

TEST_F(Publisher, A409RelistsAndTheUpdateThenLands) {
  auto p = Start();
  p->Publish({Wanted(1)});
  clock_.Settle();
  ASSERT_EQ(api_.Slices().size(), 1u);
  api_.AddFault({.method = "PUT", .match = "resourceslices", .code = 409});
  p->Publish({Wanted(2)});
  clock_.Settle();
  EXPECT_EQ(api_.stats().updates, 1u);
  EXPECT_EQ(api_.stats().lists, 2u);
  EXPECT_EQ(Devices(), 2u);
  ExpectQuiet(2);
}

// A watch from a compacted resourceVersion is told 410 (an ERROR event) and relists: the
// wish waits for that list, so it comes on the grid of a waiting change (phase 0: 9.5 s).
TEST_F(Publisher, AWatchFromACompactedVersionRelists) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  clock_.Advance(2s);  // the watch lasts past kShortWatch: its end is a healthy one
  ASSERT_EQ(api_.stats().watches_opened, 1u);
  api_.Compact();
  const auto dropped = clock_.Now();
  api_.DropWatches();
  clock_.Advance(kube::kUrgentPeriod);
  EXPECT_EQ(api_.stats().lists, 2u);
  EXPECT_EQ(api_.stats().open_watches, 1);
  const auto lists = Requests("GET", "resourceslices?fieldSelector");
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[1].t - dropped, kube::kUrgentPeriod);
  ExpectQuiet(1);
}

TEST_F(Publisher, ChangesMadeWhileTheApiServerIsDownLandWhenItIsBack) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  clock_.Advance(2s);
  ASSERT_EQ(api_.Slices().size(), 1u);
  api_.Down();
  const auto down = clock_.Now();
  clock_.Settle();  // the watch's re-open has found the server gone
  p->Publish({Wanted(3)});
  clock_.Advance(20s);
  EXPECT_EQ(api_.stats().updates, 0u);
  api_.Up();
  clock_.Advance(60s);
  EXPECT_EQ(api_.stats().updates, 1u);
  EXPECT_EQ(Devices(), 3u);
  const auto puts = Requests("PUT", "resourceslices");
  ASSERT_EQ(puts.size(), 4u) << "at 0, 9.5 and 19 s refused, at 28.5 s written";
  EXPECT_EQ(puts[0].t, down);
  EXPECT_EQ(puts[3].t - down, 3 * kube::kUrgentPeriod);
  EXPECT_EQ(puts[3].code, 200);
  ExpectQuiet(2);
}

TEST_F(Publisher, A429WaitsForRetryAfterThenWrites) {
  auto p = Start();
  p->Publish({Wanted(1)});
  clock_.Settle();
  ASSERT_EQ(api_.Slices().size(), 1u);
  api_.AddFault({.method = "POST", .match = "resourceslices", .code = 429});
  EXPECT_EQ(Wipe(), 1);
  clock_.Settle();
  EXPECT_EQ(api_.stats().faults_served, 1u);
  EXPECT_EQ(api_.stats().creates, 1u);
  clock_.Advance(60s);
  EXPECT_EQ(api_.stats().creates, 2u);
  EXPECT_EQ(api_.Slices().size(), 1u);
  EXPECT_THAT(Problems(), ::testing::Contains(::testing::HasSubstr("HTTP 429")));
  ExpectQuiet(2);
}

// After "429 Retry-After: 4" the update went again 1.0 s later, because every rescan's
// (unchanged) wish ended the wait. With rescans every 100 ms and the kubelet wiping the node
// meanwhile, nothing is sent before the Retry-After is over; the wipe is repaired when it is
// (docs/reliability.md, "Retries on the server's terms").
TEST_F(Publisher, A429IsNotRetriedBeforeItsRetryAfterWhateverHappensMeanwhile) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  clock_.Settle();
  ASSERT_EQ(api_.stats().creates, 1u);
  api_.AddFault({.method = "PUT", .match = "resourceslices", .code = 429, .retry_after = 3});
  p->Publish({Wanted(2)});
  clock_.Settle();
  ASSERT_EQ(api_.stats().faults_served, 1u);
  EXPECT_EQ(Wipe(), 1);
  for (int i = 0; i < 200 && api_.stats().creates < 2; ++i) {  // 20 s of rescans
    p->Publish({Wanted(2)});
    clock_.Advance(100ms);
  }
  const auto puts = Requests("PUT", "resourceslices");
  ASSERT_EQ(puts.size(), 1u);
  EXPECT_EQ(puts[0].code, 429);
  const auto creates = Requests("POST", "/resourceslices", "dryRun");
  ASSERT_EQ(creates.size(), 2u);
  EXPECT_GE(creates[1].t - puts[0].t, 3s) << "sent before the server's Retry-After";
  EXPECT_EQ(Devices(), 2u);
  ExpectQuiet(2);  // the first create and the wipe's repair (the refused update stored nothing)
}

// After four 500s in a row the gaps were 0.78, 0.22, 1.0, 1.0 s (docs/reliability.md,
// "Retries on the server's terms"). A change that waits is retried on its series' grid
// (here at phase 0: every 9.5 s from the first failure), whatever the rescans wish meanwhile.
TEST_F(Publisher, FiveHundredsBackOffAndNoWishShortensTheWait) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  clock_.Settle();
  ASSERT_EQ(api_.stats().creates, 1u);
  api_.AddFault({.method = "PUT", .match = "resourceslices", .code = 500, .count = 2});
  for (int i = 0; i < 300; ++i) {  // 30 s of rescans
    p->Publish({Wanted(2)});
    clock_.Advance(100ms);
  }
  const auto puts = Requests("PUT", "resourceslices");
  ASSERT_EQ(puts.size(), 3u);
  EXPECT_EQ(puts[0].code, 500);
  EXPECT_EQ(puts[1].code, 500);
  EXPECT_EQ(puts[2].code, 200);
  EXPECT_EQ(puts[1].t - puts[0].t, kube::kUrgentPeriod);
  EXPECT_EQ(puts[2].t - puts[0].t, 2 * kube::kUrgentPeriod);
  ExpectQuiet(2);
}

// An API server away for a while (fleet_bench's outage wave, one node of it): the change
// made meanwhile is retried on its grid (phase 0: 9.5 s, 19 s after the first PUT) and is
// the node's only request: the watcher, after the re-open that found the server gone,
// sends nothing until the write works, then resumes at its own grid point (30 s), not on
// the heels of the write (docs/performance.md, "A fleet against one API server").
TEST_F(Publisher, WhileTheServerIsAwayTheWaitingChangeIsTheNodesOnlyProbe) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  ExpectQuiet(1);  // the watch has lasted past kShortWatch: its end is a healthy one
  const auto from = clock_.Now();
  api_.Outage(true);  // the open watch is cut; its re-open finds the server gone
  clock_.Settle();
  ASSERT_EQ(api_.stats().refused, 1u);
  p->Publish({Wanted(2)});
  clock_.Advance(12s);  // two grid points' worth of outage
  api_.Outage(false);
  clock_.Advance(40s);
  EXPECT_EQ(api_.stats().updates, 1u);
  const auto puts = Requests("PUT", "resourceslices");
  ASSERT_EQ(puts.size(), 3u);
  EXPECT_EQ(puts[0].code, 503);
  EXPECT_EQ(puts[1].code, 503);
  EXPECT_EQ(puts[2].code, 200);
  EXPECT_EQ(puts[0].t, from);
  EXPECT_EQ(puts[1].t - puts[0].t, kube::kUrgentPeriod) << "the grid counts from the answer";
  EXPECT_EQ(puts[2].t - puts[0].t, 2 * kube::kUrgentPeriod);
  int watches_before_the_write_worked = 0;
  for (const Request& w : Requests("GET", "watch=true")) {
    if (w.t >= from && w.t < puts[2].t) ++watches_before_the_write_worked;
  }
  EXPECT_EQ(watches_before_the_write_worked, 1) << "the re-open that found the server gone";
  EXPECT_EQ(Requests("GET", "resourceslices?fieldSelector").size(), 1u)
      << "no relist: the watch resumes from its resourceVersion";
  const auto watches = Requests("GET", "watch=true");
  EXPECT_EQ(watches.back().t - from, kube::kIdlePeriod) << "the watcher's own grid point";
  EXPECT_EQ(watches.back().code, 200);
  EXPECT_EQ(api_.stats().open_watches, 1);
  for (const Request& r : api_.Requests()) {
    EXPECT_TRUE(r.code < 400 || r.code == 503) << r.method << " " << r.url << " " << r.code;
  }
}

// A change that comes while the watcher's quick retry is on its way waits for that answer.
// The server is away again (503): the change joins the grid, its first try a whole period
// after the answer. Sent at once, it would be a second probe of the same outage, and a
// node's 8 requests in a 60 s outage could be 9 (docs/performance.md, "A fleet against one
// API server").
TEST_F(Publisher, AChangeWhileTheQuickRetryIsOutWaitsForItsAnswer) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  ExpectQuiet(1);  // the watch has lasted past kShortWatch
  // The dropped watch is a healthy end: its re-open, at once, is the first failure (503);
  // the quick retry after it is held, and answered 503 at the release.
  api_.AddFault({.method = "GET", .match = "watch=true", .code = 503});
  api_.AddFault({.method = "GET", .match = "watch=true", .code = 503, .hold = true});
  const auto dropped = clock_.Now();
  api_.DropWatches();
  clock_.Settle();
  ASSERT_EQ(api_.stats().faults_served, 1u);
  clock_.Advance(kube::kFirstBackoff);  // the quick retry goes out, and is held
  ASSERT_EQ(api_.stats().faults_served, 2u);
  ASSERT_EQ(api_.stats().held, 1u);
  p->Publish({Wanted(2)});
  clock_.Advance(1s);
  EXPECT_EQ(api_.stats().writes, 1u) << "no write while the quick retry's answer is out";
  const auto released = clock_.Now();
  api_.Release();
  clock_.Advance(15s);
  EXPECT_EQ(api_.stats().updates, 1u);
  const auto puts = Requests("PUT", "resourceslices");
  ASSERT_EQ(puts.size(), 1u);
  EXPECT_EQ(puts[0].code, 200);
  EXPECT_EQ(puts[0].t - released, kube::kUrgentPeriod)
      << "joined the grid: a whole period after the answer";
  int watches = 0;  // from the drop to the write: the re-open and the held quick retry
  for (const Request& w : Requests("GET", "watch=true")) {
    if (w.t >= dropped && w.t < puts[0].t) {
      ++watches;
      EXPECT_EQ(w.code, 503);
    }
  }
  EXPECT_EQ(watches, 2);
  EXPECT_EQ(Requests("GET", "resourceslices?fieldSelector").size(), 1u) << "no relist";
}

// A quick retry the server never answers (it accepted the connection and went silent)
// holds a change kQuickRetryAnswerWait at most, not for the watch's 90 s idle limit.
TEST_F(Publisher, AChangeWaitsForAnUnansweredQuickRetryFiveSecondsAtMost) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  ExpectQuiet(1);
  api_.AddFault({.method = "GET", .match = "watch=true", .code = 503});
  api_.AddFault({.method = "GET", .match = "watch=true", .code = 503, .hold = true});
  api_.DropWatches();
  clock_.Advance(kube::kFirstBackoff);
  ASSERT_EQ(api_.stats().held, 1u);
  p->Publish({Wanted(2)});
  clock_.Advance(15s);
  EXPECT_EQ(api_.stats().updates, 1u);
  const auto puts = Requests("PUT", "resourceslices");
  const auto watches = Requests("GET", "watch=true");
  ASSERT_EQ(puts.size(), 1u);
  ASSERT_EQ(watches.size(), 3u);  // the first, the re-open, the held quick retry
  EXPECT_EQ(puts[0].t - watches[2].t, kQuickRetryAnswerWait);
  EXPECT_EQ(puts[0].code, 200);
  api_.Release();
}

// A Retry-After of 68 years waits the documented cap (kube::kMaxRetryAfter, 120 s), not 68
// years and not less: nothing is sent while it lasts, whatever is wished, and the write goes
// once it is over.
TEST_F(Publisher, AHugeRetryAfterHoldsEveryWrite) {
  auto p = Start(/*exact=*/true);
  ASSERT_EQ(api_.stats().dry_runs, 1u);  // the probe is done
  api_.AddFault(
      {.method = "POST", .match = "resourceslices", .code = 429, .retry_after = 2147483647});
  p->Publish({Wanted(1)});
  clock_.Settle();
  ASSERT_EQ(api_.stats().faults_served, 1u);
  const auto refused = clock_.Now();
  p->Publish({Wanted(2)});
  clock_.AdvanceTo(refused + kube::kMaxRetryAfter - 1ms);
  EXPECT_EQ(Requests("POST", "/resourceslices", "dryRun").size(), 1u);
  EXPECT_EQ(api_.stats().writes, 0u);
  clock_.Advance(kube::kMaxRetryAfter / 4 + 1s);  // the spread after it: up to a quarter
  const auto creates = Requests("POST", "/resourceslices", "dryRun");
  ASSERT_EQ(creates.size(), 2u);
  EXPECT_GE(creates[1].t - refused, kube::kMaxRetryAfter);
  EXPECT_EQ(api_.stats().writes, 1u);
}

// At eee2a98 a watch refused while lists work (RBAC without "watch") looped at 145-169
// requests a minute, because every successful list started the back-off over. Only a watch
// that works does now: a refused watch backs off on the slow schedule (8 s, 16 s, ...) and
// resumes from where it was: in the 20 s after the first refusal, exactly 2 watches and no
// list (docs/reliability.md, "Capacity and data").
TEST_F(Publisher, AWatchRefusedWhileListsWorkBacksOffOnTheSlowSchedule) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  clock_.Advance(2s);
  ASSERT_EQ(api_.stats().creates, 1u);
  api_.AddFault({.method = "GET", .match = "watch=true", .code = 403, .count = 1000});
  api_.DropWatches();  // a healthy watch ends; the next one is refused
  clock_.Settle();
  ASSERT_EQ(api_.stats().faults_served, 1u);
  const auto t0 = Requests("GET", "watch=true").back().t;
  clock_.Advance(20s);
  std::vector<std::chrono::nanoseconds> watches;
  int lists = 0;
  for (const Request& r : Requests("GET", "/resourceslices")) {
    if (r.t < t0) continue;
    if (r.url.find("watch=true") != std::string::npos) {
      watches.push_back(r.t - t0);
    } else {
      ++lists;
    }
  }
  EXPECT_THAT(watches, ::testing::ElementsAre(0s, kube::kFirstSlowBackoff));
  EXPECT_EQ(lists, 0);
  // Said once, not at every refused watch (the problem reaches the log and the error count).
  const auto problems = Problems();
  EXPECT_EQ(std::count_if(
                problems.begin(), problems.end(),
                [](const std::string& line) { return line.find("HTTP 403") != std::string::npos; }),
            1);
  // The dropped watch (one cut connection) is not "a server that ends every watch": that
  // line used to come first, before the real cause (H13 at 050f44e).
  EXPECT_THAT(
      problems,
      ::testing::Not(::testing::Contains(::testing::HasSubstr("ends every ResourceSlice watch"))));
}

// H1 of the hardening round at 050f44e: a watch that kept failing with anything but 410
// resumed from the cache's resourceVersion for ever and never listed again, so slices the
// server lost (a kubelet wipes them at every start) stayed lost on an idle node: capacity
// gone without a word. After kRelistAfterFailedWatches failed watches the next turn lists
// instead: exactly that many watches, then one list, then the wiped slice is created again.
class PublisherWatchFailing : public Publisher {
 protected:
  void ExpectAWipeRepairedWhileEveryWatchFails(long code) {
    SCOPED_TRACE(Cat("every watch answered ", code));
    auto p = Start(/*exact=*/true);
    p->Publish({Wanted(1)});
    clock_.Advance(2s);  // the first watch lasts: its end is a healthy one, not a failure
    ASSERT_EQ(api_.stats().creates, 1u);
    // Every watch fails from now on. (From the start, the watcher's first failure and the
    // writer's capability probe would race at the same instant: a probe that sees the server
    // away waits for it, and nothing would be written at all.)
    api_.AddFault({.method = "GET", .match = "watch=true", .code = code, .count = 1000});
    api_.DropWatches();
    clock_.Settle();
    EXPECT_EQ(Wipe(), 1);
    // Unrepaired before: no list came in 240 s of the publisher's time.
    for (int i = 0; i < 600 && api_.stats().creates < 2; ++i) clock_.Advance(1s);
    ASSERT_EQ(api_.stats().creates, 2u);
    EXPECT_EQ(api_.Slices().size(), 1u);
    const auto repaired = Requests("POST", "/resourceslices", "dryRun").back().t;
    int watches = 0;  // failed ones
    int lists = 0;
    auto second_list = clock_.start();
    for (const Request& s : Requests("GET", "/resourceslices")) {
      if (s.t > repaired) continue;
      if (s.url.find("watch=true") == std::string::npos) {
        if (++lists == 2) second_list = s.t;
      } else if (lists < 2 && s.code == code) {
        ++watches;
      }
    }
    EXPECT_EQ(watches, kRelistAfterFailedWatches);
    EXPECT_EQ(lists, 2);
    EXPECT_EQ(repaired, second_list) << "the list found the wipe: the create follows at once";
  }
};

TEST_F(PublisherWatchFailing, AWatchRefusedForEverStillRepairsAWipe) {
  ExpectAWipeRepairedWhileEveryWatchFails(403);
}

TEST_F(PublisherWatchFailing, AWatchFailingWith500StillRepairsAWipe) {
  ExpectAWipeRepairedWhileEveryWatchFails(500);
}

// A watch the server ended at once was reopened at once: 427 watch requests in 20 s. A watch
// shorter than a second is a failure (docs/reliability.md, "Crash, hang, flood"): one quick
// retry, then the idle grid (30 s; phase 0 here): in 10 s, exactly the watch that found the
// server ending watches and the quick retry.
TEST_F(Publisher, AWatchTheServerEndsAtOnceBacksOff) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  ExpectQuiet(1);  // and the open watch has lasted past kShortWatch: a healthy end next
  const size_t before = Requests("GET", "watch=true").size();
  api_.ShortWatches(true);  // ends the open watch too
  clock_.Advance(10s);
  EXPECT_EQ(Requests("GET", "watch=true").size() - before, 2u)
      << "the re-open after the healthy end, and one quick retry";
  EXPECT_THAT(Problems(),
              ::testing::Contains(::testing::HasSubstr("ends every ResourceSlice watch")));
  // Watches last again. The node is idle (no event for a minute): the open watch alone must
  // clear the problem, or /readyz would say "cannot reach the API server" while all works.
  api_.ShortWatches(false);
  clock_.Advance(40s);
  EXPECT_EQ(api_.stats().open_watches, 1);
  EXPECT_EQ(p->stats().problem, "");
}

// The hard ceiling: whatever the reconciler asks for, writes beyond kWriteBurst wait for the
// budget (one a second). 40 pools at once: the probe and 31 creates at once, then one a
// second.
TEST_F(Publisher, WritesBeyondTheBurstWaitForTheBudget) {
  auto p = Start();
  std::vector<WantedPool> pools;
  for (int i = 0; i < 40; ++i) pools.push_back(Wanted(1, Cat("r", i)));
  const auto t0 = clock_.Now();
  p->Publish(pools);
  clock_.Advance(30s);
  EXPECT_EQ(api_.stats().creates, 40u);
  const auto creates = Requests("POST", "/resourceslices", "dryRun");
  ASSERT_EQ(creates.size(), 40u);
  EXPECT_EQ(creates[30].t, t0);
  EXPECT_EQ(creates[31].t - t0, kWriteInterval);
  EXPECT_EQ(creates[39].t - t0, 9 * kWriteInterval);
  ExpectQuiet(40);
  EXPECT_EQ(p->stats().budget_waits, 9u);  // 40 creates and the capability probe
  EXPECT_EQ((p->stats().writes_by_verb_code.at({"create", 201})), 40u);
}

// List and watch answers of the wrong shape aborted the process (json type_error on the
// watch thread); a list carrying other nodes' or drivers' slices made us delete them. Now
// each bad answer is a problem line, foreign slices are ignored, and publishing goes on
// (docs/reliability.md, "Crash, hang, flood"). Three lists and a watch fail; the wish waits
// on them, so each retry is on the grid (phase 0: every 9.5 s).
TEST_F(Publisher, MalformedAndForeignAnswersAreNeitherCrashesNorDeletes) {
  const std::string list = "resourceslices?fieldSelector";
  api_.AddFault({.method = "GET", .match = list, .code = 200, .body = "<html>proxy error</html>"});
  api_.AddFault({.method = "GET", .match = list, .code = 200, .body = R"({"items": 5})"});
  const nlohmann::json foreign = {
      {"kind", "ResourceSliceList"},
      {"metadata", {{"resourceVersion", "100"}}},
      {"items",
       {1,
        "x",
        {{"metadata", 7}},
        {{"metadata", {{"name", "other-node"}, {"resourceVersion", "5"}}},
         {"spec",
          {{"nodeName", "n2"}, {"driver", "rdma.example.com"}, {"pool", {{"name", "n1/a"}}}}}},
        {{"metadata", {{"name", "other-driver"}, {"resourceVersion", "6"}}},
         {"spec",
          {{"nodeName", "n1"}, {"driver", "gpu.example.com"}, {"pool", {{"name", "n1/a"}}}}}}}}};
  api_.AddFault({.method = "GET", .match = list, .code = 200, .body = foreign.dump()});
  api_.AddFault({.method = "GET",
                 .match = "watch=true",
                 .code = 200,
                 .body = "{\"type\": 5}\n{\"type\": \"ADDED\", \"object\": []}\n"
                         "{\"type\": \"ADDED\", \"object\": {\"metadata\": {\"name\": 3}}}\n"});
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  clock_.Advance(4 * kube::kUrgentPeriod);
  EXPECT_EQ(api_.stats().creates, 1u);
  ExpectQuiet(1);
  EXPECT_EQ(api_.stats().deletes, 0u) << "foreign slices are never ours to delete";
  EXPECT_EQ(api_.stats().faults_served, 4u);
  EXPECT_THAT(Problems(), ::testing::Contains(::testing::HasSubstr("the answer is not a list")));
}

// A half-open watch (the peer vanished without a FIN or RST, or answers keepalives with a
// reset) hid a wipe for 57 s and 614 s. A watch that carries nothing, not even a bookmark,
// for the idle limit (90 s) is dead: the publisher watches again from where it was, and the
// server's replay puts back what the wipe took (docs/reliability.md, "Capacity and data").
// Bookmarks every minute, as the API server's watch cache sends them (the last one here at
// the moment the connection goes silent).
class PublisherHalfOpen : public Publisher {};

TEST_F(PublisherHalfOpen, AWatchThatGoesSilentIsDroppedAndTheWipeRepublished) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(3)});
  clock_.Settle();
  ASSERT_EQ(api_.stats().creates, 1u);
  clock_.Advance(180s);  // bookmarks keep a healthy idle watch alive past the limit
  EXPECT_EQ(api_.stats().writes, 1u);
  EXPECT_EQ(api_.stats().lists, 1u);
  EXPECT_EQ(api_.stats().watches_opened, 1u);
  const auto silent = clock_.Now();
  api_.BlackHoleWatches(true);
  EXPECT_EQ(Wipe(), 1);
  api_.BlackHoleWatches(false);  // the next connection works
  clock_.AdvanceTo(silent + 90s - 1ms);
  EXPECT_EQ(api_.stats().watches_opened, 1u) << "dropped before the idle limit";
  clock_.Advance(30s);
  EXPECT_EQ(api_.stats().creates, 2u);
  EXPECT_EQ(api_.Slices().size(), 1u);
  const auto watches = Requests("GET", "watch=true");
  ASSERT_EQ(watches.size(), 2u);
  EXPECT_EQ(watches[1].t - silent, 90s + kube::kFirstBackoff)
      << "the idle limit after the last bookmark, then one quick retry";
  ExpectQuiet(2, 60s);
  EXPECT_EQ(api_.stats().lists, 1u)
      << "no relist: the next watch resumes from the dead one's resourceVersion, and the "
         "server replays the wipe";
}

}  // namespace
}  // namespace rdmadp::dra
