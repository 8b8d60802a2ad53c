// The ResourceSlice publisher against the fake kube-apiserver (real TLS, bearer token,
// schema-checked writes): first publish, quiet while nothing changes, the kubelet's wipe,
// token rotation, 401, 409, 410, dropped watches, an API server that goes away. Counts are
// exact; waits are on the server's state (FakeApiServer::Await), never on a clock.
#include "pkg/dra/slices/slice_publisher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "pkg/dra/slices/resource_slices.h"
#include "pkg/text/cat.h"
#include "test/support/fake_apiserver.h"
#include "test/support/hca_fixture.h"
#include "test/support/scaled_clock.h"

namespace rdmadp::dra {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;

// `n` HCAs in pool "a" (64 a slice), the first `down` of them with their port down.
WantedPool Wanted(int n, const std::string& resource = "a", int down = 0) {
  pool::PoolModel p;
  p.resource.resource_name = resource;
  p.resource.rdma_hca_max = 16;
  for (int i = 0; i < n; ++i) {
    char address[32];
    std::snprintf(address, sizeof address, "0000:%02x:%02x.0", i / 32 + 1, i % 32);
    p.hcas.push_back(testing::ConnectXHca(address, 0, /*healthy=*/i >= down));
  }
  SliceContext ctx;
  ctx.driver = "rdma.example.com";
  ctx.node_name = "n1";
  return {PoolName(ctx, p.resource), RenderResourceSlices(p, ctx)};
}

// A publisher for node n1 of driver rdma.example.com against `api`; problems and info lines
// go to the callbacks.
std::unique_ptr<SlicePublisher> StartPublisher(FakeApiServer& api,
                                               std::function<void(std::string)> on_problem,
                                               std::function<void(std::string)> on_info,
                                               std::chrono::seconds watch_idle = 90s,
                                               kube::RetrySchedule::Jitter jitter = nullptr,
                                               const kube::ThreadClock* clock = nullptr) {
  PublisherOptions o;
  o.api = {api.server(), api.ca_file(), api.token_file(), "publisher-test", watch_idle};
  o.driver = "rdma.example.com";
  o.node_name = "n1";
  o.on_problem = std::move(on_problem);
  o.on_info = std::move(on_info);
  if (jitter) o.phase = [](std::chrono::milliseconds) { return std::chrono::milliseconds(0); };
  o.jitter = std::move(jitter);
  o.clock = clock;
  auto p = SlicePublisher::Start(o);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? std::move(*p) : nullptr;
}

// Nothing more is written within `window` (an exact count, checked after a quiet period).
void ExpectQuietOn(FakeApiServer& api, int writes, std::chrono::milliseconds window = 1500ms) {
  auto r = api.Await("stats.writes > " + std::to_string(writes), window);
  EXPECT_FALSE(r["ok"].get<bool>()) << r["stats"].dump();
  EXPECT_EQ(r["stats"]["writes"], writes);
  EXPECT_THAT(r["stats"]["invalid"], ::testing::IsEmpty());
  EXPECT_THAT(r["stats"]["unknownFields"], ::testing::IsEmpty())
      << "we sent a field the type lacks";
}

// One request as the server saw it: when it arrived (ms, the server's clock), its method
// and URL, and the code it was answered.
struct Seen {
  double t = 0;
  std::string method, url;
  long code = 0;
};

// The server's record of the requests whose method is `method` and URL contains `match`.
std::vector<Seen> Requests(FakeApiServer& api, const std::string& method,
                           const std::string& match) {
  std::vector<Seen> out;
  const nlohmann::json log = api.Admin("/requests");  // kept: the loop reads into it
  for (const auto& r : log["requests"]) {
    const std::string url = r["url"];
    if (r["method"] != method || url.find(match) == std::string::npos) continue;
    out.push_back({r["t"].get<double>(), r["method"], url, r["code"].get<long>()});
  }
  return out;
}

// Rescans every `period` with an unchanged wish, as a node with periodicUpdateInterval: 1
// does, until destroyed: the load under which a wait must hold (docs/reliability.md, "Retries
// on the server's terms").
class Rescans {
 public:
  Rescans(SlicePublisher& p, std::vector<WantedPool> wish, std::chrono::milliseconds period)
      : thread_([&p, wish = std::move(wish), period, this] {
          std::unique_lock lock(mu_);
          while (!stop_) {
            p.Publish(wish);
            cv_.wait_for(lock, period, [this] { return stop_; });  // the load's own pace
          }
        }) {}
  ~Rescans() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

class Publisher : public ::testing::Test {
 protected:
  // `exact`: every retry waits the upper end of its step (no jitter) and the grid of a
  // server that is away has phase 0, so request times are exact multiples the test can
  // assert (a Retry-After's spread stays random).
  std::unique_ptr<SlicePublisher> Start(bool exact = false) {
    return StartPublisher(
        api_,
        [this](std::string p) {
          std::lock_guard lock(mu_);
          problems_.push_back(std::move(p));
        },
        nullptr, 90s,
        exact ? kube::RetrySchedule::Jitter([](std::chrono::milliseconds d) { return d; })
              : nullptr);
  }
  void ExpectQuiet(int writes, std::chrono::milliseconds window = 1500ms) {
    ExpectQuietOn(api_, writes, window);
  }
  std::vector<std::string> Problems() {
    std::lock_guard lock(mu_);
    return problems_;
  }

