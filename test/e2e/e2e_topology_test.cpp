// deviceModel "perHca" under the kubelet's Topology Manager (issue 56), end to end: the real
// binary on a fake GPU node (4 InfiniBand HCAs, two on each of 2 NUMA nodes, and a GPU-like
// resource with two GPUs on each), the kubelet simulator's view of it, and a pod's container
// admitted as the kubelet admits it (test/support/kubelet_admission.h: the Topology
// Manager's hint merge and policy, the device manager's choice of devices, our
// GetPreferredAllocation, our Allocate). What the container gets is read from the Allocate
// answer over the real socket.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "test/support/kubelet_admission.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {
namespace {

using std::chrono::milliseconds;
using topology::Policy;

constexpr char kHca[] = "rdma/hca";
constexpr char kGpu[] = "example.com/gpu";

constexpr char kPerHcaConfig[] = R"({"periodicUpdateInterval": 0, "configList": [
    {"resourceName": "hca", "rdmaHcaMax": 1, "deviceModel": "perHca", "envHints": ["nccl"],
     "selectors": {"vendors": ["15b3"]}}]})";
constexpr char kSlotsConfig[] = R"({"periodicUpdateInterval": 0, "configList": [
    {"resourceName": "hca", "rdmaHcaMax": 4, "envHints": ["nccl"],
     "selectors": {"vendors": ["15b3"]}}]})";

class TopologyE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 4; ++i) h.node().Add(FakeNode::ConnectX(i, i < 2 ? 0 : 1, true));
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "---- plugin log ----\n" << h.PluginLog();
  }
  // Serves `config`; returns the admission of a kubelet running `policy` on NUMA nodes 0, 1.
  std::unique_ptr<KubeletAdmission> Serve(const char* config, Policy policy, int devices) {
    h.WriteConfig(config);
    EXPECT_TRUE(h.kubelet().Start().ok());
    h.StartPlugin({});
    EXPECT_TRUE(h.kubelet().WaitFor(
        [&](const SimState& s) {
          auto it = s.resources.find(kHca);
          return it != s.resources.end() && it->second.stream_open &&
                 it->second.allocatable == devices;
        },
        milliseconds(10000)))
        << h.PluginLog();
    auto admission = std::make_unique<KubeletAdmission>(h.kubelet(), policy, std::vector{0, 1});
    admission->AddStaticResource(kGpu, {{"gpu0", {std::vector{0}}},
                                        {"gpu1", {std::vector{0}}},
                                        {"gpu2", {std::vector{1}}},
                                        {"gpu3", {std::vector{1}}}});
    return admission;
  }
  static std::vector<std::string> Paths(const v1beta1::ContainerAllocateResponse& answer) {
    std::vector<std::string> out;
    for (const auto& d : answer.devices()) out.push_back(d.host_path());
    return out;
  }

  PluginHarness h;
};

// The issue's "done when": 1 GPU and 1 exclusive HCA, aligned on one NUMA node by
// single-numa-node, and the container gets that one HCA's devices and variables.
TEST_F(TopologyE2E, SingleNumaNodeAlignsOneGpuAndOneHcaAndTheContainerGetsThatHcaOnly) {
  auto kubelet = Serve(kPerHcaConfig, Policy::kSingleNumaNode, 4);
  auto first = kubelet->Admit({{kGpu, 1}, {kHca, 1}});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->admitted) << first->reason;
  EXPECT_EQ(first->hint.numa_affinity, topology::BitMask{0b01});
  EXPECT_TRUE(first->hint.preferred);
  EXPECT_THAT(first->devices.at(kGpu), ::testing::ElementsAre("gpu0"));
  // Two HCAs of node 0 were aligned: the kubelet asked us which (and we chose the first).
  EXPECT_EQ(first->preferred_calls, 1);
  EXPECT_THAT(first->devices.at(kHca), ::testing::ElementsAre("0000:10:00.0-0"));
  const auto& answer = first->answers.at(kHca);
  EXPECT_THAT(Paths(answer),
              ::testing::ElementsAre("/dev/infiniband/issm0", "/dev/infiniband/umad0",
                                     "/dev/infiniband/uverbs0", "/dev/infiniband/rdma_cm"));
  EXPECT_EQ(answer.envs().at("PCIDEVICE_RDMA_HCA"), "0000:10:00.0");
  EXPECT_EQ(answer.envs().at("NCCL_IB_HCA"), "=mlx5_0:1");

  // The next two such pods: node 0's other GPU and HCA, then node 1's first.
  auto second = kubelet->Admit({{kGpu, 1}, {kHca, 1}});
  ASSERT_TRUE(second.ok() && second->admitted);
  EXPECT_THAT(second->devices.at(kGpu), ::testing::ElementsAre("gpu1"));
  EXPECT_THAT(second->devices.at(kHca), ::testing::ElementsAre("0000:11:00.0-0"));
  EXPECT_EQ(second->preferred_calls, 0);  // one aligned HCA left: nothing to prefer
  auto third = kubelet->Admit({{kGpu, 1}, {kHca, 1}});
  ASSERT_TRUE(third.ok() && third->admitted);
  EXPECT_EQ(third->hint.numa_affinity, topology::BitMask{0b10});
  EXPECT_THAT(third->devices.at(kHca), ::testing::ElementsAre("0000:12:00.0-0"));
  EXPECT_EQ(third->answers.at(kHca).envs().at("PCIDEVICE_RDMA_HCA"), "0000:12:00.0");
}

