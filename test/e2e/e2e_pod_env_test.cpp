// The container learns which HCAs it got (docs/pod-env.md). What the kubelet receives in the
// Allocate answer, over the real gRPC socket, parsed with a real JSON parser: the SR-IOV
// plugin's PCIDEVICE_<RESOURCE> and _INFO, and the opt-in NCCL/UCX hints, following the pool
// as it is at Allocate time.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test/e2e/e2e_fixture.h"

namespace rdmadp::testing {
namespace {

constexpr char kHinted[] = R"({"periodicUpdateInterval": 0, "configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]},
     "envHints": ["nccl", "ucx"]},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}, "envHints": ["ucx"]},
    {"resourceName": "usable_only", "rdmaHcaMax": 10,
     "selectors": {"linkTypes": ["infiniband"]}, "skipUnusable": true}]})";
constexpr char kUsable[] = "rdma/usable_only";

std::map<std::string, std::string> Env(const v1beta1::AllocateResponse& r) {
  const auto& envs = r.container_responses(0).envs();
  return {envs.begin(), envs.end()};
}

class PodEnvE2E : public E2E {
 protected:
  void SetUp() override {
    E2E::SetUp();
    // A management function beside the demo's HCAs: InfiniBand, port ACTIVE, GIDs all zero.
    FakeFunction management = FakeNode::ConnectX(6, 0, /*infiniband=*/true);
    management.zero_gids = true;
    h.node().Add(management);
  }
  std::map<std::string, std::string> AllocateEnv(const std::string& resource) {
    auto r = h.kubelet().Allocate(resource, {"0"});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? Env(*r) : std::map<std::string, std::string>{};
  }
};