  FakeApiServer api_;
  std::mutex mu_;
  std::vector<std::string> problems_;
};

TEST_F(Publisher, FirstPublishThenNoWritesWhileNothingChanges) {
  auto p = Start();
  p->Publish({Wanted(130)});  // 3 slices
  auto r = api_.Await("slices.length === 3 && stats.creates === 3");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  for (const auto& s : r["slices"]) {
    EXPECT_EQ(s["spec"]["pool"]["generation"], 1);
    EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], 3);
  }
  p->Publish({Wanted(130)});  // the same wish again: nothing to write
  ExpectQuiet(3);
  EXPECT_EQ(r["stats"]["lists"], 1);
  EXPECT_THAT(Problems(), ::testing::IsEmpty());
}

// Slices carried no owner, so a deleted node's slices were never collected (autoscaling).
// Each slice created is owned by the Node object, as the upstream helper does.
TEST_F(Publisher, SlicesAreOwnedByTheirNode) {
  auto p = Start();
  p->Publish({Wanted(1)});
  auto r = api_.Await("slices.length === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const auto& owners = r["slices"][0]["metadata"]["ownerReferences"];
  ASSERT_EQ(owners.size(), 1u) << r["slices"][0]["metadata"].dump();
  EXPECT_EQ(owners[0]["kind"], "Node");
  EXPECT_EQ(owners[0]["name"], "n1");
  EXPECT_EQ(owners[0]["uid"], "c82561ec215a6e31807ceedf3b3bd25e");  // the fake's uid of n1
  EXPECT_EQ(owners[0]["controller"], true);
}

TEST_F(Publisher, AChangeBumpsTheGenerationInPlace) {
  auto p = Start();
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1")["ok"].get<bool>());
  const std::string name = api_.Slices()[0]["metadata"]["name"];
  p->Publish({Wanted(2)});
  auto r = api_.Await("stats.updates === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  ASSERT_EQ(r["slices"].size(), 1u);
  EXPECT_EQ(r["slices"][0]["metadata"]["name"], name);
  EXPECT_EQ(r["slices"][0]["spec"]["pool"]["generation"], 2);
  EXPECT_EQ(r["slices"][0]["spec"]["devices"].size(), 2u);
  p->Publish({});  // the pool is gone: its slice goes too
  ASSERT_TRUE(api_.Await("slices.length === 0")["ok"].get<bool>());
  ExpectQuiet(3);
}

// A flapping port: the first change goes out at once; the changes within kUpdateSpacing of
// it wait, and go out as one update carrying the latest wish (fleet_bench's flap wave: 500
// flapping nodes would otherwise update a slice every 2 s each).
TEST_F(Publisher, AFlappingPoolIsUpdatedAtMostOncePerSpacing) {
  auto p = Start();
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("stats.creates === 1")["ok"].get<bool>());
  p->Publish({Wanted(2)});
  ASSERT_TRUE(api_.Await("stats.updates === 1")["ok"].get<bool>());
  p->Publish({Wanted(3)});  // down, up, down again: only the last is written
  p->Publish({Wanted(1)});
  p->Publish({Wanted(3)});
  auto r = api_.Await("stats.updates === 2", 30s);
  ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  ASSERT_EQ(r["slices"].size(), 1u);
  EXPECT_EQ(r["slices"][0]["spec"]["devices"].size(), 3u);
  EXPECT_EQ(r["slices"][0]["spec"]["pool"]["generation"], 3);
  const auto puts = Requests(api_, "PUT", "/resourceslices/");
  ASSERT_EQ(puts.size(), 2u);
  // As the server saw them: the second no sooner than kUpdateSpacing after the first.
  EXPECT_GE(puts[1].t - puts[0].t, 10000.0);
  // A wipe meanwhile is no update: its repair never waits.
  p->Publish({Wanted(2)});
  // Held: without the spacing the update lands within milliseconds.
  EXPECT_FALSE(api_.Await("stats.updates > 2", 1500ms)["ok"].get<bool>());
  EXPECT_EQ(api_.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}})["deleted"], 1);
  r = api_.Await("slices.length === 1 && stats.creates === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  EXPECT_EQ(r["slices"][0]["spec"]["devices"].size(), 2u);  // the latest wish, created
  EXPECT_EQ(r["stats"]["updates"], 2);
  ExpectQuiet(4);
}

TEST_F(Publisher, AWipedNodeIsRepublishedAtOnce) {
  auto p = Start();
  p->Publish({Wanted(3), Wanted(2, "b")});
  ASSERT_TRUE(api_.Await("slices.length === 2")["ok"].get<bool>());
  const auto started = std::chrono::steady_clock::now();
  // What the kubelet does at every start: delete-collection of the node's slices.
  EXPECT_EQ(api_.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}})["deleted"], 2);
  auto r = api_.Await("slices.length === 2 && stats.creates === 4");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  std::printf("[measured] wipe -> slices back: %.1f ms\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                  .count());
  for (const auto& s : r["slices"]) EXPECT_EQ(s["spec"]["pool"]["generation"], 1);
  ExpectQuiet(4);
  EXPECT_EQ(r["stats"]["lists"], 1) << "the watch saw the deletions; no relist";
}

