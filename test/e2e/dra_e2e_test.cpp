// The DRA front end end to end: the real plugin binary, a fake node, the kubelet simulator
// with its DRA side (plugin watcher registration, Prepare, the health stream, the wipe at
// kubelet start) and the fake kube-apiserver (TLS, token, schema-checked writes). What a
// cluster sees: slices published once and kept, a registration per kubelet start, Prepare
// answered from the claim's allocation with CDI IDs the reference CDI library resolves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "pkg/config/config.h"
#include "pkg/dra/render/device_classes.h"
#include "pkg/text/cat.h"
#include "test/e2e/dra_fixture.h"

namespace rdmadp::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(Dra, PublishesRegistersAndReportsHealth) {
  auto r = api.Await("slices.length === 1 && stats.creates === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const auto& spec = r["slices"][0]["spec"];
  EXPECT_EQ(spec["driver"], kDriver);
  EXPECT_EQ(spec["pool"]["name"], "n1/hca-ib");
  ASSERT_EQ(spec["devices"].size(), 2u);
  EXPECT_EQ(spec["devices"][0]["name"], "hca-0000-10-00-0");
  EXPECT_EQ(spec["devices"][0]["capacity"]["shares"]["value"], "4");
  ASSERT_TRUE(dra.WaitFor(
      [](const DraKubeletState& s) { return s.registrations == 1 && s.health.size() == 2; }, 20s));
  const DraKubeletState s = dra.State();
  EXPECT_EQ(s.service, "v1.DRAPlugin");
  EXPECT_EQ(s.health.at("n1/hca-ib/hca-0000-10-00-0").health, "Healthy");
  EXPECT_EQ(s.health.at("n1/hca-ib/hca-0000-11-00-0").health, "Healthy");
  // The device-plugin resource is served beside it, through kubelet.sock.
  EXPECT_TRUE(h.kubelet().WaitRegistered({"rdma/hca_roce"}, 1, 20s));
  EXPECT_EQ(h.kubelet().State().resources.count("rdma/hca_ib"), 0u);
  // Nothing is written while nothing changes.
  auto quiet = api.Await("stats.writes > 1", 2s);
  EXPECT_FALSE(quiet["ok"].get<bool>());
  EXPECT_THAT(quiet["stats"]["invalid"], ::testing::IsEmpty());
  EXPECT_EQ(dra.State().registrations, 1);
}

TEST_F(Dra, PrepareAnswersFromTheAllocationStatelessly) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto both = api.Admin("/claims", Claim("both", {"hca-0000-10-00-0", "hca-0000-11-00-0"}));
  const auto other = api.Admin("/claims", Claim("gpu-only", {"gpu-0"}, "gpu.example.com"));
  auto gone = Claim("gone", {"hca-0000-10-00-0"});
  const auto stored_gone = api.Admin("/claims", gone);
  drav1::Claim wrong_uid = KubeletClaim(stored_gone);
  wrong_uid.set_uid("not-the-uid");
  auto resp = dra.Prepare(kDriver, {KubeletClaim(both), KubeletClaim(other), wrong_uid});
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->claims_size(), 3);
  const auto& b = resp->claims().at(both["metadata"]["uid"].get<std::string>());
  EXPECT_EQ(b.error(), "");
  ASSERT_EQ(b.devices_size(), 2);
  EXPECT_EQ(b.devices(0).pool_name(), "n1/hca-ib");
  EXPECT_THAT(b.devices(0).request_names(), ElementsAre("rdma"));
  const std::string both_uid = both["metadata"]["uid"];
  // The request's first device also carries the claim's metadata (docs/dra.md, "Prepare").
  EXPECT_THAT(b.devices(0).cdi_device_ids(),
              ElementsAre("rdma.example.com/hca=hca-0000-10-00-0",
                          Cat("rdma.example.com/metadata=", both_uid, "_rdma")));
  EXPECT_THAT(b.devices(1).cdi_device_ids(), ElementsAre("rdma.example.com/hca=hca-0000-11-00-0"));
  // v1 echoes the allocation's shareID (k8s.io/kubelet v0.35+: Device.share_id).
  EXPECT_EQ(b.devices(0).share_id(), "00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(b.devices(1).share_id(), "00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(resp->claims().at(other["metadata"]["uid"].get<std::string>()).devices_size(), 0);
  EXPECT_THAT(resp->claims().at("not-the-uid").error(), HasSubstr("deleted and re-created"));
  // The CDI spec of every published HCA is on disk.
  for (const char* hca : {"hca-0000-10-00-0", "hca-0000-11-00-0"}) {
    const std::string spec =
        ReadFileOrEmpty(Cat(cdi_dir, "/k8s-rdma-shared-dp_dra_", hca, ".json"));
    EXPECT_THAT(spec, HasSubstr(Cat("\"name\": \"", hca, "\""))) << hca;
    EXPECT_THAT(spec, HasSubstr("\"kind\": \"rdma.example.com/hca\""));
  }
  // The same batch again (a kubelet restart replays it): the same answer.
  auto again = dra.Prepare(kDriver, {KubeletClaim(both)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->claims().at(both["metadata"]["uid"].get<std::string>()).SerializeAsString(),
            b.SerializeAsString());
  auto un = dra.Unprepare(kDriver, {KubeletClaim(both)});
  ASSERT_TRUE(un.ok());
  EXPECT_EQ(un->claims_size(), 1);
  EXPECT_EQ(un->claims().begin()->second.error(), "");
  // Counted per claim: both batches' good claims, the one whose uid no longer matches.
  const std::string driver = Cat("{driver=\"", kDriver, "\"");
  EXPECT_EQ(Sample(Cat("rdma_shared_dp_dra_prepared_claims_total", driver, ",result=\"ok\"}")), 3);
  EXPECT_EQ(Sample(Cat("rdma_shared_dp_dra_prepared_claims_total", driver, ",result=\"error\"}")),
            1);
  EXPECT_EQ(Sample(Cat("rdma_shared_dp_dra_unprepared_claims_total", driver, "}")), 1);
}

// /readyz answered 200 while the DRA driver was unregistered or could not reach the API
// server, and no metric counted Prepare calls or slice writes (docs/dra.md, "Readiness and
// metrics").
TEST_F(Dra, ReadyzAndMetricsCoverTheDriver) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  ASSERT_TRUE(h.kubelet().WaitRegistered({"rdma/hca_roce"}, 1, 20s));
  auto ready = AwaitHttp("/readyz", 200, 10s);
  EXPECT_EQ(ready.first, 200) << ready.second;
  const std::string d = Cat("{driver=\"", kDriver, "\"");
  EXPECT_EQ(Sample(Cat("rdma_shared_dp_dra_registered", d, "}")), 1);
  EXPECT_EQ(
      Sample(Cat("rdma_shared_dp_dra_slice_writes_total", d, ",verb=\"create\",code=\"201\"}")), 1);
  const auto claim = api.Admin("/claims", Claim("one", {"hca-0000-10-00-0"}));
  auto resp = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(Sample(Cat("rdma_shared_dp_dra_prepared_claims_total", d, ",result=\"ok\"}")), 1);
  EXPECT_EQ(Sample(Cat("rdma_shared_dp_dra_prepare_duration_seconds_count", d, "}")), 1);
  // The API server goes away: not ready, saying why; back: ready again.
  api.Admin("/down");
  auto down = AwaitNotReadyBecause("cannot reach the API server", 20s);
  EXPECT_EQ(down.first, 503);
  EXPECT_THAT(down.second, HasSubstr("cannot reach the API server"));
  EXPECT_EQ(Sample(Cat("rdma_shared_dp_dra_api_reachable", d, "}")), 0);
  api.Admin("/up");
  ready = AwaitHttp("/readyz", 200, 40s);
  EXPECT_EQ(ready.first, 200) << ready.second;
}

// Prepare read claims one at a time on one worker, past the kubelet's deadline: 50
// concurrent Prepares with 1 s GETs took 26 s. Now kDraWorkers (4) read at once, and a claim
// the kubelet no longer waits for is not fetched (docs/dra.md, "Prepare").
TEST_F(Dra, SlowClaimReadsRunSideBySideAndStopAtTheKubeletsDeadline) {
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  std::vector<drav1::Claim> claims;
  for (int i = 0; i < 8; ++i) {
    claims.push_back(KubeletClaim(api.Admin("/claims", Claim(Cat("c", i), {"hca-0000-10-00-0"}))));
  }
  api.Admin("/claim-delay", {{"ms", 1000}});
  std::vector<std::thread> kubelet;
  std::atomic<int> ok{0};
  for (const auto& c : claims) {
    kubelet.emplace_back([&, c] {
      auto r = dra.Prepare(kDriver, {c});
      if (r.ok() && r->claims().at(c.uid()).error().empty()) ++ok;
    });
  }
  for (auto& t : kubelet) t.join();
  EXPECT_EQ(ok, 8);
  auto stats = api.Stats();
  EXPECT_EQ(stats["maxClaimGetsInFlight"], 4) << stats.dump();
  EXPECT_EQ(stats["claimGets"], 8);
  // The kubelet gives up after 2 s; each GET takes 3 s: the first is cut off at the deadline
  // (less a margin for the answer), and the other two claims are not fetched at all.
  api.Admin("/claim-delay", {{"ms", 3000}});
  dra.SetCallTimeout(2000ms);
  auto r = dra.Prepare(kDriver, {claims[0], claims[1], claims[2]});
  ASSERT_TRUE(r.ok()) << r.status();
  for (int i = 0; i < 3; ++i) EXPECT_NE(r->claims().at(claims[i].uid()).error(), "") << i;
  EXPECT_THAT(r->claims().at(claims[2].uid()).error(),
              HasSubstr("the kubelet's deadline passed before it was read"));
  EXPECT_EQ(api.Stats()["claimGets"], 9);
}

