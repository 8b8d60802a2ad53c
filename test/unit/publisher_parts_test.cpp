// The slice publisher's pure parts, each on its own (fake time, no threads): the cache of
// what the API server has, the update spacing, what the server keeps and when it is probed,
// who of the two threads talks to a server that is away, and the rate limiter behind the
// write budget. The publisher's threads and the server are slice_publisher_test's.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "pkg/dra/slices/outage_turns.h"
#include "pkg/dra/slices/server_fields.h"
#include "pkg/dra/slices/slice_cache.h"
#include "pkg/dra/slices/update_spacing.h"
#include "pkg/rate/cell_rate_limiter.h"

namespace rdmadp::dra {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using TimePoint = std::chrono::steady_clock::time_point;

nlohmann::json Slice(const std::string& name, const std::string& rv, const std::string& node = "n1",
                     const std::string& pool = "p") {
  return {{"metadata", {{"name", name}, {"resourceVersion", rv}}},
          {"spec", {{"nodeName", node}, {"driver", "d"}, {"pool", {{"name", pool}}}}}};
}

TEST(SliceCache, AListIsTheWholeTruthAndOnlyOursIsKept) {
  SliceCache cache("n1", "d");
  cache.Apply("DELETED", Slice("a", "3"));
  cache.Replace(nlohmann::json::array({Slice("a", "1"), Slice("b", "2", "n2"), Slice("", "2")}),
                "10");
  ASSERT_EQ(cache.slices().size(), 1u);
  EXPECT_EQ(cache.slices().at("a").resource_version, "1");
  EXPECT_EQ(cache.resource_version(), "10");
  cache.Written(Slice("a", "4"));  // the list forgot the tombstone: a's answer is kept
  EXPECT_EQ(cache.slices().at("a").resource_version, "4");
}

TEST(SliceCache, EveryEventMovesTheResourceVersionButOnlyOursChangeTheSlices) {
  SliceCache cache("n1", "d");
  EXPECT_FALSE(cache.Apply("BOOKMARK", Slice("", "5")));
  EXPECT_EQ(cache.resource_version(), "5");
  EXPECT_FALSE(cache.Apply("ADDED", Slice("x", "6", "n2")));  // another node's
  EXPECT_EQ(cache.resource_version(), "6");
  EXPECT_TRUE(cache.slices().empty());
  EXPECT_TRUE(cache.Apply("ADDED", Slice("a", "7")));
  EXPECT_EQ(cache.slices().size(), 1u);
}

TEST(SliceCache, AnOlderVersionNeverReplacesANewerOne) {
  SliceCache cache("n1", "d");
  cache.Apply("MODIFIED", Slice("a", "9"));
  cache.Written(Slice("a", "8"));  // our write's answer after its own watch event
  EXPECT_EQ(cache.slices().at("a").resource_version, "9");
  cache.Apply("MODIFIED", Slice("a", "7"));
  EXPECT_EQ(cache.slices().at("a").resource_version, "9");
  cache.Written(Slice("a", "10"));
  EXPECT_EQ(cache.slices().at("a").resource_version, "10");
}

TEST(SliceCache, AnAnswerAfterTheWatchSawTheSliceGoDoesNotBringItBack) {
  SliceCache cache("n1", "d");
  cache.Apply("ADDED", Slice("a", "1"));
  cache.Apply("DELETED", Slice("a", "2"));  // the kubelet's wipe, right after our create
  cache.Written(Slice("a", "1"));
  EXPECT_TRUE(cache.slices().empty());
  cache.Written(Slice("b", "3", "n2"));  // not ours
  EXPECT_TRUE(cache.slices().empty());
}

TEST(SliceCache, PastTheCapTheOldestTombstoneGoesNotTheFirstByName) {
  constexpr int kCap = 1024;  // kMaxTombstones in slice_cache.cpp
  // Each name sorts before those deleted earlier: name order is the reverse of age, so
  // evicting by name would drop the newest tombstones and keep the oldest.
  const auto name = [](int i) { return "s" + std::to_string(20000 - i); };
  SliceCache cache("n1", "d");
  for (int i = 0; i <= kCap; ++i) cache.Apply("DELETED", Slice(name(i), std::to_string(i + 1)));
  // One past the cap: only the first deleted lost its tombstone, so only its late answer is
  // kept; every later one, the newest two included, is refused.
  for (int i = 0; i <= kCap; ++i) cache.Written(Slice(name(i), "5000"));
  ASSERT_EQ(cache.slices().size(), 1u);
  EXPECT_EQ(cache.slices().begin()->first, name(0));
  EXPECT_EQ(cache.slices().count(name(kCap - 1)), 0u);
  EXPECT_EQ(cache.slices().count(name(kCap)), 0u);

  // A name deleted again is new again: the oldest is now name(2), not name(1).
  cache.Apply("DELETED", Slice(name(1), "5001"));
  cache.Apply("DELETED", Slice(name(kCap + 1), "5002"));
  cache.Written(Slice(name(1), "5003"));
  EXPECT_EQ(cache.slices().count(name(1)), 0u);
  cache.Written(Slice(name(2), "5003"));
  EXPECT_EQ(cache.slices().count(name(2)), 1u);
}

SliceWrite Update(const std::string& pool, const std::string& name) {
  return {SliceWrite::Kind::kUpdate, name, "1", Slice(name, "1", "n1", pool)};
}

TEST(UpdateSpacing, AFlappingPoolWaitsTheSpacingAndOthersDoNot) {
  UpdateSpacing spacing;
  const TimePoint t0{};
  std::vector<SliceWrite> first = {Update("p", "a")};
  EXPECT_EQ(spacing.Hold(first, {}, t0).size(), 1u);  // the first change goes at once
  spacing.Written(first, t0);
  const TimePoint t1 = t0 + seconds(3);
  EXPECT_TRUE(spacing.Hold({Update("p", "a"), Update("p", "b")}, {}, t1).empty());
  ASSERT_TRUE(spacing.held_until().has_value());
  EXPECT_EQ(*spacing.held_until(), t0 + kUpdateSpacing);
  EXPECT_EQ(spacing.Hold({Update("p", "a"), Update("q", "c")}, {}, t1).size(), 1u);
  EXPECT_EQ(spacing.Hold({Update("p", "a")}, {}, t0 + kUpdateSpacing).size(), 1u);
  EXPECT_FALSE(spacing.held_until().has_value());  // each Hold says anew
}

TEST(UpdateSpacing, APoolWithASliceToCreateIsNeverHeldNorAreItsDeletesSplitOff) {
  UpdateSpacing spacing;
  const TimePoint t0{};
  spacing.Written({Update("p", "a")}, t0);
  const SliceWrite create{SliceWrite::Kind::kCreate, "", "", Slice("", "", "n1", "p")};
  EXPECT_EQ(spacing.Hold({Update("p", "a"), create}, {}, t0 + seconds(1)).size(), 2u);
  // A held pool's delete is held with it: its pool is the published slice's.
  const std::map<std::string, PublishedSlice> published = {
      {"old", {"old", "1", Slice("old", "1", "n1", "p")}}};
  const SliceWrite remove{SliceWrite::Kind::kDelete, "old", "1", nullptr};
  EXPECT_TRUE(spacing.Hold({Update("p", "a"), remove}, published, t0 + seconds(1)).empty());
}

TEST(ServerFields, TheProbeIsTheTruthForItsFieldsAndWritesTeachTheRest) {
  ServerFields fields;
  const TimePoint t0{};
  EXPECT_EQ(fields.Probed({"devices[].taints"}, t0, t0 + kRecheckDropped),
            std::vector<std::string>{"devices[].taints"});
  auto told = fields.ToTell();
  ASSERT_TRUE(told.has_value());
  EXPECT_FALSE(told->device_taints);
  EXPECT_TRUE(told->consumable_capacity);
  EXPECT_FALSE(fields.ToTell().has_value());  // told once
  // A write teaches a field the probe does not carry; said once.
  EXPECT_EQ(fields.Learned({"devices[].x"}, t0), std::vector<std::string>{"devices[].x"});
  EXPECT_TRUE(fields.Learned({"devices[].x"}, t0).empty());
  EXPECT_EQ(fields.Active(t0), (FieldPaths{"devices[].taints", "devices[].x"}));
  // An hour on, the learnt field is written once more (its answer tells again); the
  // probe's field stays until the probe says otherwise.
  EXPECT_EQ(fields.Active(t0 + kRecheckDropped), (FieldPaths{"devices[].taints"}));
  fields.Probed({}, t0 + kRecheckDropped,
                t0 + 2 * kRecheckDropped);  // the gate came on (an upgrade)
  EXPECT_TRUE(fields.Believed().empty());
  told = fields.ToTell();
  ASSERT_TRUE(told.has_value());
  EXPECT_TRUE(told->device_taints);
}

TEST(ServerFields, TheProbeCarriesEveryGatedFieldWeMaySet) {
  const nlohmann::json probe = ProbeSlice("d", "n1");
  const auto& device = probe["spec"]["devices"][0];
  EXPECT_TRUE(device.contains("allowMultipleAllocations"));
  EXPECT_TRUE(device["capacity"]["shares"].contains("requestPolicy"));
  EXPECT_TRUE(device.contains("taints"));
  EXPECT_EQ(probe["spec"]["nodeName"], "n1");
}

TEST(ServerFields, TheProbeIsDueAtOnceThenWhenItsLastAnswerSays) {
  ServerFields fields;
  const TimePoint t0 = TimePoint{} + seconds(100);
  EXPECT_EQ(fields.next_probe(), TimePoint{});  // the first at once
  fields.Probed({"devices[].taints"}, t0, t0 + kRecheckDropped);
  EXPECT_EQ(fields.next_probe(), t0 + kRecheckDropped);
  // A failed probe is tried again sooner, and what is known stays known.
  fields.ProbeFailed(t0 + kRecheckDropped + seconds(60));
  EXPECT_EQ(fields.next_probe(), t0 + kRecheckDropped + seconds(60));
  EXPECT_EQ(fields.Believed(), FieldPaths{"devices[].taints"});
  EXPECT_EQ(fields.Active(t0 + 2 * kRecheckDropped), FieldPaths{"devices[].taints"});
}

TEST(OutageTurns, TheWatchersSecondFailureInARowMakesAChangeJoinTheGrid) {
  OutageTurns turns;
  EXPECT_FALSE(turns.JoinsGrid());
  EXPECT_TRUE(turns.WatcherAnswered(true));  // away: the probe now waits (notify)
  EXPECT_TRUE(turns.server_away());
  EXPECT_FALSE(turns.JoinsGrid());  // one failure may be a blip
  // Still away: nobody to wake (a change held for the quick retry is woken when the
  // asking ends, which follows).
  EXPECT_FALSE(turns.WatcherAnswered(true));
  EXPECT_TRUE(turns.JoinsGrid());
  turns.Joined();
  EXPECT_TRUE(turns.writer_away());  // the writer's retries are the node's probes now
  EXPECT_FALSE(turns.JoinsGrid());   // joined once
  EXPECT_TRUE(turns.WatcherAnswered(false));
  EXPECT_TRUE(turns.server_away());  // the writer still is
}

TEST(OutageTurns, AChangeWaitsForTheQuickRetrysAnswerFiveSecondsAtMost) {
  OutageTurns turns;
  const TimePoint t0 = TimePoint{} + seconds(100);
  EXPECT_TRUE(turns.WatcherAsking(true, t0));
  EXPECT_FALSE(turns.QuickRetryHold(t0).has_value());  // a first request, not a retry
  EXPECT_TRUE(turns.WatcherAsking(false, t0));
  turns.WatcherAnswered(true);
  EXPECT_TRUE(turns.WatcherAsking(true, t0));
  EXPECT_FALSE(turns.WatcherAsking(true, t0 + seconds(1)));  // no change, and no new start
  EXPECT_EQ(turns.QuickRetryHold(t0 + seconds(1)), t0 + kQuickRetryAnswerWait);
  EXPECT_FALSE(turns.QuickRetryHold(t0 + kQuickRetryAnswerWait).has_value());
  EXPECT_TRUE(turns.WatcherAsking(false, t0 + seconds(2)));  // answered
  EXPECT_FALSE(turns.QuickRetryHold(t0 + seconds(2)).has_value());
  // The second failure: the change joins the grid instead of waiting.
  turns.WatcherAnswered(true);
  turns.WatcherAsking(true, t0 + seconds(3));
  EXPECT_FALSE(turns.QuickRetryHold(t0 + seconds(3)).has_value());
  EXPECT_TRUE(turns.JoinsGrid());
}

TEST(OutageTurns, AnAnsweredWriteEndsTheOutageForBothThreads) {
  OutageTurns turns;
  turns.WatcherAnswered(true);
  turns.WatcherAnswered(true);
  turns.Joined();
  turns.BatchStarts();
  EXPECT_TRUE(turns.writing());
  turns.BatchEnded(/*answered=*/true, std::nullopt);
  EXPECT_FALSE(turns.writing());
  EXPECT_FALSE(turns.writer_away());
  EXPECT_FALSE(turns.server_away());
  EXPECT_FALSE(turns.JoinsGrid());  // the watcher's count started over
  EXPECT_EQ(turns.writer_answers(), 1u);
}

TEST(OutageTurns, AFailedWriteMakesTheWriterAwayOnlyForAServerThatIsAway) {
  struct Case {
    kube::FailedAnswer failed;
    bool away;
  };
  for (const Case& c : {Case{{503, 0}, true}, Case{{0, 0}, true}, Case{{429, 0}, true},
                        Case{{503, 7}, false},  // throttled: its Retry-After, the watcher goes on
                        Case{{429, 7}, false}, Case{{403, 0}, false}, Case{{422, 0}, false}}) {
    for (const bool was_away : {false, true}) {  // a failure decides afresh either way
      OutageTurns turns;
      if (was_away) turns.Joined();
      turns.BatchStarts();
      turns.BatchEnded(false, c.failed);
      EXPECT_EQ(turns.writer_away(), c.away)
          << c.failed.code << " " << c.failed.retry_after_seconds << " was away: " << was_away;
      EXPECT_FALSE(turns.writing());
      EXPECT_EQ(turns.writer_answers(), 0u);
    }
  }
}

TEST(OutageTurns, NothingLeftToWriteEndsTheWritersProbing) {
  OutageTurns turns;
  EXPECT_FALSE(turns.NothingToWrite());  // nobody waits on it
  turns.WatcherAnswered(true);
  turns.WatcherAnswered(true);
  turns.Joined();
  EXPECT_TRUE(turns.NothingToWrite());  // the watcher's turn
  EXPECT_FALSE(turns.writer_away());
  EXPECT_TRUE(turns.server_away());  // the watcher's own failures still count
  // A round that sent nothing decides nothing about the writer.
  turns.Joined();
  turns.BatchEnded(false, std::nullopt);
  EXPECT_TRUE(turns.writer_away());
  EXPECT_EQ(turns.writer_answers(), 0u);
}

TEST(CellRateLimiter, TheBurstAtOnceThenOnePerInterval) {
  rate::CellRateLimiter limiter(3, seconds(1));
  const TimePoint t0 = TimePoint{} + seconds(100);
  std::vector<long> waits;
  TimePoint now = t0;
  for (int i = 0; i < 5; ++i) {
    const TimePoint at = limiter.Take(now);
    waits.push_back(static_cast<long>(std::chrono::duration_cast<milliseconds>(at - now).count()));
  }
  EXPECT_EQ(waits, (std::vector<long>{0, 0, 0, 1000, 2000}));  // taken without waiting
  now = t0 + seconds(10);  // a quiet while earns the burst back, no more
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.Take(now), now);
  EXPECT_EQ(limiter.Take(now), now + seconds(1));
}

TEST(CellRateLimiter, AReserveLeavesPartOfTheBurstToOthers) {
  rate::CellRateLimiter limiter(4, seconds(1));
  const TimePoint now = TimePoint{} + seconds(100);
  // The low-priority caller leaves 2 of the 4: it gets 2 at once, then one a second.
  EXPECT_EQ(limiter.Take(now, 2), now);
  EXPECT_EQ(limiter.Take(now, 2), now);
  EXPECT_EQ(limiter.Take(now, 2), now + seconds(1));
  // The others still find one at once (the low caller's third holds the next second
  // already), then the one rate.
  EXPECT_EQ(limiter.Take(now), now);
  EXPECT_EQ(limiter.Take(now), now + seconds(1));
}

}  // namespace
}  // namespace rdmadp::dra