// The kubelet's wipe can reach the publisher's watch before the answer to its own create
// does (found by dra_bench: 1 run in 2 lost a slice for good). The late answer must not
// bring back a slice the watch already saw deleted.
TEST_F(Publisher, AWipeSeenBeforeTheCreatesAnswerStillRepublishes) {
  api_.Admin("/hold");  // answers to writes wait; the writes and their events do not
  auto p = Start();
  p->Publish({Wanted(3)});
  ASSERT_TRUE(api_.Await("slices.length === 1 && stats.held === 1")["ok"].get<bool>());
  EXPECT_EQ(api_.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}})["deleted"], 1);
  ASSERT_TRUE(api_.Await("stats.deletes === 0 && slices.length === 0")["ok"].get<bool>());
  api_.Admin("/release");  // now the first create's answer arrives, after the DELETED event
  auto r = api_.Await("slices.length === 1 && stats.creates === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  ExpectQuiet(2);
}

TEST_F(Publisher, ARotatedTokenFileIsReadBeforeTheNextRequest) {
  auto p = Start();
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1")["ok"].get<bool>());
  api_.RotateToken("rotated-token-1");
  api_.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}});
  auto r = api_.Await("slices.length === 1 && stats.creates === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["stats"]["unauthorized"], 0);
}

TEST_F(Publisher, A401IsRetriedWithTheTokenReReadAndBacksOffUntilItWorks) {
  auto p = Start();
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1")["ok"].get<bool>());
  api_.Admin("/token", {{"token", "server-moved-first"}});  // the file still has the old one
  api_.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}});
  // One create: 401, re-read (same token), 401 again; then the writer backs off.
  ASSERT_TRUE(api_.Await("stats.unauthorized === 2")["ok"].get<bool>());
  api_.RotateToken("server-moved-first");
  auto r = api_.Await("slices.length === 1 && stats.creates === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["stats"]["unauthorized"], 2);
  EXPECT_THAT(Problems(), ::testing::Contains(::testing::HasSubstr("HTTP 401")));
}

TEST_F(Publisher, A409RelistsAndTheUpdateThenLands) {
  auto p = Start();
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1")["ok"].get<bool>());
  api_.Admin("/fault", {{"method", "PUT"}, {"match", "resourceslices"}, {"code", 409}});
  p->Publish({Wanted(2)});
  auto r = api_.Await("stats.updates === 1 && stats.lists === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["slices"][0]["spec"]["devices"].size(), 2u);
  ExpectQuiet(2);
}

TEST_F(Publisher, AWatchFromACompactedVersionRelists) {
  auto p = Start();
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1 && stats.watchesOpened === 1")["ok"].get<bool>());
  api_.Admin("/compact");
  api_.Admin("/drop-watches");
  auto r = api_.Await("stats.lists === 2 && stats.watchesOpen === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  ExpectQuiet(1);
}

TEST_F(Publisher, ChangesMadeWhileTheApiServerIsDownLandWhenItIsBack) {
  auto p = Start();
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1")["ok"].get<bool>());
  api_.Admin("/down");
  p->Publish({Wanted(3)});
  api_.Admin("/up");
  auto r = api_.Await("stats.updates === 1", 60s);
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["slices"][0]["spec"]["devices"].size(), 3u);
  ExpectQuiet(2);
}

TEST_F(Publisher, AWatchResumesFromTheLatestBookmark) {
  auto p = Start();
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1 && stats.watchesOpen === 1")["ok"].get<bool>());
  const int rv = api_.Admin("/tick")["rv"].get<int>();
  api_.Admin("/bookmark");
  // The bookmark is the last line on the stream; dropping the stream after it means the
  // publisher read it only if the re-watch starts from its version.
  ASSERT_TRUE(api_.Await("stats.watchesOpen === 1")["ok"].get<bool>());
  api_.Admin("/drop-watches");
  auto r = api_.Await("stats.watchesOpened === 2 && stats.watchesOpen === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["stats"]["lastWatchFrom"], rv);
  EXPECT_EQ(r["stats"]["lists"], 1);
  ExpectQuiet(1);
}

TEST_F(Publisher, A429WaitsForRetryAfterThenWrites) {
  auto p = Start();
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1")["ok"].get<bool>());
  api_.Admin("/fault", {{"method", "POST"}, {"match", "resourceslices"}, {"code", 429}});
  api_.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}});
  auto r = api_.Await("slices.length === 1 && stats.creates === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
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
  ASSERT_TRUE(api_.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  api_.Admin("/fault",
             {{"method", "PUT"}, {"match", "resourceslices"}, {"code", 429}, {"retryAfter", 3}});
  {
    Rescans rescans(*p, {Wanted(2)}, 100ms);
    ASSERT_TRUE(api_.Await("stats.faultsServed === 1")["ok"].get<bool>());
    api_.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}});
    auto r = api_.Await("slices.length === 1 && stats.creates === 2", 20s);
    ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  }
  const auto puts = Requests(api_, "PUT", "resourceslices");
  ASSERT_EQ(puts.size(), 1u);
  EXPECT_EQ(puts[0].code, 429);
  auto creates = Requests(api_, "POST", "/resourceslices");
  creates.erase(
      std::remove_if(creates.begin(), creates.end(),
                     [](const Seen& s) { return s.url.find("dryRun") != std::string::npos; }),
      creates.end());
  ASSERT_EQ(creates.size(), 2u);
  EXPECT_GE(creates[1].t - puts[0].t, 3000) << "sent before the server's Retry-After";
  std::printf("[measured] 429 Retry-After 3 s -> next write %.0f ms later\n",
              creates[1].t - puts[0].t);
  ExpectQuiet(2);  // the first create and the wipe's repair (the refused update stored nothing)
}