// Tearing the DRA server down (a kubelet rejection, SIGTERM) waited for the running
// Prepare's claim GET (20 s each): /healthz failed for 58 s and SIGTERM took 75 s. The GET is
// cancelled; the process exits as soon as the kubelet's call is answered (docs/dra.md,
// "Prepare").
TEST_F(Dra, SigtermDuringASlowPrepareExitsPromptly) {
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto claim = KubeletClaim(api.Admin("/claims", Claim("slow", {"hca-0000-10-00-0"})));
  api.Admin("/claim-delay", {{"ms", 60000}});
  std::thread kubelet([&] { (void)dra.Prepare(kDriver, {claim}); });
  const bool reading = api.Await("stats.claimGetsInFlight === 1")["ok"].get<bool>();
  EXPECT_TRUE(reading);
  h.plugin().Signal(SIGTERM);
  // Within the kubelet's 30 s grace, with a wide margin: before the fix, 60 s here.
  EXPECT_EQ(h.plugin().WaitExit(std::chrono::milliseconds(10000)), 0) << h.PluginLog();
  kubelet.join();
}

// Claim names went into the URL unescaped: "../" reached other API paths with our token. A
// claim Kubernetes could not have named is refused before any GET (docs/dra.md, "Prepare").
TEST_F(Dra, ClaimNamesThatAreNotDnsNamesAreNeverFetched) {
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const int before = api.Stats()["claimGets"].get<int>();
  drav1::Claim evil;
  evil.set_namespace_("team-a");
  evil.set_name("../../../api/v1/secrets");
  evil.set_uid("u-evil");
  drav1::Claim evil_ns;
  evil_ns.set_namespace_("a/b");
  evil_ns.set_name("c");
  evil_ns.set_uid("u-ns");
  auto r = dra.Prepare(kDriver, {evil, evil_ns});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->claims().at("u-evil").error(), HasSubstr("name:"));
  EXPECT_THAT(r->claims().at("u-ns").error(), HasSubstr("namespace:"));
  EXPECT_EQ(api.Stats()["claimGets"].get<int>(), before);
}

TEST_F(Dra, AKubeletRestartWipesAndTheSlicesComeBack) {
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(h.kubelet().Restart().ok());  // wipes the node's slices at start
  auto r = api.Await("slices.length === 1 && stats.creates === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  std::printf("[measured] kubelet wipe -> slices back: %.1f ms\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                  .count());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 2; }, 20s));
  EXPECT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations > 2; }, 2s) ==
              false);
  EXPECT_EQ(dra.State().rejected.size(), 0u);
}

// Hot-add, a port going down and hot-remove each rewrite the pool's one slice in place with
// the next generation; the port state is a taint, not an attribute.
TEST_F(Dra, InventoryChangesBumpTheGeneration) {
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  h.node().Add(FakeNode::ConnectX(4, 1, /*infiniband=*/true));
  h.plugin().Signal(SIGHUP);
  auto r = api.Await("stats.updates === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["slices"][0]["spec"]["pool"]["generation"], 2);
  EXPECT_EQ(r["slices"][0]["spec"]["devices"].size(), 3u);
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  h.plugin().Signal(SIGHUP);
  r = api.Await("stats.updates === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const auto& device = r["slices"][0]["spec"]["devices"][0];
  EXPECT_EQ(device["taints"][0]["key"], "rdma.example.com/port-down");
  EXPECT_FALSE(device["attributes"].contains("state"));
  ASSERT_TRUE(dra.WaitFor(
      [](const DraKubeletState& s) {
        auto it = s.health.find("n1/hca-ib/hca-0000-10-00-0");
        return it != s.health.end() && it->second.health == "Unhealthy";
      },
      20s));
  EXPECT_THAT(dra.State().health.at("n1/hca-ib/hca-0000-10-00-0").message, HasSubstr("DOWN"));
  h.node().Remove("0000:14:00.0");
  h.plugin().Signal(SIGHUP);
  r = api.Await("stats.updates === 3");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["slices"][0]["spec"]["pool"]["generation"], 4);
  EXPECT_EQ(r["slices"][0]["spec"]["devices"].size(), 2u);
  h.plugin().Signal(SIGHUP);  // a rescan without a change writes nothing
  auto quiet = api.Await("stats.writes > 4", 1500ms);
  EXPECT_FALSE(quiet["ok"].get<bool>());
  EXPECT_THAT(quiet["stats"]["invalid"], ::testing::IsEmpty());
}

// The path of a real pod: `render`'s DeviceClass and one-share claim template, claims
// allocated by the test scheduler (test/manifests/dra_allocator.mjs: consumable capacity,
// shareID, taints) from the slices the plugin published, then prepared by the kubelet. The
// scheduler, not the plugin, enforces rdmaHcaMax: 2 HCAs x 4 shares = 8 claims, the 9th is
// unschedulable; a port going down taints its HCA, so freed shares there are not handed out.
TEST_F(Dra, ClaimsAllocatedWithSharesArePreparedAndTaintsSteerTheScheduler) {
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  auto loaded = config::ParseConfig(Config());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  nlohmann::json claim_spec;
  dra::ClassOptions options;
  options.driver = kDriver;
  for (const auto& o : dra::RenderDeviceClasses(loaded->config, options)) {
    if (o["kind"] == "DeviceClass") {
      ASSERT_EQ(api.Admin("/deviceclasses", o)["kind"], "DeviceClass") << o.dump();
    } else if (o["metadata"]["name"] == "hca-ib-share") {
      claim_spec = o["spec"]["spec"];
    }
  }
  ASSERT_FALSE(claim_spec.is_null());
  auto allocate = [&](int i) {
    return api.Admin("/allocate", {{"apiVersion", "resource.k8s.io/v1"},
                                   {"kind", "ResourceClaim"},
                                   {"metadata", {{"name", Cat("pod-", i)}, {"namespace", "ml"}}},
                                   {"spec", claim_spec}});
  };
  std::vector<nlohmann::json> claims;
  std::vector<drav1::Claim> batch;
  for (int i = 0; i < 8; ++i) {
    claims.push_back(allocate(i));
    ASSERT_EQ(claims.back()["kind"], "ResourceClaim") << claims.back().dump();
    batch.push_back(KubeletClaim(claims.back()));
  }
  const auto full = allocate(8);
  EXPECT_EQ(full["reason"], "Unschedulable") << full.dump();
  // The kubelet prepares the node's pods in one batch: every claim gets its HCA's CDI ID.
  auto resp = dra.Prepare(kDriver, batch);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->claims_size(), 8);
  std::map<std::string, int> per_hca;
  for (const auto& c : claims) {
    const auto& result = c["status"]["allocation"]["devices"]["results"][0];
    EXPECT_EQ(result["consumedCapacity"]["shares"], "1");
    const auto& answer = resp->claims().at(c["metadata"]["uid"].get<std::string>());
    EXPECT_EQ(answer.error(), "");
    ASSERT_EQ(answer.devices_size(), 1);
    EXPECT_THAT(answer.devices(0).cdi_device_ids(),
                ElementsAre(Cat(kDriver, "/hca=", result["device"].get<std::string>()),
                            Cat(kDriver, "/metadata=", c["metadata"]["uid"].get<std::string>(), "_",
                                result["request"].get<std::string>())));
    ++per_hca[answer.devices(0).device_name()];
    EXPECT_EQ(answer.devices(0).share_id(), result["shareID"].get<std::string>());
  }
  EXPECT_THAT(per_hca,
              ElementsAre(std::pair{"hca-0000-10-00-0", 4}, std::pair{"hca-0000-11-00-0", 4}));
  // Two pods end, one per HCA; then mlx5_0's port goes down and the slice carries the taint.
  for (int i : {0, 7}) {
    ASSERT_TRUE(dra.Unprepare(kDriver, {batch[i]}).ok());
    api.Admin("/deallocate", {{"namespace", "ml"}, {"name", Cat("pod-", i)}});
  }
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  h.plugin().Signal(SIGHUP);
  ASSERT_TRUE(api.Await("stats.updates === 1")["ok"].get<bool>());
  const auto next = allocate(10);
  ASSERT_EQ(next["kind"], "ResourceClaim") << next.dump();
  EXPECT_EQ(next["status"]["allocation"]["devices"]["results"][0]["device"], "hca-0000-11-00-0");
  EXPECT_EQ(allocate(11)["reason"], "Unschedulable");  // a share is free only on the tainted HCA
  EXPECT_THAT(api.Stats()["invalid"], ::testing::IsEmpty());
}

// ResourceClaim status.devices (KEP-4817; docs/dra.md, "Device status"): a prepared claim tells
// which HCA and netdev it got, by server-side apply the fake checks as kube-apiserver does
// (validation, the status strategy, RBAC with 1.36+'s granular claim-status rule); a replayed
// Prepare costs nothing; a port going down turns Ready False; nothing is written for a claim
// after its Unprepare.
nlohmann::json StoredClaim(FakeApiServer& api, const std::string& name) {
  for (const auto& c : api.Admin("/claims")) {
    if (c["metadata"]["name"] == name) return c;
  }
  return nullptr;
}