TEST_F(PodEnvE2E, EveryAllocateSaysWhichHcasTheContainerGot) {
  StartAll(kHinted, {kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  ASSERT_TRUE(WaitRegistered(kUsable));

  auto a = AllocateEnv(kA);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a.at("PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A"), "0000:10:00.0,0000:11:00.0,0000:16:00.0");
  // The management function is in the pool (no skipUnusable) but never in a hint.
  EXPECT_EQ(a.at("NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(a.at("UCX_NET_DEVICES"), "mlx5_0:1,mlx5_1:1");
  const auto info = nlohmann::json::parse(a.at("PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A_INFO"));
  ASSERT_EQ(info.size(), 3u);
  const auto& hca = info.at("0000:10:00.0");
  EXPECT_EQ(hca.at("generic").at("deviceID"), "0000:10:00.0");
  EXPECT_EQ(hca.at("rdma").at("rdma_dev"), "mlx5_0");
  EXPECT_EQ(hca.at("rdma").at("uverbs"), "/dev/infiniband/uverbs0");
  EXPECT_EQ(hca.at("rdma").at("rdma_cm"), "/dev/infiniband/rdma_cm");
  EXPECT_EQ(hca.at("netdev"), "ib0");
  EXPECT_EQ(hca.at("linkLayer"), "InfiniBand");
  EXPECT_EQ(hca.at("usable"), true);
  EXPECT_EQ(info.at("0000:16:00.0").at("usable"), false);

  // A second pool in the same container: its own PCIDEVICE_ names, its own hint.
  auto b = AllocateEnv(kB);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b.at("PCIDEVICE_RDMA_HCA_SHARED_DEVICES_B"), "0000:12:00.0,0000:13:00.0");
  EXPECT_EQ(b.at("UCX_NET_DEVICES"), "mlx5_2:1,mlx5_3:1");
  EXPECT_EQ(b.count("NCCL_IB_HCA"), 0u);

  // skipUnusable: the management function is not in the pool at all.
  auto usable = AllocateEnv(kUsable);
  ASSERT_EQ(usable.size(), 2u);
  EXPECT_EQ(usable.at("PCIDEVICE_RDMA_USABLE_ONLY"), "0000:10:00.0,0000:11:00.0");
  EXPECT_EQ(h.Metric("rdma_shared_dp_hcas{resource=\"rdma/usable_only\"}"), 2);
}

TEST_F(PodEnvE2E, AHotAddedHcaAndAPortGoingDownShowInTheNextAllocate) {
  StartAll(kHinted, {kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  h.node().Add(FakeNode::ConnectX(7, 1, /*infiniband=*/true));
  h.node().SetPortState("mlx5_1", 1, "1: DOWN");
  h.plugin().Signal(SIGHUP);
  ASSERT_EQ(h.AwaitMetric("rdma_shared_dp_hcas{resource=\"rdma/hca_shared_devices_a\"}", 4), 4);
  // The rescan that counted the new HCA also built the pool every Allocate now answers from.
  auto a = AllocateEnv(kA);
  EXPECT_EQ(a.at("PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A"),
            "0000:10:00.0,0000:11:00.0,0000:16:00.0,0000:17:00.0");
  EXPECT_EQ(a.at("NCCL_IB_HCA"), "=mlx5_0:1,mlx5_7:1");
  EXPECT_EQ(a.at("UCX_NET_DEVICES"), "mlx5_0:1,mlx5_7:1");
  EXPECT_EQ(nlohmann::json::parse(a.at("PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A_INFO"))
                .at("0000:17:00.0")
                .at("numaNode"),
            1);
  // skipUnusable: the port that went down took its HCA out; the new one came in.
  EXPECT_EQ(h.Metric("rdma_shared_dp_hcas{resource=\"rdma/usable_only\"}"), 2);
  EXPECT_EQ(AllocateEnv(kUsable).at("PCIDEVICE_RDMA_USABLE_ONLY"), "0000:10:00.0,0000:17:00.0");
}

// The RoCE class and GID (docs/pod-env.md, "The RoCE class and GID"): a number from the config
// is in every Allocate answer; "auto" only once every usable port has the same class, and
// until then the metric and /readyz's detail say what is missing; a rescan after the admin
// sets the class brings it to the next pod.
TEST_F(PodEnvE2E, TheRoceClassFollowsThePortsAndWhatIsMissingIsSaid) {
  StartAll(R"({"periodicUpdateInterval": 0, "configList": [
      {"resourceName": "roce", "rdmaHcaMax": 10, "selectors": {"linkTypes": ["ether"]},
       "envHints": ["nccl"], "trafficClass": "auto", "gidIndex": 3}]})",
           {kMetricsFlag});
  ASSERT_TRUE(WaitRegistered("rdma/roce"));
  auto env = AllocateEnv("rdma/roce");
  EXPECT_EQ(env.at("NCCL_IB_GID_INDEX"), "3");
  EXPECT_EQ(env.count("NCCL_IB_TC"), 0u);
  EXPECT_EQ(env.count("UCX_IB_GID_INDEX"), 0u) << "ucx is not in envHints";
  EXPECT_EQ(h.Metric(Series("rdma_shared_dp_pod_env_not_set", "rdma/roce")), 1);
  const std::string missing =
      "rdma/roce: NCCL_IB_TC is not in the pods' environment: no usable port has a traffic "
      "class (tc/<port>/traffic_class) (mlx5_2:1, mlx5_3:1: none)\n";
  EXPECT_EQ(h.MetricsHttp("/readyz"), std::make_pair(200, "ready\n" + missing));

  for (const char* ibdev : {"mlx5_2", "mlx5_3"}) {
    const auto dir =
        std::filesystem::canonical(h.node().sysfs_root() + "/class/infiniband/" + ibdev) / "tc/1";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "traffic_class") << "Global tclass=106\n";
  }
  h.plugin().Signal(SIGHUP);
  ASSERT_EQ(h.AwaitMetric(Series("rdma_shared_dp_pod_env_not_set", "rdma/roce"), 0), 0);
  env = AllocateEnv("rdma/roce");
  EXPECT_EQ(env.at("NCCL_IB_TC"), "106");
  EXPECT_EQ(h.MetricsHttp("/readyz"), std::make_pair(200, std::string("ready\n")));
}

}  // namespace
}  // namespace rdmadp::testing