// After four 500s in a row the gaps were 0.78, 0.22, 1.0, 1.0 s (docs/reliability.md,
// "Retries on the server's terms"). A change that waits is retried on its series' grid
// (here at phase 0: every 9.5 s), whatever the rescans wish meanwhile.
TEST_F(Publisher, FiveHundredsBackOffAndNoWishShortensTheWait) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  api_.Admin("/fault",
             {{"method", "PUT"}, {"match", "resourceslices"}, {"code", 500}, {"count", 2}});
  {
    Rescans rescans(*p, {Wanted(2)}, 100ms);
    auto r = api_.Await("stats.updates === 1", 30s);
    ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  }
  const auto puts = Requests(api_, "PUT", "resourceslices");
  ASSERT_EQ(puts.size(), 3u);
  // The grid counts from the first failure's answer, so each retry comes at least a whole
  // number of periods after the first PUT (gaps between two retries vary with latency).
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(puts[i].code, 500);
    const double grid = 9500.0 * (i + 1);
    EXPECT_GE(puts[i + 1].t - puts[0].t, grid) << "retry " << i;
    std::printf("[measured] retry %d after the first 500: %.0f ms (grid %.0f)\n", i,
                puts[i + 1].t - puts[0].t, grid);
  }
  EXPECT_EQ(puts[2].code, 200);
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
  ASSERT_TRUE(api_.Await("slices.length === 1 && stats.watchesOpen === 1")["ok"].get<bool>());
  ExpectQuiet(1);  // the watch has lasted past kShortWatch: its end is a healthy one
  // The request log's times count from its own t0, the admin answers' from the mark.
  const double from = api_.Admin("/outage", {{"on", true}})["at"].get<double>() +
                      api_.Admin("/requests")["t0"].get<double>();
  // The watch's re-open finds the server gone before the change is made. (Made at once, the
  // write's 503 could come first, under load: the watcher then defers and sends nothing,
  // also right, but another scenario.)
  ASSERT_TRUE(api_.Await("stats.refused === 1")["ok"].get<bool>());
  p->Publish({Wanted(2)});
  // The outage's length is the scenario (two grid points' worth), not a synchronisation.
  ASSERT_TRUE(api_.Await("false", 12s).is_object());
  api_.Admin("/outage", {{"on", false}});
  auto r = api_.Await("stats.updates === 1", 15s);
  ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  const auto puts = Requests(api_, "PUT", "resourceslices");
  ASSERT_EQ(puts.size(), 3u);
  EXPECT_EQ(puts[0].code, 503);
  EXPECT_EQ(puts[1].code, 503);
  EXPECT_EQ(puts[2].code, 200);
  EXPECT_GE(puts[1].t - puts[0].t, 9500) << "the grid counts from the first answer";
  EXPECT_GE(puts[2].t - puts[0].t, 19000);
  int watches_before_the_write_worked = 0;
  for (const Seen& w : Requests(api_, "GET", "watch=true")) {
    if (w.t >= from && w.t < puts[2].t) ++watches_before_the_write_worked;
  }
  EXPECT_EQ(watches_before_the_write_worked, 1) << "the re-open that found the server gone";
  const auto lists = Requests(api_, "GET", "resourceslices?fieldSelector");
  EXPECT_EQ(lists.size(), 1u) << "no relist: the watch resumes from its resourceVersion";
  // The watch resumes at the watcher's own grid point: 30 s after its first failure.
  r = api_.Await("stats.watchesOpen === 1", 40s);
  ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  const auto watches = Requests(api_, "GET", "watch=true");
  EXPECT_GE(watches.back().t - from, 30000);
  EXPECT_EQ(watches.back().code, 200);
  // Nothing but the outage's 503s was refused: no 4xx the test did not inject.
  const nlohmann::json log = api_.Admin("/requests");  // kept: the loop reads into it
  for (const auto& req : log["requests"]) {
    const long code = req["code"].get<long>();
    EXPECT_TRUE(code < 400 || code == 503) << req.dump();
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
  ASSERT_TRUE(api_.Await("slices.length === 1 && stats.watchesOpen === 1")["ok"].get<bool>());
  ExpectQuiet(1);  // the watch has lasted past kShortWatch
  // The dropped watch is a healthy end: its re-open, at once, is the first failure (503);
  // the quick retry after it is held, and answered 503 at the release.
  api_.Admin("/fault", {{"method", "GET"}, {"match", "watch=true"}, {"code", 503}});
  api_.Admin("/fault", {{"method", "GET"}, {"match", "watch=true"}, {"code", 503}, {"hold", true}});
  const double t0 = api_.Admin("/requests")["t0"].get<double>();
  const double dropped = api_.Admin("/stats")["at"].get<double>() + t0;
  api_.Admin("/drop-watches");
  ASSERT_TRUE(api_.Await("stats.held === 1 && stats.faultsServed === 2", 10s)["ok"].get<bool>());
  p->Publish({Wanted(2)});
  ExpectQuiet(1);  // no write while the quick retry's answer is out
  const double released = api_.Admin("/stats")["at"].get<double>() + t0;
  api_.Admin("/release");
  auto r = api_.Await("stats.updates === 1", 15s);
  ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  const auto puts = Requests(api_, "PUT", "resourceslices");
  ASSERT_EQ(puts.size(), 1u);
  EXPECT_EQ(puts[0].code, 200);
  EXPECT_GE(puts[0].t - released, 9500) << "joined the grid: a whole period after the answer";
  int watches = 0;  // from the drop to the write: the re-open and the held quick retry
  for (const Seen& w : Requests(api_, "GET", "watch=true")) {
    if (w.t >= dropped && w.t < puts[0].t) {
      ++watches;
      EXPECT_EQ(w.code, 503);
    }
  }
  EXPECT_EQ(watches, 2);
  EXPECT_EQ(Requests(api_, "GET", "resourceslices?fieldSelector").size(), 1u) << "no relist";
}