TEST_F(Dra, PreparedClaimsTellInTheirStatusWhichHcaAndNetdevTheyGot) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto one = api.Admin("/claims", Claim("one", {"hca-0000-10-00-0"}));
  const auto two = api.Admin("/claims", Claim("two", {"hca-0000-11-00-0"}));
  auto resp = dra.Prepare(kDriver, {KubeletClaim(one), KubeletClaim(two)});
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_TRUE(api.Await("stats.claimStatusWrites === 2")["ok"].get<bool>());
  const nlohmann::json stored = StoredClaim(api, "one");
  const nlohmann::json& devices = stored["status"]["devices"];
  ASSERT_EQ(devices.size(), 1u) << stored.dump(2);
  EXPECT_EQ(devices[0]["driver"], kDriver);
  EXPECT_EQ(devices[0]["pool"], "n1/hca-ib");
  EXPECT_EQ(devices[0]["device"], "hca-0000-10-00-0");
  EXPECT_EQ(devices[0]["shareID"], "00000000-0000-0000-0000-000000000000");
  const nlohmann::json& ready = devices[0]["conditions"][0];
  EXPECT_EQ(ready["type"], "Ready");
  EXPECT_EQ(ready["status"], "True");
  EXPECT_EQ(ready["reason"], "Prepared");
  EXPECT_EQ(ready["message"], "prepared: HCA mlx5_0 (0000:10:00.0, netdev ib0)");
  // The fake node's ib0 is not a netdev of this network namespace: no addresses.
  EXPECT_EQ(devices[0]["networkData"],
            nlohmann::json(
                {{"interfaceName", "ib0"},
                 {"hardwareAddress", FakeHardwareAddress(FakeNode::ConnectX(0, 0, true), 0)}}));
  // Ours alone: the driver's name is the field manager.
  const auto owners = api.Admin("/claim-status-owners");
  const std::string entry =
      Cat(kDriver, "/n1/hca-ib/hca-0000-10-00-0/00000000-0000-0000-0000-000000000000");
  ASSERT_TRUE(owners.contains("team-a/one")) << owners.dump();
  EXPECT_EQ(owners["team-a/one"].size(), 1u) << owners.dump();
  EXPECT_EQ(owners["team-a/one"][entry]["manager"], kDriver) << owners.dump();
  const std::string pending =
      Cat("rdma_shared_dp_dra_claim_status_pending{driver=\"", kDriver, "\"}");
  const std::string applied =
      Cat("rdma_shared_dp_dra_claim_status_applies_total{driver=\"", kDriver, "\",code=\"200\"}");
  EXPECT_EQ(h.AwaitMetric(applied, 2, 20s), 2);

  // A kubelet restart replays the batch: nothing is written.
  ASSERT_TRUE(dra.Prepare(kDriver, {KubeletClaim(one), KubeletClaim(two)}).ok());
  EXPECT_EQ(h.AwaitMetric(pending, 0, 20s), 0);
  EXPECT_EQ(api.Stats()["claimStatusApplies"], 2);

  // mlx5_0's port goes down: claim one's device is not ready, and only it is written.
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  h.plugin().Signal(SIGHUP);
  ASSERT_TRUE(api.Await("stats.claimStatusWrites === 3")["ok"].get<bool>());
  EXPECT_EQ(h.AwaitMetric(pending, 0, 20s), 0);
  EXPECT_EQ(api.Stats()["claimStatusApplies"], 3);
  const nlohmann::json down = StoredClaim(api, "one")["status"]["devices"][0]["conditions"][0];
  EXPECT_EQ(down["status"], "False");
  EXPECT_EQ(down["reason"], "Unhealthy");
  EXPECT_EQ(StoredClaim(api, "two")["status"]["devices"][0]["conditions"][0]["status"], "True");

  // Pod one ends: its claim is unprepared and deallocated. The port comes back: nothing of
  // ours is written to claim one again.
  ASSERT_TRUE(dra.Unprepare(kDriver, {KubeletClaim(one)}).ok());
  api.Admin("/deallocate", {{"namespace", "team-a"}, {"name", "one"}});
  h.node().SetPortState("mlx5_0", 1, "4: ACTIVE");
  h.plugin().Signal(SIGHUP);
  // The health stream says the port is back once the view that says so is the writer's.
  ASSERT_TRUE(dra.WaitFor(
      [](const DraKubeletState& s) {
        return !s.health.empty() &&
               std::all_of(s.health.begin(), s.health.end(),
                           [](const auto& d) { return d.second.health == "Healthy"; });
      },
      20s));
  EXPECT_EQ(h.AwaitMetric(pending, 0, 20s), 0);
  EXPECT_EQ(api.Stats()["claimStatusApplies"], 3);
}

// A restart of the plugin (a rollout, a crash) is not a Prepare: the kubelet does not prepare
// running pods' claims again. The new process finds the claims it prepared in Prepare's
// metadata files, reads each once, and keeps their status true: a port going down after the
// restart still turns Ready False, and nothing else is written.
TEST_F(Dra, ClaimsPreparedBeforeARestartAreKeptTrue) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto one = api.Admin("/claims", Claim("one", {"hca-0000-10-00-0"}));
  const auto two = api.Admin("/claims", Claim("two", {"hca-0000-11-00-0"}));
  ASSERT_TRUE(dra.Prepare(kDriver, {KubeletClaim(one), KubeletClaim(two)}).ok());
  ASSERT_TRUE(api.Await("stats.claimStatusWrites === 2")["ok"].get<bool>());
  h.plugin().Signal(SIGTERM);
  ASSERT_TRUE(h.plugin().WaitExit(10s).has_value());
  const int gets = api.Stats()["claimGets"].get<int>();
  std::vector<std::string> flags = api.PluginFlags();
  for (const auto& f :
       {Cat("--dra-driver-name=", kDriver), std::string("--node-name=n1"),
        "--cdi-spec-dir=" + cdi_dir, std::string("--metrics-address=127.0.0.1:0")}) {
    flags.push_back(f);
  }
  h.StartPlugin(flags);
  const std::string pending =
      Cat("rdma_shared_dp_dra_claim_status_pending{driver=\"", kDriver, "\"}");
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 2; }, 20s));
  EXPECT_EQ(h.AwaitMetric(pending, 0, 20s), 0);
  EXPECT_EQ(api.Stats()["claimGets"].get<int>() - gets, 2);  // one read each
  EXPECT_EQ(api.Stats()["claimStatusApplies"], 2);           // what they say still stands
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  h.plugin().Signal(SIGHUP);
  ASSERT_TRUE(api.Await("stats.claimStatusWrites === 3")["ok"].get<bool>());
  EXPECT_EQ(h.AwaitMetric(pending, 0, 20s), 0);
  EXPECT_EQ(api.Stats()["claimStatusApplies"], 3);
  EXPECT_EQ(StoredClaim(api, "one")["status"]["devices"][0]["conditions"][0]["status"], "False");
  EXPECT_EQ(StoredClaim(api, "two")["status"]["devices"][0]["conditions"][0]["status"], "True");
}

// networkData.ips: the addresses of the HCA's netdev in this network namespace, in canonical
// CIDR form. The fake node's HCA here has "lo" as its netdev, whose addresses every namespace
// has; a slots pool of one HCA reports its netdev on every release.
class DraWithLoopbackNetdev : public Dra {
 protected:
  std::string ConfigText() override {
    return R"({"periodicUpdateInterval": 0, "configList": [
        {"resourceName": "hca_lo", "rdmaHcaMax": 2, "frontend": "dra", "deviceModel": "slots",
         "selectors": {"ifNames": ["lo"]}}]})";
  }
  void BeforeThePluginStarts() override {
    FakeFunction fn = FakeNode::ConnectX(5, 0, /*infiniband=*/false);
    fn.netdevs = {"lo"};
    h.node().Add(fn);
  }
};

TEST_F(DraWithLoopbackNetdev, TheNetdevsAddressesAreInTheClaimsStatus) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  nlohmann::json claim = Claim("lo", {"slot-0"});
  auto& result = claim["status"]["allocation"]["devices"]["results"][0];
  result["pool"] = "n1/hca-lo";
  result.erase("shareID");
  const auto stored = api.Admin("/claims", claim);
  ASSERT_EQ(stored["kind"], "ResourceClaim") << stored.dump();
  ASSERT_TRUE(dra.Prepare(kDriver, {KubeletClaim(stored)}).ok());
  ASSERT_TRUE(api.Await("stats.claimStatusWrites === 1")["ok"].get<bool>());
  const nlohmann::json net = StoredClaim(api, "lo")["status"]["devices"][0]["networkData"];
  EXPECT_EQ(net["interfaceName"], "lo");
  EXPECT_THAT(net["ips"], ::testing::Contains("127.0.0.1/8")) << net.dump();
  EXPECT_EQ(net["hardwareAddress"],
            FakeHardwareAddress(FakeNode::ConnectX(5, 0, /*infiniband=*/false), 0));
}