// The same pod with "slots": every slot carries both NUMA nodes, so the policy admits it on
// one, and the container gets the whole pool.
TEST_F(TopologyE2E, TheSamePodWithSlotsGetsTheWholePool) {
  auto kubelet = Serve(kSlotsConfig, Policy::kSingleNumaNode, 4);
  auto pod = kubelet->Admit({{kGpu, 1}, {kHca, 1}});
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_TRUE(pod->admitted) << pod->reason;
  EXPECT_EQ(pod->preferred_calls, 0);  // slots offer no GetPreferredAllocation
  const auto& answer = pod->answers.at(kHca);
  EXPECT_EQ(answer.envs().at("PCIDEVICE_RDMA_HCA"),
            "0000:10:00.0,0000:11:00.0,0000:12:00.0,0000:13:00.0");
  EXPECT_EQ(answer.envs().at("NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
  EXPECT_EQ(Paths(answer).size(), 13u);  // 4 x (issm, umad, uverbs) and rdma_cm
}

// single-numa-node refuses what one node cannot hold; two HCAs of one node are given distinct.
TEST_F(TopologyE2E, SingleNumaNodeRefusesThreeHcasAndGivesTwoOfOneNode) {
  auto kubelet = Serve(kPerHcaConfig, Policy::kSingleNumaNode, 4);
  auto refused = kubelet->Admit({{kGpu, 1}, {kHca, 3}});
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE(refused->admitted);
  EXPECT_EQ(refused->reason, "TopologyAffinityError");
  EXPECT_TRUE(refused->answers.empty());
  EXPECT_TRUE(kubelet->in_use().empty());

  auto two = kubelet->Admit({{kGpu, 2}, {kHca, 2}});
  ASSERT_TRUE(two.ok() && two->admitted);
  EXPECT_EQ(two->hint.numa_affinity, topology::BitMask{0b01});
  EXPECT_THAT(two->devices.at(kHca), ::testing::ElementsAre("0000:10:00.0-0", "0000:11:00.0-0"));
  EXPECT_EQ(two->answers.at(kHca).envs().at("PCIDEVICE_RDMA_HCA"), "0000:10:00.0,0000:11:00.0");
}

// Two shares per HCA: the kubelet's own pick of the aligned IDs, in its order, would be both
// shares of one HCA; ours is two HCAs.
TEST_F(TopologyE2E, TwoSharesAskedAreTwoHcasNotOneHcaTwice) {
  std::string config = kPerHcaConfig;
  config.replace(config.find("\"rdmaHcaMax\": 1"), 15, "\"rdmaHcaMax\": 2");
  auto kubelet = Serve(config.c_str(), Policy::kSingleNumaNode, 8);
  auto pod = kubelet->Admit({{kGpu, 1}, {kHca, 2}});
  ASSERT_TRUE(pod.ok() && pod->admitted);
  EXPECT_EQ(pod->preferred_calls, 1);
  EXPECT_THAT(pod->devices.at(kHca), ::testing::ElementsAre("0000:10:00.0-0", "0000:11:00.0-0"));
  EXPECT_EQ(pod->answers.at(kHca).envs().at("PCIDEVICE_RDMA_HCA"), "0000:10:00.0,0000:11:00.0");
}

// restricted admits only a preferred merge: 3 GPUs need both nodes while 1 HCA prefers one,
// so the merge is not preferred and the pod is refused; 2 GPUs and 2 HCAs fit node 0.
TEST_F(TopologyE2E, RestrictedAdmitsOnlyWhatAlignsPreferred) {
  auto kubelet = Serve(kPerHcaConfig, Policy::kRestricted, 4);
  auto refused = kubelet->Admit({{kGpu, 3}, {kHca, 1}});
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE(refused->admitted);
  EXPECT_EQ(refused->reason, "TopologyAffinityError");

  auto pod = kubelet->Admit({{kGpu, 2}, {kHca, 2}});
  ASSERT_TRUE(pod.ok() && pod->admitted);
  EXPECT_EQ(pod->hint.numa_affinity, topology::BitMask{0b01});
  EXPECT_THAT(pod->devices.at(kGpu), ::testing::ElementsAre("gpu0", "gpu1"));
  EXPECT_THAT(pod->devices.at(kHca), ::testing::ElementsAre("0000:10:00.0-0", "0000:11:00.0-0"));
}

}  // namespace
}  // namespace rdmadp::testing