// A quick retry the server never answers (it accepted the connection and went silent)
// holds a change kQuickRetryAnswerWait at most, not for the watch's 90 s idle limit.
TEST_F(Publisher, AChangeWaitsForAnUnansweredQuickRetryFiveSecondsAtMost) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("slices.length === 1 && stats.watchesOpen === 1")["ok"].get<bool>());
  ExpectQuiet(1);
  api_.Admin("/fault", {{"method", "GET"}, {"match", "watch=true"}, {"code", 503}});
  api_.Admin("/fault", {{"method", "GET"}, {"match", "watch=true"}, {"code", 503}, {"hold", true}});
  api_.Admin("/drop-watches");
  ASSERT_TRUE(api_.Await("stats.held === 1 && stats.faultsServed === 2", 10s)["ok"].get<bool>());
  p->Publish({Wanted(2)});
  auto r = api_.Await("stats.updates === 1", 15s);
  ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  const auto puts = Requests(api_, "PUT", "resourceslices");
  const auto watches = Requests(api_, "GET", "watch=true");
  ASSERT_EQ(puts.size(), 1u);
  ASSERT_GE(watches.size(), 3u);  // the first, the re-open, the held quick retry
  // Sent kQuickRetryAnswerWait after the quick retry was (the log has arrivals: a few ms).
  EXPECT_GE(puts[0].t - watches[2].t, 4900);
  EXPECT_EQ(puts[0].code, 200);
  api_.Admin("/release");
}

// A Retry-After of 68 years waits the documented cap (kube::kMaxRetryAfter), not 68 years
// and not less: the cap itself is in backoff_test (Schedule.AHugeRetryAfterWaitsTheDocumentedCap);
// here, nothing is sent while it lasts, whatever is wished.
TEST_F(Publisher, AHugeRetryAfterHoldsEveryWrite) {
  auto p = Start();
  ASSERT_TRUE(api_.Await("stats.dryRuns === 1")["ok"].get<bool>());  // the probe is done
  api_.Admin(
      "/fault",
      {{"method", "POST"}, {"match", "resourceslices"}, {"code", 429}, {"retryAfter", 2147483647}});
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("stats.faultsServed === 1")["ok"].get<bool>());
  p->Publish({Wanted(2)});
  ExpectQuiet(0, 3000ms);
}