// Admin access (KEP-5018, docs/dra.md "Admin access"): a monitoring claim in a namespace
// labelled resource.kubernetes.io/admin-access=true is allocated a device whose every slot is
// taken and prepared with the HCAs' char devices; it takes nothing from anyone (the next
// ordinary claim is as unschedulable as before); the same claim elsewhere is refused by the
// API server (the fake's port of the claim strategy). With "slots", the model 1.34 and 1.35
// publish and one a pool can choose on any release.
class DraAdminAccess : public Dra {
 protected:
  std::string ConfigText() override {
    return R"({"periodicUpdateInterval": 0, "configList": [
        {"resourceName": "hca_ib", "rdmaHcaMax": 4, "frontend": "dra", "deviceModel": "slots",
         "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}}]})";
  }
  // The claim spec of render's share template, with adminAccess when `admin`.
  nlohmann::json ShareSpec(bool admin) {
    auto loaded = config::ParseConfig(ConfigText());
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    dra::ClassOptions options;
    options.driver = kDriver;
    nlohmann::json spec;
    for (const auto& o : dra::RenderDeviceClasses(loaded->config, options)) {
      if (o["kind"] == "DeviceClass") {
        EXPECT_EQ(api.Admin("/deviceclasses", o)["kind"], "DeviceClass") << o.dump();
      } else if (o["metadata"]["name"] == "hca-ib-share") {
        spec = o["spec"]["spec"];
      }
    }
    if (admin) spec["devices"]["requests"][0]["exactly"]["adminAccess"] = true;
    return spec;
  }
  nlohmann::json Allocate(const std::string& ns, const std::string& name,
                          const nlohmann::json& spec) {
    return api.Admin("/allocate", {{"apiVersion", "resource.k8s.io/v1"},
                                   {"kind", "ResourceClaim"},
                                   {"metadata", {{"name", name}, {"namespace", ns}}},
                                   {"spec", spec}});
  }
};

TEST_F(DraAdminAccess, AMonitoringClaimGetsAFullPoolsDevicesAndTakesNothing) {
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const nlohmann::json share = ShareSpec(false);
  const nlohmann::json admin = ShareSpec(true);
  std::vector<drav1::Claim> batch;
  for (int i = 0; i < 4; ++i) {
    const auto claim = Allocate("ml", Cat("pod-", i), share);
    ASSERT_EQ(claim["kind"], "ResourceClaim") << claim.dump();
    batch.push_back(KubeletClaim(claim));
  }
  EXPECT_EQ(Allocate("ml", "pod-4", share)["reason"], "Unschedulable");

  api.Admin("/namespaces", {{"name", "monitoring"},
                            {"labels", {{"resource.kubernetes.io/admin-access", "true"}}}});
  const auto monitor = Allocate("monitoring", "hca-monitor", admin);
  ASSERT_EQ(monitor["kind"], "ResourceClaim") << monitor.dump();
  const auto& result = monitor["status"]["allocation"]["devices"]["results"][0];
  EXPECT_EQ(result["adminAccess"], true);
  EXPECT_THAT(result["device"].get<std::string>(), ::testing::StartsWith("slot-"));
  batch.push_back(KubeletClaim(monitor));
  auto resp = dra.Prepare(kDriver, batch);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->claims_size(), 5);
  const auto& answer = resp->claims().at(monitor["metadata"]["uid"].get<std::string>());
  EXPECT_EQ(answer.error(), "");
  ASSERT_EQ(answer.devices_size(), 1);
  EXPECT_THAT(
      answer.devices(0).cdi_device_ids(),
      ElementsAre(
          Cat(kDriver, "/hca=hca-0000-10-00-0"), Cat(kDriver, "/hca=hca-0000-11-00-0"),
          Cat(kDriver, "/metadata=", monitor["metadata"]["uid"].get<std::string>(), "_hca")));
  // It took nothing: the pool is as full as before, and a freed slot goes to the next pod.
  EXPECT_EQ(Allocate("ml", "pod-5", share)["reason"], "Unschedulable");
  ASSERT_TRUE(dra.Unprepare(kDriver, {batch[0]}).ok());
  api.Admin("/deallocate", {{"namespace", "ml"}, {"name", "pod-0"}});
  EXPECT_EQ(Allocate("ml", "pod-6", share)["kind"], "ResourceClaim");

  // Elsewhere the API server refuses it (one refusal, on purpose).
  const auto refused = Allocate("team-b", "hca-monitor", admin);
  EXPECT_EQ(refused["code"], 422) << refused.dump();
  EXPECT_THAT(refused["message"].get<std::string>(),
              HasSubstr("spec.devices.requests[0].adminAccess: Forbidden: admin access to devices "
                        "requires the `resource.kubernetes.io/admin-access: true` label on the "
                        "containing namespace"));
  expected_refusals = 1;
}

// After a reboot /var/run/cdi is empty again and the kubelet replays Prepare for the pods it
// restarts: the new plugin process has rewritten the specs before it answers.
TEST_F(Dra, AReplayedPrepareAfterARebootFindsItsSpecs) {
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto claim = api.Admin("/claims", Claim("c", {"hca-0000-11-00-0"}));
  auto before = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(before.ok());
  h.plugin().Signal(SIGKILL);
  ASSERT_TRUE(h.plugin().WaitExit(10s).has_value());
  std::filesystem::remove_all(cdi_dir);  // tmpfs after a reboot
  std::filesystem::create_directories(cdi_dir);
  ASSERT_TRUE(h.kubelet().Restart().ok());  // the node's kubelet starts again: wipe
  std::vector<std::string> flags = api.PluginFlags();
  for (const auto& f : {Cat("--dra-driver-name=", kDriver), std::string("--node-name=n1"),
                        "--cdi-spec-dir=" + cdi_dir}) {
    flags.push_back(f);
  }
  h.StartPlugin(flags);
  ASSERT_TRUE(dra.WaitFor(
      [](const DraKubeletState& s) { return s.plugins == 1 && s.registrations >= 2; }, 20s));
  auto after = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(after.ok()) << after.status();
  const std::string uid = claim["metadata"]["uid"];
  EXPECT_EQ(after->claims().at(uid).SerializeAsString(),
            before->claims().at(uid).SerializeAsString());
  EXPECT_THAT(ReadFileOrEmpty(cdi_dir + "/k8s-rdma-shared-dp_dra_hca-0000-11-00-0.json"),
              HasSubstr("hca-0000-11-00-0"));
  // The claim's metadata spec is back too (the plugin's data directory survives a reboot;
  // /var/run/cdi does not).
  EXPECT_THAT(ReadFileOrEmpty(Cat(cdi_dir, "/rdma.example.com_metadata_", uid, "_rdma.json")),
              HasSubstr("PCIDEVICE__C__RDMA=0000:11:00.0"));
}

// A prepared claim's containers get a KEP-5304 metadata file at the standard path and env
// naming their HCAs, both through the CDI spec the answer names; Unprepare removes both. A
// claim made from a template is named by the pod's name for it (docs/dra.md, "Prepare").
TEST_F(Dra, PreparedClaimsTellTheContainerWhichHcasItGot) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  auto templated = Claim("job-7-hcas-x2k9q", {"hca-0000-10-00-0", "hca-0000-11-00-0"});
  templated["metadata"]["annotations"] = {{"resource.kubernetes.io/pod-claim-name", "hcas"}};
  const auto claim = api.Admin("/claims", templated);
  const std::string uid = claim["metadata"]["uid"];
  auto resp = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->claims().at(uid).error(), "");
  const std::string data =
      Cat(h.kubelet_root(), "/plugins/", kDriver, "/dra-device-metadata/", uid);
  const auto metadata = nlohmann::json::parse(ReadFileOrEmpty(data + "/rdma/metadata.json"));
  EXPECT_EQ(metadata["apiVersion"], "metadata.resource.k8s.io/v1alpha1");
  EXPECT_EQ(metadata["metadata"]["uid"], uid);
  EXPECT_EQ(metadata["podClaimName"], "hcas");
  ASSERT_EQ(metadata["requests"][0]["devices"].size(), 2u);
  EXPECT_EQ(metadata["requests"][0]["devices"][1]["attributes"]["resource.kubernetes.io/pciBusID"],
            nlohmann::json({{"string", "0000:11:00.0"}}));
  const std::string spec_path = Cat(cdi_dir, "/rdma.example.com_metadata_", uid, "_rdma.json");
  const auto spec = nlohmann::json::parse(ReadFileOrEmpty(spec_path));
  const auto& edits = spec["devices"][0]["containerEdits"];
  EXPECT_EQ(edits["mounts"][0]["containerPath"],
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/hcas/rdma/"
            "rdma.example.com-metadata.json");
  EXPECT_EQ(edits["mounts"][0]["hostPath"], data + "/rdma/metadata.json");
  std::vector<std::string> env = edits["env"];
  std::sort(env.begin(), env.end());
  ASSERT_EQ(env.size(), 3u);
  EXPECT_EQ(env[0], "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(env[1], "PCIDEVICE__HCAS__RDMA=0000:10:00.0,0000:11:00.0");
  EXPECT_TRUE(env[2].starts_with("PCIDEVICE__HCAS__RDMA_INFO={")) << env[2];

  auto un = dra.Unprepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(un.ok()) << un.status();
  EXPECT_EQ(un->claims().at(uid).error(), "");
  EXPECT_FALSE(std::filesystem::exists(data));
  EXPECT_FALSE(std::filesystem::exists(spec_path));
  EXPECT_TRUE(std::filesystem::exists(cdi_dir + "/k8s-rdma-shared-dp_dra_hca-0000-10-00-0.json"))
      << "the HCA's own spec stays";
}

