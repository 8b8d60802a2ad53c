// The ResourceSlice publisher end to end against the fake kube-apiserver (real TLS, bearer
// token, schema-checked writes, each release's validation): first publish, quiet while
// nothing changes, the kubelet's wipe, token rotation, 401, bookmarks, what each release
// keeps of a slice. Counts are exact; waits are on the server's state
// (FakeApiServer::Await), never on a clock. The rules in time (retry grids, Retry-After,
// outages, 409/410, a half-open watch, the write budget) run on a clock the test holds:
// test/unit/publisher_fake_time_test.cpp.
#include "pkg/dra/slices/slice_publisher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <mutex>

#include "pkg/dra/slices/resource_slices.h"
#include "pkg/text/cat.h"
#include "test/support/fake_apiserver.h"
#include "test/support/wanted_pool.h"

namespace rdmadp::dra {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;

using testing::Wanted;

// A publisher for node n1 of driver rdma.example.com against `api`; problems and info lines
// go to the callbacks.
std::unique_ptr<SlicePublisher> StartPublisher(FakeApiServer& api,
                                               std::function<void(std::string)> on_problem,
                                               std::function<void(std::string)> on_info) {
  PublisherOptions o;
  o.api = {api.server(), api.ca_file(), api.token_file(), "publisher-test"};
  o.driver = "rdma.example.com";
  o.node_name = "n1";
  o.on_problem = std::move(on_problem);
  o.on_info = std::move(on_info);
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

class Publisher : public ::testing::Test {
 protected:
  std::unique_ptr<SlicePublisher> Start() {
    return StartPublisher(
        api_,
        [this](std::string p) {
          std::lock_guard lock(mu_);
          problems_.push_back(std::move(p));
        },
        nullptr);
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

}  // namespace
}  // namespace rdmadp::dra