// A wish the caller made before it heard of the server's capabilities (it may lack the pools
// whose model depends on them, "auto") was written once the first probe answered, deleting
// their adopted slices after a restart. A wish now carries the capabilities it assumed and is
// written only while they hold (docs/reliability.md, "Capacity and data").
TEST_F(Publisher, AWishMadeForOtherCapabilitiesIsNeverWritten) {
  std::promise<ServerCapabilities> told;
  PublisherOptions o;
  o.api = {api_.server(), api_.ca_file(), api_.token_file(), "publisher-test", 90s};
  o.driver = "rdma.example.com";
  o.node_name = "n1";
  std::once_flag once;
  o.on_capabilities = [&](ServerCapabilities caps) {
    std::call_once(once, [&] { told.set_value(caps); });
  };
  auto p = SlicePublisher::Start(o);
  ASSERT_TRUE(p.ok()) << p.status();
  const ServerCapabilities caps = told.get_future().get();  // the probe answered
  (*p)->Publish({Wanted(1)});  // made before the caller heard: no capabilities assumed
  ExpectQuiet(0);
  ServerCapabilities other = caps;
  other.device_taints = !other.device_taints;
  (*p)->Publish({Wanted(1)}, other);  // made for capabilities the server does not have
  ExpectQuiet(0);
  (*p)->Publish({Wanted(1)}, caps);
  ASSERT_TRUE(api_.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
}

// At eee2a98 a watch refused while lists work (RBAC without "watch") looped at 145-169
// requests a minute, because every successful list started the back-off over. Only a watch
// that works does now: a refused watch backs off on the slow schedule (8 s, 16 s, ...) and
// resumes from where it was: in the 20 s after the first refusal, exactly 2 watches and no
// list (docs/reliability.md, "Capacity and data").
TEST_F(Publisher, AWatchRefusedWhileListsWorkBacksOffOnTheSlowSchedule) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("stats.creates === 1 && stats.watchesOpen === 1")["ok"].get<bool>());
  api_.Admin("/fault",
             {{"method", "GET"}, {"match", "watch=true"}, {"code", 403}, {"count", 1000}});
  api_.Admin("/drop-watches");  // a healthy watch ends; the next one is refused
  ASSERT_TRUE(api_.Await("stats.faultsServed === 1")["ok"].get<bool>());
  const auto refused = Requests(api_, "GET", "watch=true");
  ASSERT_FALSE(refused.empty());
  const double t0 = refused.back().t;
  // The window is the measurement: what the publisher sends in the 20 s after the refusal.
  api_.Await("false", 20s);
  int watches = 0;
  int lists = 0;
  for (const Seen& r : Requests(api_, "GET", "/resourceslices")) {
    if (r.t < t0 || r.t >= t0 + 20000) continue;
    (r.url.find("watch=true") != std::string::npos ? watches : lists)++;
  }
  EXPECT_EQ(watches, 2);
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
// The publisher and the server run ten times as fast (a minute of back-off in six seconds).
void ExpectAWipeRepairedWhileEveryWatchFails(int code) {
  SCOPED_TRACE(Cat("every watch answered ", code));
  FakeApiServer api;
  testing::ScaledClock clock;
  clock.SetRate(10);
  api.Admin("/time-scale", {{"scale", 10}});
  auto p = StartPublisher(
      api, [](const std::string&) {}, nullptr, 90s, [](std::chrono::milliseconds d) { return d; },
      &clock);
  ASSERT_NE(p, nullptr);
  // Every watch fails from the first: a healthy watch ended within kShortWatch would count
  // as a failure too, and whether it did would be the machine's timing.
  api.Admin("/fault",
            {{"method", "GET"}, {"match", "watch=true"}, {"code", code}, {"count", 1000}});
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api.Await("stats.creates === 1")["ok"].get<bool>());
  EXPECT_EQ(api.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}})["deleted"], 1);
  // Unrepaired before: no list came in 240 s of the publisher's time.
  auto r = api.Await("stats.creates === 2 && slices.length === 1", 60s);
  ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  const double repaired = Requests(api, "POST", "/resourceslices").back().t;
  // The first list, that many failed watches, the second list; the create after it. (The
  // watch that follows the second list races the create: it is not counted.)
  int watches = 0;
  int lists = 0;
  double second_list = 0;
  for (const Seen& s : Requests(api, "GET", "/resourceslices")) {
    if (s.t > repaired) continue;  // a slow machine's later requests are not this repair's
    if (s.url.find("watch=true") == std::string::npos) {
      if (++lists == 2) second_list = s.t;
    } else if (lists < 2) {
      ++watches;
    }
  }
  EXPECT_EQ(watches, kRelistAfterFailedWatches);
  EXPECT_EQ(lists, 2);
  EXPECT_GE(repaired, second_list);
}

TEST(PublisherWatchFailing, AWatchRefusedForEverStillRepairsAWipe) {
  ExpectAWipeRepairedWhileEveryWatchFails(403);
}

TEST(PublisherWatchFailing, AWatchFailingWith500StillRepairsAWipe) {
  ExpectAWipeRepairedWhileEveryWatchFails(500);
}

// A watch the server ended at once was reopened at once: 427 watch requests in 20 s. A watch
// shorter than a second is a failure (docs/reliability.md, "Crash, hang, flood"): one quick
// retry, then the idle grid (30 s; phase 0 here): in 10 s, exactly the watch that found the
// server ending watches and the quick retry.
TEST_F(Publisher, AWatchTheServerEndsAtOnceBacksOff) {
  auto p = Start(/*exact=*/true);
  p->Publish({Wanted(1)});
  ASSERT_TRUE(api_.Await("stats.creates === 1")["ok"].get<bool>());
  ExpectQuiet(1);  // and the open watch has lasted past kShortWatch: a healthy end next
  const size_t before = Requests(api_, "GET", "watch=true").size();
  api_.Admin("/short-watches", {{"on", true}});  // ends the open watch too
  // The window is the measurement itself: how many watches the publisher asks for in 10 s.
  api_.Await("false", 10s);
  EXPECT_EQ(Requests(api_, "GET", "watch=true").size() - before, 2u)
      << "the re-open after the healthy end, and one quick retry";
  EXPECT_THAT(Problems(),
              ::testing::Contains(::testing::HasSubstr("ends every ResourceSlice watch")));
  // Watches last again. The node is idle (no event for a minute): the open watch alone must
  // clear the problem, or /readyz would say "cannot reach the API server" while all works
  // (found under ASan, whose slowness took this path in Dra.ReadyzAndMetricsCoverTheDriver).
  api_.Admin("/short-watches", {{"on", false}});
  const auto deadline = std::chrono::steady_clock::now() + 40s;
  while (!p->stats().problem.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);  // polling the publisher's own state
  }
  EXPECT_EQ(p->stats().problem, "");
}