// A rolling update: the new pod registers a second endpoint beside the old one and the
// kubelet calls the newest; both compute the same slices, so nothing is rewritten; when the
// old pod stops, its registration goes and nothing is wiped.
TEST_F(Dra, ARollingUpdateNeitherFightsNorWipes) {
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const std::string old_endpoint = dra.State().endpoint;
  std::vector<std::string> flags = api.PluginFlags();
  for (const auto& f : {Cat("--dra-driver-name=", kDriver), std::string("--node-name=n1"),
                        "--cdi-spec-dir=" + cdi_dir}) {
    flags.push_back(f);
  }
  PluginProcess next(PluginBinary(), h.PluginArgs(flags), h.root() + "/next.log");
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.plugins == 2; }, 20s));
  EXPECT_NE(dra.State().endpoint, old_endpoint);
  h.plugin().Signal(SIGTERM);
  ASSERT_EQ(h.plugin().WaitExit(10s), 0);
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.deregistrations == 1; }, 20s));
  EXPECT_EQ(dra.State().plugins, 1);
  const auto claim = api.Admin("/claims", Claim("c", {"hca-0000-10-00-0"}));
  auto resp = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(resp.ok()) << resp.status();
  EXPECT_EQ(resp->claims().begin()->second.error(), "");
  auto r = api.Await("stats.writes > 1", 1500ms);
  EXPECT_FALSE(r["ok"].get<bool>()) << "the two instances rewrote the slices";
  EXPECT_EQ(r["slices"].size(), 1u);
  EXPECT_EQ(dra.State().wipes, 1) << "only the kubelet's start wiped";
}

// A unix socket file nobody accepts on (a killed instance's).
void DeadSocket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0) << path;
  ::close(fd);
}

// A killed instance leaves its registration and endpoint behind; the next one removes both
// (nothing accepts on them), and nothing else: another driver's socket stays.
TEST_F(Dra, DeadInstancesSocketsAreRemoved) {
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  h.plugin().Signal(SIGTERM);
  ASSERT_EQ(h.plugin().WaitExit(10s), 0);
  const std::string registry = h.kubelet().plugins_registry_dir();
  const std::string endpoints = h.kubelet_root() + "/plugins/rdma.example.com";
  DeadSocket(registry + "/rdma.example.com-deadbeef-reg.sock");
  DeadSocket(endpoints + "/dra-deadbeef.sock");
  DeadSocket(registry + "/other.example.com-deadbeef-reg.sock");
  std::vector<std::string> flags = api.PluginFlags();
  for (const auto& f : {Cat("--dra-driver-name=", kDriver), std::string("--node-name=n1"),
                        "--cdi-spec-dir=" + cdi_dir}) {
    flags.push_back(f);
  }
  h.StartPlugin(flags);
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 2; }, 20s));
  EXPECT_FALSE(std::filesystem::exists(registry + "/rdma.example.com-deadbeef-reg.sock"));
  EXPECT_FALSE(std::filesystem::exists(endpoints + "/dra-deadbeef.sock"));
  EXPECT_TRUE(std::filesystem::exists(registry + "/other.example.com-deadbeef-reg.sock"));
}

// A 1.32/1.33 kubelet knows only v1beta1.DRAPlugin: it picks that from our list, and the
// same Prepare answers through it.
class DraOnV1beta1Kubelet : public Dra {
 protected:
  void SetUp() override {
    dra.SetSupported({"v1beta1.DRAPlugin"});
    Dra::SetUp();
  }
};

TEST_F(DraOnV1beta1Kubelet, PrepareThroughV1beta1) {
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  EXPECT_EQ(dra.State().service, "v1beta1.DRAPlugin");
  const auto claim = api.Admin("/claims", Claim("c", {"hca-0000-11-00-0"}));
  auto resp = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(resp.ok()) << resp.status();
  const auto& c = resp->claims().at(claim["metadata"]["uid"].get<std::string>());
  EXPECT_EQ(c.error(), "");
  ASSERT_EQ(c.devices_size(), 1);
  EXPECT_THAT(
      c.devices(0).cdi_device_ids(),
      ElementsAre(
          "rdma.example.com/hca=hca-0000-11-00-0",
          Cat("rdma.example.com/metadata=", claim["metadata"]["uid"].get<std::string>(), "_rdma")));
  auto un = dra.Unprepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(un.ok()) << un.status();
  EXPECT_EQ(un->claims_size(), 1);
}

// The driver gone for longer than the kubelet's wiping delay: the kubelet deletes its
// slices (the scheduler must not place pods on a node whose driver is gone); the next
// instance publishes them again.
TEST_F(Dra, ADriverGoneTooLongIsWipedAndComesBack) {
  dra.SetWipeDelay(300ms);
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  h.plugin().Signal(SIGTERM);
  ASSERT_EQ(h.plugin().WaitExit(10s), 0);
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.wipes == 2; }, 20s));
  auto r = api.Await("slices.length === 0");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  std::vector<std::string> flags = api.PluginFlags();
  for (const auto& f : {Cat("--dra-driver-name=", kDriver), std::string("--node-name=n1"),
                        "--cdi-spec-dir=" + cdi_dir}) {
    flags.push_back(f);
  }
  h.StartPlugin(flags);
  r = api.Await("slices.length === 1 && stats.creates === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 2; }, 20s));
  EXPECT_EQ(dra.State().wipes, 2);
}

std::string Maps(pid_t pid) { return ReadFileOrEmpty(Cat("/proc/", pid, "/maps")); }

// The DRA front end's HTTPS client is loaded only when an entry uses it: a device-plugin-only
// node never maps libcurl (nor has it initialise OpenSSL).
// Libraries a node does not use stay unmapped: libcurl (and its TLS) only with a DRA entry,
// libibverbs (and its libnl-route and providers) only with uverbs devices in the real sysfs
// (verbs_lib_test loads it when there are).
TEST_F(Dra, OnlyWhatTheNodeUsesIsLoaded) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  EXPECT_THAT(Maps(h.plugin().pid()), HasSubstr("libcurl"));
  PluginHarness plain;
  plain.AddDemoHcas();
  plain.WriteConfig(PluginHarness::DemoConfig(0));
  ASSERT_TRUE(plain.kubelet().Start().ok());
  plain.StartPlugin();
  ASSERT_TRUE(plain.kubelet().WaitRegistered({"rdma/hca_shared_devices_a"}, 1, 20s));
  const std::string maps = Maps(plain.plugin().pid());
  ASSERT_THAT(maps, HasSubstr("libgrpc"));
  EXPECT_THAT(maps, ::testing::Not(HasSubstr("libcurl")));
  if (!std::filesystem::exists("/sys/class/infiniband_verbs")) {  // this machine: no RDMA
    EXPECT_THAT(maps, ::testing::Not(HasSubstr("libibverbs")));
    EXPECT_THAT(Maps(h.plugin().pid()), ::testing::Not(HasSubstr("libibverbs")));
  }
}

// Per-HCA CDI specs that could not be written were still advertised (slice published, health
// Healthy, /readyz 200): Prepare then named a spec that does not exist and the pod failed at
// container creation. With the CDI directory full (a real tmpfs), the HCAs are tainted,
// their health says why, /readyz says not ready; once there is space, a rescan writes the
// specs and all of it clears (docs/reliability.md, "Capacity and data").
class DraWithFullCdi : public Dra {
 protected:
  void SetUp() override {
    const std::string dir = h.root() + "/cdi";
    std::filesystem::create_directories(dir);
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << std::strerror(errno);
    }
    mounted_ = dir;
    std::ofstream filler(dir + "/filler");
    const std::string block(4096, 'x');
    for (int i = 0; i < 64 && filler; ++i) filler.write(block.data(), block.size()).flush();
    filler.close();
    Dra::SetUp();
  }
  void TearDown() override {
    Dra::TearDown();
    if (!mounted_.empty()) ::umount2(mounted_.c_str(), MNT_DETACH);
  }
  std::string mounted_;
};

TEST_F(DraWithFullCdi, UnwritableSpecsAreNotAdvertised) {
  auto r = api.Await("slices.length === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  for (const auto& d : r["slices"][0]["spec"]["devices"]) {
    // The taint names the cause (at eee2a98 it said port-down).
    ASSERT_TRUE(d.contains("taints")) << d.dump();
    EXPECT_EQ(d["taints"], nlohmann::json::parse(R"([{"key": "rdma.example.com/cdi-spec-unwritable",
                                                     "effect": "NoSchedule"}])"));
  }
  ASSERT_TRUE(dra.WaitFor(
      [](const DraKubeletState& s) {
        return s.health.size() == 2 &&
               s.health.at("n1/hca-ib/hca-0000-10-00-0").health == "Unhealthy";
      },
      20s));
  auto ready = AwaitNotReadyBecause("CDI spec not written", 5s);
  EXPECT_EQ(ready.first, 503);
  EXPECT_THAT(ready.second, HasSubstr("CDI spec not written"));
  std::filesystem::remove(cdi_dir + "/filler");
  h.plugin().Signal(SIGHUP);  // a rescan (this config has no periodic one)
  ASSERT_TRUE(api.Await("stats.updates === 1")["ok"].get<bool>());
  const nlohmann::json slices = api.Slices();  // kept: the loop reads into it
  for (const auto& d : slices[0]["spec"]["devices"]) EXPECT_FALSE(d.contains("taints"));
  EXPECT_TRUE(std::filesystem::exists(cdi_dir + "/k8s-rdma-shared-dp_dra_hca-0000-10-00-0.json"));
  ASSERT_TRUE(dra.WaitFor(
      [](const DraKubeletState& s) {
        return s.health.at("n1/hca-ib/hca-0000-10-00-0").health == "Healthy";
      },
      20s));
}

// The spec of an HCA that went away while the plugin was down was never removed. At start,
// this front end's spec files that no published HCA owns are removed; other files in the
// directory are not touched (docs/dra.md, "Using it").
// The kubelet-directory events never reached the DRA driver. Its registration socket, once
// deleted, was not served again (the plugin watcher had nothing to register: the driver
// stayed unregistered until a restart). Now it is re-served once, and the watcher registers
// it again (docs/architecture.md, "Threads").
TEST_F(Dra, ADeletedRegistrationSocketIsServedAgainOnce) {
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const std::string registry = h.kubelet_root() + "/plugins_registry";
  std::string socket;
  for (const auto& e : std::filesystem::directory_iterator(registry)) {
    const std::string name = e.path().filename();
    if (name.starts_with(Cat(kDriver, "-")) && name.ends_with("-reg.sock")) socket = e.path();
  }
  ASSERT_FALSE(socket.empty());
  std::filesystem::remove(socket);  // the kubelet's cleanup, or an operator
  ASSERT_TRUE(dra.WaitFor(
      [](const DraKubeletState& s) { return s.registrations == 2 && s.deregistrations == 1; },
      20s));
  EXPECT_TRUE(std::filesystem::exists(socket)) << "served again under the same name";
  // Exactly once: nothing more within a quiet window.
  EXPECT_FALSE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations > 2; }, 2s));
  const DraKubeletState after = dra.State();
  EXPECT_EQ(after.registrations, 2);
  EXPECT_EQ(after.plugins, 1);
}

// A kubelet directory that appeared after the plugin started was found by the retry timer
// only (1 s doubling to 30 s: after 8 s without it, the next try came ~8 s later). The
// kubelet-root watch now reaches the DRA driver: it serves as soon as the directory is there
// (docs/architecture.md, "Threads"). The 4 s wait tells one event from the back-off.
class DraWithoutPluginsDirAtStart : public Dra {
 protected:
  void BeforeThePluginStarts() override {
    std::filesystem::remove(h.kubelet_root() + "/plugins");  // not there yet (node boot)
  }
};

TEST_F(DraWithoutPluginsDirAtStart, ItIsServedOnceTheDirectoryAppears) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());  // the API side works
  EXPECT_FALSE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations > 0; }, 8s));
  std::filesystem::create_directory(h.kubelet_root() + "/plugins");
  EXPECT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 4s));
  EXPECT_FALSE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations > 1; }, 1s));
}

// The kubelet turns a device "Unknown" in pod status when no report came for the timeout
// the plugin states (health_check_timeout_seconds; the kubelet's healthinfo.go). The
// plugin's heartbeat, a third of it, keeps a quiet device known for as long as it runs; a
// plugin that stops (SIGSTOP: a hung process, not a crash, so the stream stays open) turns
// every device Unknown, and the first heartbeat after SIGCONT makes them known again. On a
// 3 s --dra-health-timeout, so the scenario takes seconds (the default is 30 s, below).
class DraWithAShortHealthTimeout : public Dra {
 protected:
  std::vector<std::string> ExtraFlags() override { return {"--dra-health-timeout=3"}; }
};

TEST_F(DraWithAShortHealthTimeout, TheHeartbeatKeepsHealthKnownAndAStalledPluginTurnsUnknown) {
  constexpr const char* kDevices[] = {"n1/hca-ib/hca-0000-10-00-0", "n1/hca-ib/hca-0000-11-00-0"};
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.health.size() == 2; }, 20s));
  // 4 s without any change: longer than the timeout. The wait is the scenario.
  std::this_thread::sleep_for(4s);
  for (const char* device : kDevices) {
    const DraDeviceHealth now = dra.HealthNow(device);
    EXPECT_EQ(now.health, "Healthy") << device;
    EXPECT_EQ(now.timeout, 3s) << device;  // the plugin states its timeout
    // The contract, not a timing figure: the kubelet never saw a silence of the timeout.
    EXPECT_LT(dra.State().health.at(device).longest_gap, 3s) << device;
  }
  const int lists = dra.State().health_lists;
  h.plugin().Signal(SIGSTOP);
  std::this_thread::sleep_for(3100ms);         // the timeout, counted from before the stop
  EXPECT_EQ(dra.State().health_lists, lists);  // a stopped plugin sends nothing
  for (const char* device : kDevices) {
    const DraDeviceHealth now = dra.HealthNow(device);
    EXPECT_EQ(now.health, "Unknown") << device;
    EXPECT_EQ(now.message, "") << device;
  }
  h.plugin().Signal(SIGCONT);
  ASSERT_TRUE(dra.WaitFor([&](const DraKubeletState& s) { return s.health_lists > lists; }, 20s));
  for (const char* device : kDevices) EXPECT_EQ(dra.HealthNow(device).health, "Healthy");
  EXPECT_EQ(dra.State().registrations, 1);  // a stall is not a restart
  EXPECT_EQ(dra.State().health_streams, 1);
}

// The API server is away for longer than two of the kubelet's health timeouts: a control
// plane upgrade, about a minute against the default 30 s; here 7 s against the 3 s this
// fixture states, so the scenario runs in the default suite and on every release. The node
// keeps serving what it serves: the kubelet's health stream reports the port that went down
// at once, and its heartbeat never lapses; the device-plugin resource allocates; Prepare of
// a claim it cannot read fails with the reason. Once the API server is back, the slice is
// rewritten once, with the taint, on the grid of a waiting change (9.5 s), and nothing is
// written after that. (The grid over a real minute, and the 30 s period after two minutes,
// are the publisher's tests': slice_publisher_test, dra_test's Schedule.*.)
TEST_F(DraWithAShortHealthTimeout, AnApiServerAwayForTwoHealthTimeoutsCostsNothingServed) {
  constexpr char kHca0[] = "n1/hca-ib/hca-0000-10-00-0";
  constexpr char kHca1[] = "n1/hca-ib/hca-0000-11-00-0";
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto claim = api.Admin("/claims", Claim("c", {"hca-0000-11-00-0"}));
  ASSERT_TRUE(h.kubelet().WaitRegistered({"rdma/hca_roce"}, 1, 20s));
  api.Admin("/down");
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  h.plugin().Signal(SIGHUP);
  EXPECT_TRUE(dra.WaitFor(
      [&](const DraKubeletState& s) {
        auto it = s.health.find(kHca0);
        return it != s.health.end() && it->second.health == "Unhealthy";
      },
      20s));
  EXPECT_TRUE(h.kubelet().Allocate("rdma/hca_roce", {"0"}).ok());
  auto prepared = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_THAT(prepared->claims().at(claim["metadata"]["uid"].get<std::string>()).error(),
              HasSubstr("resourceclaim"));
  std::this_thread::sleep_for(7s);  // the outage itself: its length is the scenario
  // The heartbeat went on through the outage: the kubelet never saw a silence of the timeout.
  EXPECT_EQ(dra.HealthNow(kHca1).health, "Healthy");
  EXPECT_LT(dra.State().health.at(kHca1).longest_gap, 3s);
  ASSERT_TRUE(api.Admin("/up").is_object());
  auto r = api.Await("stats.updates === 1", 20s);  // the 9.5 s grid at most
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["slices"][0]["spec"]["devices"][0]["taints"][0]["key"], "rdma.example.com/port-down");
  EXPECT_EQ(r["slices"][0]["spec"]["pool"]["generation"], 2);
  auto quiet = api.Await("stats.writes > 2", 3s);
  EXPECT_FALSE(quiet["ok"].get<bool>());
  EXPECT_EQ(quiet["stats"]["creates"], 1);
  EXPECT_THAT(quiet["stats"]["invalid"], ::testing::IsEmpty());
  prepared = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(prepared.ok());
  EXPECT_EQ(prepared->claims().at(claim["metadata"]["uid"].get<std::string>()).error(), "");
  EXPECT_EQ(dra.State().registrations, 1);
  EXPECT_EQ(dra.State().health_streams, 1);
}

TEST_F(Dra, TheHealthStreamStatesTheKubeletsDefaultTimeout) {
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.health.size() == 2; }, 20s));
  for (const auto& [device, health] : dra.State().health) EXPECT_EQ(health.timeout, 30s) << device;
}

class DraWithStaleSpec : public Dra {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(h.root() + "/cdi");
    std::ofstream(h.root() + "/cdi/k8s-rdma-shared-dp_dra_hca-0000-99-00-0.json") << "{}\n";
    std::ofstream(h.root() + "/cdi/nvidia.com_gpu.yaml") << "foreign\n";
    Dra::SetUp();
  }
};

TEST_F(DraWithStaleSpec, SpecsOfGoneHcasAreRemovedAtStart) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  EXPECT_FALSE(std::filesystem::exists(cdi_dir + "/k8s-rdma-shared-dp_dra_hca-0000-99-00-0.json"));
  EXPECT_TRUE(std::filesystem::exists(cdi_dir + "/k8s-rdma-shared-dp_dra_hca-0000-10-00-0.json"));
  EXPECT_TRUE(std::filesystem::exists(cdi_dir + "/nvidia.com_gpu.yaml"));
}

// A service-account token that appeared after the start was picked up only at the next
// rescan (300 s by default; never with periodic rescans off, as here). The API client is
// retried on its own timer (1 s doubling to 30 s, jittered): docs/reliability.md, "Errors
// that lead somewhere".
class DraWithoutTokenAtStart : public Dra {
 protected:
  void SetUp() override {
    std::filesystem::rename(api.token_file(), api.token_file() + ".later");
    Dra::SetUp();
  }
};