// The API server's decoder drops a field its release does not know, with only a warning
// (fieldValidation's default, Warn). Like a disabled gate's field, that is a fact about the
// server, not a difference to fix: one write, the field learned, no rewrite (docs/dra.md,
// "Using it").
TEST_F(Publisher, AFieldTheServerDoesNotKnowIsLearnedNotRewritten) {
  std::vector<std::string> infos;
  std::mutex mu;
  auto p = StartPublisher(api_, nullptr, [&](std::string line) {
    std::lock_guard lock(mu);
    infos.push_back(std::move(line));
  });
  WantedPool pool = Wanted(3);
  for (auto& d : pool.slices[0]["spec"]["devices"]) d["futureField"] = "x";  // a later release's
  p->Publish({pool});
  auto r = api_.Await("stats.creates === 1 && slices.length === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  auto quiet = api_.Await("stats.writes > 1", 2s);
  EXPECT_FALSE(quiet["ok"].get<bool>()) << quiet["stats"].dump();
  EXPECT_EQ(quiet["stats"]["writes"], 1);
  EXPECT_EQ(quiet["stats"]["unknownFields"].size(), 3u) << quiet["stats"].dump();
  EXPECT_EQ(quiet["stats"]["unknownFields"]["/spec/devices/0/futureField"], 1);
  p->Publish({pool});  // the same wish again: still nothing to write
  auto again = api_.Await("stats.writes > 1", 1500ms);
  EXPECT_FALSE(again["ok"].get<bool>()) << again["stats"].dump();
  EXPECT_THAT(again["stats"]["invalid"], ::testing::IsEmpty());
  std::lock_guard lock(mu);
  EXPECT_THAT(infos, ::testing::Contains(::testing::HasSubstr(
                         "does not keep ResourceSlice field spec.devices[].futureField")));
}

// A half-open watch (the peer vanished without a FIN or RST, or answers keepalives with a
// reset) hid a wipe for 57 s and 614 s. A watch that carries nothing, not even a bookmark,
// for the idle limit is dead: the publisher relists and puts back what the wipe took
// (docs/reliability.md, "Capacity and data"). Bookmarks every 500 ms and a 2 s limit scale
// the real 1 min and 90 s.
TEST(PublisherHalfOpen, AWatchThatGoesSilentIsDroppedAndTheWipeRepublished) {
  FakeApiServer api(/*bookmark_ms=*/500);
  auto p = StartPublisher(api, nullptr, nullptr, /*watch_idle=*/2s);
  p->Publish({Wanted(3)});
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ExpectQuietOn(api, 1, 3s);  // bookmarks keep a healthy idle watch alive past the limit
  EXPECT_EQ(api.Stats()["lists"], 1);
  api.Admin("/black-hole-watches", {{"on", true}});
  EXPECT_EQ(api.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}})["deleted"], 1);
  api.Admin("/black-hole-watches", {{"on", false}});  // the next connection works
  auto r = api.Await("slices.length === 1 && stats.creates === 2", 15s);
  ASSERT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
  ExpectQuietOn(api, 2);
  EXPECT_EQ(api.Stats()["lists"], 1)
      << "no relist: the next watch resumes from the dead one's resourceVersion, and the "
         "server replays the wipe";
}

// Per release at its default gates: the server drops the fields of a disabled gate (1.34,
// 1.35: allowMultipleAllocations, requestPolicy, taints), and the publisher used to rewrite
// the pool for them 500-800 times a second. Exactly one write per real change on every
// release, and nothing in between (docs/dra.md, "The ceiling on API writes").
class PublisherOnRelease : public ::testing::TestWithParam<const char*> {
 protected:
  std::unique_ptr<SlicePublisher> Start() {
    return StartPublisher(api_, nullptr, [this](std::string line) {
      std::lock_guard lock(mu_);
      infos_.push_back(std::move(line));
    });
  }
  void ExpectQuiet(int writes) { ExpectQuietOn(api_, writes); }
  bool GatesOff() const { return std::string(GetParam()) < "1.36"; }

  FakeApiServer api_{0, GetParam()};
  std::mutex mu_;
  std::vector<std::string> infos_;
};

TEST_P(PublisherOnRelease, DroppedFieldsNeverLoopAndTaintsComeOff) {
  auto p = Start();
  p->Publish({Wanted(2, "a", /*down=*/1)});  // one slice, one HCA tainted
  // The capability probe (a dry-run create) told the publisher what the server keeps before
  // its first write: where taints are dropped, the down HCA is left out of the slice from
  // the start (nothing else would keep the scheduler off it: docs/dra.md, "What the plugin
  // does about it").
  ASSERT_TRUE(api_.Await("stats.creates === 1")["ok"].get<bool>());
  int writes = 1;
  ExpectQuiet(writes);
  const auto devices = api_.Slices()[0]["spec"]["devices"];
  ASSERT_EQ(devices.size(), GatesOff() ? 1u : 2u) << devices.dump();
  EXPECT_EQ(devices[0].contains("taints"), !GatesOff()) << devices.dump();
  EXPECT_EQ(devices[0].contains("allowMultipleAllocations"), !GatesOff()) << devices.dump();
  const auto stats = p->stats();
  if (GatesOff()) {
    EXPECT_EQ(stats.dropped_fields,
              (FieldPaths{"devices[].allowMultipleAllocations",
                          "devices[].capacity.shares.requestPolicy", "devices[].taints"}));
    std::lock_guard lock(mu_);
    ASSERT_EQ(infos_.size(), 3u);
    EXPECT_THAT(infos_[2], ::testing::HasSubstr("spec.devices[].taints (feature gate "
                                                "DRADeviceTaints is off)"));
  } else {
    EXPECT_TRUE(stats.dropped_fields.empty());
  }
  // The port recovers: one update brings the HCA back (or takes the kept taint off).
  p->Publish({Wanted(2, "a", /*down=*/0)});
  ++writes;
  ASSERT_TRUE(api_.Await("stats.writes === " + std::to_string(writes))["ok"].get<bool>());
  ExpectQuiet(writes);
  ASSERT_EQ(api_.Slices()[0]["spec"]["devices"].size(), 2u);
  EXPECT_FALSE(api_.Slices()[0]["spec"]["devices"][0].contains("taints"));
  // A real change (a third HCA) is one write on every release.
  p->Publish({Wanted(3)});
  ++writes;
  ASSERT_TRUE(api_.Await("stats.writes === " + std::to_string(writes))["ok"].get<bool>());
  ExpectQuiet(writes);
  EXPECT_EQ(api_.Slices()[0]["spec"]["devices"].size(), 3u);
}