TEST_F(DraWithoutTokenAtStart, ATokenThatAppearsLaterIsPickedUp) {
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  auto down = AwaitNotReadyBecause("service-account token", 10s);
  EXPECT_EQ(down.first, 503);
  EXPECT_THAT(down.second, HasSubstr("service-account token")) << down.second;
  EXPECT_EQ(api.Stats()["lists"], 0);
  std::filesystem::rename(api.token_file() + ".later", api.token_file());
  auto r = api.Await("slices.length === 1", 20s);
  EXPECT_TRUE(r["ok"].get<bool>()) << r["stats"].dump();
}

// On every release at its default gates: deviceModel "auto" (the default) is
// perHca where kube-apiserver keeps consumable capacity (1.36+) and slots where it drops it
// (1.34, 1.35: the devices would otherwise publish as exclusive and 3 claims fit where 12
// should). Decided by a dry-run probe, so the pool is written exactly once; the rendered
// template allocates rdmaHcaMax claims per pool (slots) or per HCA (perHca), then no more
// (docs/dra.md, "What the plugin does about it").
class DraOnRelease : public Dra, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    api.Admin("/kube-release", {{"release", GetParam()}});
    Dra::SetUp();
  }
  bool ConsumableCapacity() const { return std::string(GetParam()) >= "1.36"; }
};

TEST_P(DraOnRelease, AutoPicksTheModelTheServerKeepsAndWritesOnce) {
  auto r = api.Await("slices.length === 1 && stats.creates === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const auto& devices = r["slices"][0]["spec"]["devices"];
  if (ConsumableCapacity()) {
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[0]["name"], "hca-0000-10-00-0");
    EXPECT_EQ(devices[0]["allowMultipleAllocations"], true);
  } else {
    ASSERT_EQ(devices.size(), 4u);  // rdmaHcaMax slots
    EXPECT_EQ(devices[0]["name"], "slot-0");
    EXPECT_FALSE(devices[0].contains("allowMultipleAllocations"));
  }
  EXPECT_GE(r["stats"]["dryRuns"].get<int>(), 1);
  auto quiet = api.Await("stats.writes > 1", 1500ms);
  EXPECT_FALSE(quiet["ok"].get<bool>()) << quiet["stats"].dump();
  EXPECT_EQ(quiet["stats"]["writes"], 1);
  EXPECT_EQ(quiet["stats"]["dryRuns"], 1);
  EXPECT_THAT(quiet["stats"]["invalid"], ::testing::IsEmpty());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  auto loaded = config::ParseConfig(Config());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  nlohmann::json claim_spec;
  dra::ClassOptions options;
  options.driver = kDriver;
  for (const auto& o : dra::RenderDeviceClasses(loaded->config, options)) {
    if (o["kind"] == "DeviceClass") api.Admin("/deviceclasses", o);
    if (o["metadata"]["name"] == "hca-ib-share") claim_spec = o["spec"]["spec"];
  }
  const int fit = ConsumableCapacity() ? 8 : 4;
  std::vector<drav1::Claim> batch;
  for (int i = 0; i <= fit; ++i) {
    const auto c =
        api.Admin("/allocate", {{"apiVersion", "resource.k8s.io/v1"},
                                {"kind", "ResourceClaim"},
                                {"metadata", {{"name", Cat("pod-", i)}, {"namespace", "ml"}}},
                                {"spec", claim_spec}});
    if (i < fit) {
      ASSERT_EQ(c["kind"], "ResourceClaim") << i << ": " << c.dump();
      batch.push_back(KubeletClaim(c));
    } else {
      EXPECT_EQ(c["reason"], "Unschedulable") << c.dump();
    }
  }
  auto resp = dra.Prepare(kDriver, batch);
  ASSERT_TRUE(resp.ok()) << resp.status();
  for (const auto& [uid, claim] : resp->claims()) {
    EXPECT_EQ(claim.error(), "") << uid;
    EXPECT_EQ(claim.devices_size(), 1) << uid;
  }
}

// An explicit deviceModel: perHca on a server without consumable capacity (1.34, 1.35
// defaults) was published as configured, and the server made every HCA exclusive: 2 claims
// where rdmaHcaMax says 8. It is published as slots (4 a pool here, rdmaHcaMax), with the
// metric and a /readyz line; on 1.36+ as configured, neither (docs/dra.md, "What the plugin
// does about it").
class DraExplicitPerHca : public DraOnRelease {
 protected:
  void BeforeThePluginStarts() override {
    std::string config = Config();
    const std::string entry = R"("frontend": "dra",)";
    config.replace(config.find(entry), entry.size(),
                   R"("frontend": "dra", "deviceModel": "perHca",)");
    h.WriteConfig(config);
  }
};

TEST_P(DraExplicitPerHca, IsPublishedAsSlotsWhereTheServerCannotShareADevice) {
  auto r = api.Await("slices.length === 1 && stats.creates === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const auto& devices = r["slices"][0]["spec"]["devices"];
  const std::string fallback =
      "rdma_shared_dp_dra_model_fallback{driver=\"rdma.example.com\",resource=\"rdma/hca_ib\","
      "configured=\"perHca\",published=\"slots\"}";
  if (ConsumableCapacity()) {
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[0]["allowMultipleAllocations"], true);
    EXPECT_EQ(Sample(fallback), -1);
  } else {
    ASSERT_EQ(devices.size(), 4u);
    EXPECT_EQ(devices[0]["name"], "slot-0");
    EXPECT_EQ(Sample(fallback), 1);
    EXPECT_EQ(Sample("rdma_shared_dp_errors_by_class_total{class=\"dra\"}"), 0)
        << "a fallback that serves the full count is not an error";
  }
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto ready = AwaitHttp("/readyz", 200, 10s);
  EXPECT_EQ(ready.first, 200) << ready.second;
  EXPECT_EQ(ready.second.find("is published as slots, not perHca") != std::string::npos,
            !ConsumableCapacity())
      << ready.second;
  auto quiet = api.Await("stats.writes > 1", 1500ms);
  EXPECT_EQ(quiet["stats"]["writes"], 1) << "one write, no flip between models";
}

// A pod that asks for `limits: rdma/hca_ib: 1`, served through DRA by a
// DeviceClass with extendedResourceName (KEP-5004; beta 1.36, GA 1.37), names no claim: the
// scheduler makes one for it. Its containers get PCIDEVICE_RDMA_HCA_IB, _INFO and the hints
// exactly as the device plugin's Allocate gives them for the same entry (compared with
// `discover`'s, which is the Allocate answer), not a name with the claim's random suffix
// (docs/migrating.md, "Moving a pool to DRA without touching a pod").
// The config's DeviceClass with its extended resource name, as `render
// --extended-resource-name` prints it, created on the fake API server (its validation
// refuses a bad one): the created object, or null (a failure said) when there was none.
nlohmann::json CreateExtendedResourceClass(FakeApiServer& api, const config::Config& config) {
  dra::ClassOptions options;
  options.driver = kDriver;
  options.extended_resource = true;
  nlohmann::json created;
  for (const auto& o : dra::RenderDeviceClasses(config, options)) {
    if (o["kind"] != "DeviceClass") continue;
    EXPECT_EQ(api.Admin("/deviceclasses", o)["kind"], "DeviceClass") << o.dump();
    created = o;
  }
  EXPECT_FALSE(created.is_null()) << "no DeviceClass rendered";
  return created;
}

// The claim kube-scheduler makes for a pod's extended resource (pkg/scheduler/framework/
// plugins/dynamicresources/extendeddynamicresources.go: preFilterExtendedResources,
// createRequestsAndMappings): named from the pod, owned by it, annotated, one request per
// container and resource named container-<container index>-request-<index among the
// container's sorted requests> (a container asking for cpu, memory and rdma/hca_ib:
// request-2), ExactCount.
nlohmann::json SchedulerMadeClaim(const std::string& request, const std::string& device_class) {
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata",
       {{"name", "worker-0-extended-resources-x2kq9"},
        {"generateName", "worker-0-extended-resources-"},
        {"namespace", "ml"},
        {"annotations", {{"resource.kubernetes.io/extended-resource-claim", "true"}}},
        {"ownerReferences", nlohmann::json::array({{{"apiVersion", "v1"},
                                                    {"kind", "Pod"},
                                                    {"name", "worker-0"},
                                                    {"uid", "8f0c1a52-3c1e-4d5b-9a5e-2f7d0c1b6a10"},
                                                    {"controller", true}}})}}},
      {"spec",
       {{"devices",
         {{"requests", nlohmann::json::array({{{"name", request},
                                               {"exactly",
                                                {{"deviceClassName", device_class},
                                                 {"allocationMode", "ExactCount"},
                                                 {"count", 1}}}}})}}}}}};
}

class DraExtendedResource : public DraOnRelease {
 protected:
  static std::string PerPoolConfig() {
    std::string config = Config();
    const std::string entry = R"("frontend": "dra",)";
    return config.replace(config.find(entry), entry.size(),
                          R"("frontend": "dra", "deviceModel": "perPool",)");
  }
  void BeforeThePluginStarts() override { h.WriteConfig(PerPoolConfig()); }
};

TEST_P(DraExtendedResource, AClaimTheSchedulerMadeGivesTheDevicePluginsEnv) {
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  auto loaded = config::ParseConfig(PerPoolConfig());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(dra::ExtendedResourceProblems(loaded->config), ::testing::IsEmpty());
  const nlohmann::json created = CreateExtendedResourceClass(api, loaded->config);
  EXPECT_EQ(created["spec"]["extendedResourceName"], "rdma/hca_ib");
  const std::string device_class = created.at("metadata").at("name");
  const nlohmann::json made = SchedulerMadeClaim("container-0-request-2", device_class);
  const auto claim = api.Admin("/allocate", made);
  ASSERT_EQ(claim["kind"], "ResourceClaim") << claim.dump();
  const std::string uid = claim["metadata"]["uid"];
  auto resp = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(resp.ok()) << resp.status();
  const auto& answer = resp->claims().at(uid);
  ASSERT_EQ(answer.error(), "");
  ASSERT_EQ(answer.devices_size(), 1);
  EXPECT_EQ(answer.devices(0).device_name(), "pool");
  EXPECT_THAT(answer.devices(0).request_names(), ElementsAre("container-0-request-2"));
  const auto spec = nlohmann::json::parse(ReadFileOrEmpty(
      Cat(cdi_dir, "/rdma.example.com_metadata_", uid, "_container-0-request-2.json")));
  std::map<std::string, std::string> env;
  for (const std::string kv : spec["devices"][0]["containerEdits"]["env"]) {
    env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  }
  // The device plugin's env for the same entry: the binary's `discover` shows what its
  // Allocate answers.
  std::string dp_config = Config();
  const std::string dra_entry = R"("frontend": "dra",)";
  dp_config.erase(dp_config.find(dra_entry), dra_entry.size());
  const std::string dp_path = h.root() + "/device-plugin.json";
  { std::ofstream(dp_path) << dp_config; }
  const RunResult discovered =
      RunToExit({"discover", "--output=json", "--config-file=" + dp_path,
                 "--sysfs-root=" + h.node().sysfs_root(), "--dev-root=" + h.node().dev_root()},
                10s);
  ASSERT_EQ(discovered.status, 0) << discovered.output;
  std::map<std::string, std::string> dp_env;
  const auto doc = nlohmann::json::parse(discovered.output);  // kept: the loop reads a member
  for (const auto& p : doc["pools"]) {
    if (p["resource"] == "rdma/hca_ib") dp_env = p["env"].get<std::map<std::string, std::string>>();
  }
  ASSERT_EQ(dp_env.count("PCIDEVICE_RDMA_HCA_IB"), 1u) << discovered.output;
  EXPECT_EQ(dp_env["PCIDEVICE_RDMA_HCA_IB"], "0000:10:00.0,0000:11:00.0");
  EXPECT_EQ(env, dp_env);
}

// The move of a pool to DRA without pod changes, per release (docs/migrating.md, "Which
// releases need what"): the node as the kubelet leaves it once the device plugin has been gone
// over 5 minutes (the entry at 0/0), kube-scheduler's verdict for a pod asking
// `limits: rdma/hca_ib: 1` (the fake's port of fit.go and dynamicresources for the release,
// DRAExtendedResource on), `remove-stale-resources` run as in the plugin's pod with the RBAC of
// components/dra and dra-remove-stale-resources, and the claim the scheduler then makes,
// prepared. On 1.34 the stale entry blocks the move until the command removes it; from 1.35
// the node is served by DRA at once, and the command only tidies up.
class DraMove : public DraOnRelease {
 protected:
  void SetUp() override {
    api.Admin("/kube-release", {{"release", GetParam()}});
    api.Admin("/gates", {{"DRAExtendedResource", true}});
    Dra::SetUp();
  }
  std::string ConfigText() override {
    return R"({"periodicUpdateInterval": 0, "configList": [
        {"resourceName": "hca_ib", "rdmaHcaMax": 4, "frontend": "dra", "deviceModel": "slots",
         "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}}]})";
  }
  std::string ServedBy() {
    const auto v = api.Admin("/schedule-extended",
                             {{"node", "n1"}, {"resource", "rdma/hca_ib"}, {"requested", 1}});
    return v.value("servedBy", v.dump());
  }
  RunResult RemoveStale(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"remove-stale-resources", "--config-file=" + h.config_path(),
                                     "--node-name=n1"};
    for (const auto& f : api.PluginFlags()) args.push_back(f);
    for (const auto& f : extra) args.push_back(f);
    return RunToExit(args, 10s);
  }
  nlohmann::json NodeStatus() { return api.Admin("/node-status?name=n1")["status"]; }
};

TEST_P(DraMove, ThePoolMovesWithoutPodChangesOnEveryRelease) {
  const std::string release = GetParam();
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  auto loaded = config::ParseConfig(ConfigText());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string device_class =
      CreateExtendedResourceClass(api, loaded->config).at("metadata").at("name");
  // While the device plugin serves the name, neither the command nor the scheduler moves it.
  api.Admin("/node-status", {{"name", "n1"},
                             {"capacity", {{"cpu", "8"}, {"rdma/hca_ib", "4"}}},
                             {"allocatable", {{"cpu", "8"}, {"rdma/hca_ib", "4"}}}});
  EXPECT_EQ(ServedBy(), "devicePlugin");
  api.AuthorizeAsTheDraDaemonSet(kDriver, "n1", {"dra-remove-stale-resources"});
  RunResult served = RemoveStale();
  EXPECT_EQ(served.status, 1) << served.output;
  EXPECT_THAT(served.output, HasSubstr("a device plugin still serves it on node n1"));
  // It left under 5 minutes ago: allocatable 0 at once, capacity kept.
  api.Admin("/node-status", {{"name", "n1"},
                             {"capacity", {{"cpu", "8"}, {"rdma/hca_ib", "4"}}},
                             {"allocatable", {{"cpu", "8"}, {"rdma/hca_ib", "0"}}}});
  RunResult draining = RemoveStale();
  EXPECT_EQ(draining.status, 1) << draining.output;
  EXPECT_THAT(draining.output, HasSubstr("less than 5 minutes ago"));
  // Over 5 minutes: 0/0 for good.
  api.Admin("/node-status", {{"name", "n1"},
                             {"capacity", {{"cpu", "8"}, {"rdma/hca_ib", "0"}}},
                             {"allocatable", {{"cpu", "8"}, {"rdma/hca_ib", "0"}}}});
  EXPECT_EQ(ServedBy(), release == "1.34" ? "none" : "dra");  // 1.34: "Insufficient"
  RunResult dry = RemoveStale({"--dry-run"});
  EXPECT_EQ(dry.status, 0) << dry.output;
  EXPECT_THAT(dry.output, HasSubstr("--dry-run: not removed"));
  EXPECT_EQ(NodeStatus()["allocatable"].count("rdma/hca_ib"), 1u);
  RunResult removed = RemoveStale();
  EXPECT_EQ(removed.status, 0) << removed.output;
  EXPECT_THAT(removed.output, HasSubstr("rdma/hca_ib: removed from node n1's status"));
  const nlohmann::json status = NodeStatus();
  EXPECT_EQ(status["capacity"], nlohmann::json({{"cpu", "8"}})) << status.dump();
  EXPECT_EQ(status["allocatable"], nlohmann::json({{"cpu", "8"}})) << status.dump();
  EXPECT_EQ(api.Stats()["nodeStatusPatches"], 1);
  EXPECT_EQ(ServedBy(), "dra");
  RunResult again = RemoveStale();
  EXPECT_EQ(again.status, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("not in node n1's status; nothing to remove"));
  // The pod's claim, as kube-scheduler makes it for `limits: rdma/hca_ib: 1`, is prepared.
  const nlohmann::json made = SchedulerMadeClaim("container-0-request-0", device_class);
  const auto claim = api.Admin("/allocate", made);
  ASSERT_EQ(claim["kind"], "ResourceClaim") << claim.dump();
  auto resp = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(resp.ok()) << resp.status();
  const auto& answer = resp->claims().at(claim["metadata"]["uid"].get<std::string>());
  EXPECT_EQ(answer.error(), "");
  EXPECT_EQ(answer.devices_size(), 1);
}

// Without components/dra-remove-stale-resources the command is refused by RBAC, says so, and
// nothing changes.
TEST_P(DraMove, WithoutItsRbacTheCommandChangesNothingAndSaysWhy) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  api.Admin("/node-status", {{"name", "n1"},
                             {"capacity", {{"rdma/hca_ib", "0"}}},
                             {"allocatable", {{"rdma/hca_ib", "0"}}}});
  RunResult refused = RemoveStale();
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("cannot patch resource \"nodes/status\""));
  EXPECT_EQ(NodeStatus()["allocatable"].count("rdma/hca_ib"), 1u);
  expected_forbidden = 1;
}

INSTANTIATE_TEST_SUITE_P(Releases, DraMove, ::testing::Values("1.34", "1.35", "1.36", "1.37"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           std::string name = Cat("v", p.param);
                           name.erase(std::remove(name.begin(), name.end(), '.'), name.end());
                           return name;
                         });

INSTANTIATE_TEST_SUITE_P(Releases, DraExtendedResource, ::testing::Values("1.36", "1.37"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           std::string name = Cat("v", p.param);
                           name.erase(std::remove(name.begin(), name.end(), '.'), name.end());
                           return name;
                         });

INSTANTIATE_TEST_SUITE_P(Releases, DraExplicitPerHca,
                         ::testing::Values("1.34", "1.35", "1.36", "1.37"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           std::string name = Cat("v", p.param);
                           name.erase(std::remove(name.begin(), name.end(), '.'), name.end());
                           return name;
                         });

INSTANTIATE_TEST_SUITE_P(Releases, DraOnRelease, ::testing::Values("1.34", "1.35", "1.36", "1.37"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           std::string name = Cat("v", p.param);
                           name.erase(std::remove(name.begin(), name.end(), '.'), name.end());
                           return name;
                         });

}  // namespace
}  // namespace rdmadp::testing