// Where the dry-run probe fails (an admission webhook that refuses dry runs, a 500), the
// publisher does not wait for it: the answers to its real writes teach what is dropped,
// one update later.
TEST_P(PublisherOnRelease, AFailedProbeFallsBackToLearningFromAnswers) {
  api_.Admin("/fault", {{"method", "POST"}, {"match", "dryRun"}, {"code", 500}});
  auto p = Start();
  p->Publish({Wanted(2, "a", /*down=*/1)});
  ASSERT_TRUE(api_.Await("stats.creates === 1")["ok"].get<bool>());
  const int writes = GatesOff() ? 2 : 1;  // + the update that leaves the down HCA out
  ASSERT_TRUE(api_.Await("stats.writes === " + std::to_string(writes))["ok"].get<bool>());
  ExpectQuiet(writes);
  EXPECT_EQ(api_.Slices()[0]["spec"]["devices"].size(), GatesOff() ? 1u : 2u);
  EXPECT_EQ(api_.Stats()["dryRuns"], 0);
}

// 128 devices in a slice pass only without taints (1.35+); the first port down was answered
// 422 and left the pool without a slice. 64 a slice, on every release (docs/dra.md, "What
// the plugin does about it").
TEST_P(PublisherOnRelease, APortDownInALargePoolIsOneUpdate) {
  auto p = Start();
  p->Publish({Wanted(200)});  // 4 slices of at most 64
  ASSERT_TRUE(api_.Await("stats.creates === 4")["ok"].get<bool>());
  p->Publish({Wanted(200, "a", /*down=*/1)});
  // The generation moves on in every slice of the pool (one consistent generation): 4
  // updates, carrying the taint or (where taints are dropped) leaving the down HCA out.
  const int writes = 8;
  ASSERT_TRUE(api_.Await("stats.writes === " + std::to_string(writes))["ok"].get<bool>());
  ExpectQuiet(writes);
  size_t published = 0;
  for (const auto& s : api_.Slices()) published += s["spec"]["devices"].size();
  EXPECT_EQ(published, GatesOff() ? 199u : 200u);
}

INSTANTIATE_TEST_SUITE_P(Releases, PublisherOnRelease,
                         ::testing::Values("1.34", "1.35", "1.36", "1.37"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           std::string name = Cat("v", p.param);
                           name.erase(std::remove(name.begin(), name.end(), '.'), name.end());
                           return name;
                         });

// The hard ceiling: whatever the reconciler asks for, writes beyond kWriteBurst wait for the
// budget (one a second). 40 pools at once: 32 at once, then 8 that waited.
TEST_F(Publisher, WritesBeyondTheBurstWaitForTheBudget) {
  auto p = Start();
  std::vector<WantedPool> pools;
  for (int i = 0; i < 40; ++i) pools.push_back(Wanted(1, Cat("r", i)));
  p->Publish(pools);
  ASSERT_TRUE(api_.Await("stats.creates === 40", 30s)["ok"].get<bool>());
  ExpectQuiet(40);
  EXPECT_EQ(p->stats().budget_waits, 9u);  // 40 creates and the capability probe
  EXPECT_EQ((p->stats().writes_by_verb_code.at({"create", 201})), 40u);
}

// List and watch answers of the wrong shape aborted the process (json type_error on the
// watch thread); a list carrying other nodes' or drivers' slices made us delete them. Now
// each bad answer is a problem line, foreign slices are ignored, and publishing goes on
// (docs/reliability.md, "Crash, hang, flood").
TEST_F(Publisher, MalformedAndForeignAnswersAreNeitherCrashesNorDeletes) {
  const std::string list = "resourceslices?fieldSelector";
  api_.Admin("/fault", {{"method", "GET"}, {"match", list}, {"body", "<html>proxy error</html>"}});
  api_.Admin("/fault", {{"method", "GET"}, {"match", list}, {"body", R"({"items": 5})"}});
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
  api_.Admin("/fault", {{"method", "GET"}, {"match", list}, {"body", foreign.dump()}});
  api_.Admin("/fault", {{"method", "GET"},
                        {"match", "watch=true"},
                        {"body",
                         "{\"type\": 5}\n{\"type\": \"ADDED\", \"object\": []}\n"
                         "{\"type\": \"ADDED\", \"object\": {\"metadata\": {\"name\": 3}}}\n"}});
  auto p = Start();
  p->Publish({Wanted(1)});
  // Three lists and a watch fail; the wish waits on them, so each retry is on the grid
  // (kUrgentPeriod): within 4 x 9.5 s.
  auto r = api_.Await("stats.creates === 1", 45s);
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  ExpectQuiet(1);
  EXPECT_EQ(r["stats"]["deletes"], 0) << "foreign slices are never ours to delete";
  EXPECT_EQ(r["stats"]["faultsServed"], 4);
  const auto problems = Problems();
  EXPECT_THAT(problems, ::testing::Contains(::testing::HasSubstr("the answer is not a list")));
}

}  // namespace
}  // namespace rdmadp::dra
