// The `pods` command of the real binary on a fake node: the kubelet's pod-resources server
// (test/support/fake_pod_resources.h), a host cgroup tree laid out as the kubelet's systemd
// driver makes it, and the kubelet's links in /var/log/containers; both front ends' entries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>

#include "test/support/fake_pod_resources.h"
#include "test/support/node_use_tree.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {
namespace {

using std::chrono::minutes;
using ::testing::HasSubstr;

class PodsCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    h.AddDemoHcas();
    h.WriteConfig(PluginHarness::DemoConfig());
    auto fake = FakePodResources::Start(socket_, 34);
    ASSERT_TRUE(fake.ok()) << fake.status();
    kubelet_ = std::move(*fake);
  }

  void Container(const std::string& pod, const std::string& container, char id,
                 std::chrono::seconds age, const std::optional<std::string>& rdma) {
    tree_.Container("team-a", pod, container, id, age, rdma);
  }

  RunResult Pods(std::vector<std::string> more = {}) {
    std::vector<std::string> args = {
        "pods", "--pod-resources-socket=" + socket_, "--cgroup-root=" + tree_.cgroup_root(),
        "--container-logs-dir=" + tree_.links_dir(), "--node-name=node1"};
    args.insert(args.end(), more.begin(), more.end());
    return h.RunCommand(args);
  }

  PluginHarness h;
  const std::string socket_ = h.root() + "/pod-resources.sock";
  NodeUseTree tree_{h.root()};
  std::unique_ptr<FakePodResources> kubelet_;
};

// Every verdict at once: QP-less objects beyond contexts are use; contexts alone past the
// grace are not; a young one is in its grace; no rdma controller is unknown; objects on
// our HCAs without our devices are a foreign user; a container without our devices is not
// shown.
TEST_F(PodsCommand, TellsUsedUnusedInGraceUnknownAndForeign) {
  Container("trainer-0", "nccl", 'a', minutes(30),
            "mlx5_0 hca_handle=1 hca_object=57 \nmlx5_1 hca_handle=1 hca_object=2 \n"
            "mlx5_2 hca_handle=0 hca_object=0 \nmlx5_3 hca_handle=0 hca_object=0 \n");
  Container("trainer-1", "nccl", 'b', minutes(30),
            "mlx5_0 hca_handle=1 hca_object=0 \nmlx5_1 hca_handle=1 hca_object=0 \n"
            "mlx5_2 hca_handle=0 hca_object=0 \nmlx5_3 hca_handle=0 hca_object=0 \n");
  Container("trainer-2", "nccl", 'c', minutes(2),
            "mlx5_2 hca_handle=1 hca_object=0 \nmlx5_3 hca_handle=0 hca_object=0 \n");
  Container("trainer-3", "nccl", 'd', minutes(30), std::nullopt);
  Container("gpu-job", "main", 'e', minutes(30), "mlx5_3 hca_handle=1 hca_object=9 \n");
  Container("web", "nginx", 'f', minutes(30), "mlx5_0 hca_handle=0 hca_object=0 \n");
  auto pod = [](const std::string& name, char id, const std::string& resource) {
    return FakePod{.name = name,
                   .pod_namespace = "team-a",
                   .uid = NodeUseTree::Uid(id),
                   .containers = {FakeContainer("nccl", {{resource, {"3"}}})},
                   .finished = false};
  };
  kubelet_->SetPods({pod("trainer-0", 'a', "rdma/hca_shared_devices_a"),
                     pod("trainer-1", 'b', "rdma/hca_shared_devices_a"),
                     pod("trainer-2", 'c', "rdma/hca_shared_devices_b"),
                     pod("trainer-3", 'd', "rdma/hca_shared_devices_b"),
                     FakePod{.name = "web",
                             .pod_namespace = "team-a",
                             .uid = "0000000f-0000-0000-0000-000000000000",
                             .containers = {FakeContainer("nginx")},
                             .finished = false}});

  RunResult r = Pods();
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::ContainsRegex(
                            "team-a +trainer-0 +nccl +rdma/hca_shared_devices_a +mlx5_0,mlx5_1 "
                            "+2 +59 +- +30m +cgroup +used\n"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex(
                            "team-a +trainer-1 +nccl +rdma/hca_shared_devices_a +mlx5_0,mlx5_1 "
                            "+2 +0 +- +30m +cgroup +unused\n"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex(
                            "team-a +trainer-2 +nccl +rdma/hca_shared_devices_b +mlx5_2,mlx5_3 "
                            "+1 +0 +- +2m +cgroup +in grace\n"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex(
                            "team-a +trainer-3 +nccl +rdma/hca_shared_devices_b +mlx5_2,mlx5_3 "
                            "+- +- +- +30m +none +unknown\n"));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("nginx")));
  EXPECT_THAT(r.output, HasSubstr("Not read:\n  team-a/trainer-3/nccl: no rdma.current"));
  EXPECT_THAT(r.output, HasSubstr("RDMA objects on this plugin's HCAs without its devices:\n"
                                  "  team-a/gpu-job/main: mlx5_3 contexts=1 objects=9\n"));
  EXPECT_THAT(r.output, HasSubstr("hint: no rdma.current: the node needs cgroup v2"));
  EXPECT_THAT(r.output, HasSubstr("after 10m (--rdma-unused-grace)"));
  EXPECT_EQ(kubelet_->calls(), 1);

  // The same view for tools; a shorter grace moves the young one to unused.
  RunResult j = Pods({"--output=json", "--rdma-unused-grace=60"});
  ASSERT_EQ(j.status, 0) << j.output;
  YAML::Node doc = YAML::Load(j.output);
  EXPECT_EQ(doc["graceSeconds"].as<int>(), 60);
  ASSERT_EQ(doc["containers"].size(), 4u);
  const YAML::Node first = doc["containers"][0];
  EXPECT_EQ(first["pod"].as<std::string>(), "trainer-0");
  EXPECT_EQ(first["containerID"].as<std::string>(), std::string(64, 'a'));
  EXPECT_EQ(first["podUID"].as<std::string>(), "0000000a-0000-0000-0000-000000000000");
  EXPECT_EQ(first["counts"]["mlx5_0"]["hcaObject"].as<int>(), 57);
  EXPECT_EQ(first["resources"]["rdma/hca_shared_devices_a"][0].as<std::string>(), "3");
  EXPECT_TRUE(first["qps"].IsNull());
  EXPECT_EQ(first["verdict"].as<std::string>(), "used");
  EXPECT_EQ(doc["containers"][1]["verdict"].as<std::string>(), "unused");
  EXPECT_EQ(doc["containers"][2]["verdict"].as<std::string>(), "unused");
  EXPECT_EQ(doc["containers"][3]["verdict"].as<std::string>(), "unknown");
  EXPECT_EQ(doc["containers"][3]["notRead"].as<std::string>(),
            "no rdma.current (the rdma controller is not enabled down to this cgroup)");
  ASSERT_EQ(doc["foreign"].size(), 1u);
  EXPECT_EQ(doc["foreign"][0]["pod"].as<std::string>(), "gpu-job");
  EXPECT_EQ(kubelet_->calls(), 2);
}

// A DRA claim's device is judged on its own HCA: the pool is <node>/<resource>, the device
// hca-<PCI address> (the slices the DRA front end publishes).
TEST_F(PodsCommand, ADraClaimsDeviceIsJudgedOnItsHca) {
  h.WriteConfig(R"({"configList": [
      {"resourceName": "ib", "rdmaHcaMax": 4, "frontend": "dra",
       "selectors": {"linkTypes": ["infiniband"]}}]})");
  Container("claimer", "c", 'a', minutes(30),
            "mlx5_0 hca_handle=1 hca_object=0 \nmlx5_1 hca_handle=1 hca_object=12 \n");
  kubelet_->SetPods({FakePod{
      .name = "claimer",
      .pod_namespace = "team-a",
      .uid = "0000000a-0000-0000-0000-000000000000",
      .containers = {FakeContainer(
          "c", {},
          {{"team-a", "rdma", "rdma.k8s-rdma-shared-dp.io", "node1/ib", "hca-0000-10-00-0"},
           {"team-a", "other", "gpu.example.com", "node1/gpu", "gpu-0"}})},
      .finished = false}});
  RunResult r = Pods();
  ASSERT_EQ(r.status, 0) << r.output;
  // mlx5_1's objects are another claim's HCA's: this one's mlx5_0 holds a context only.
  EXPECT_THAT(r.output, ::testing::ContainsRegex(
                            "team-a +claimer +c +team-a/rdma +mlx5_0 +1 +0 +- +30m +cgroup "
                            "+unused\n"));
}

// --rdma-usage-qps reads the kernel's QP dumps: a kernel without NETLINK_RDMA (ib_core not
// loaded, as on the machine the tests were written on) is said and the verdicts come from the
// cgroups; one with it answers an empty dump for no HCA of ours, which must work too.
TEST_F(PodsCommand, QpsByOwnerOnThisMachinesKernel) {
  Container("trainer-0", "nccl", 'a', minutes(30),
            "mlx5_0 hca_handle=1 hca_object=0 \nmlx5_1 hca_handle=1 hca_object=0 \n");
  kubelet_->SetPods(
      {FakePod{.name = "trainer-0",
               .pod_namespace = "team-a",
               .uid = NodeUseTree::Uid('a'),
               .containers = {FakeContainer("nccl", {{"rdma/hca_shared_devices_a", {"1"}}})},
               .finished = false}});
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
  const bool has_rdma_netlink = fd >= 0;
  if (fd >= 0) ::close(fd);
  RunResult r = Pods({"--rdma-usage-qps"});
  ASSERT_EQ(r.status, 0) << r.output;
  if (has_rdma_netlink) {
    // The fake node's HCAs are not the kernel's: no device of ours in the dump, no QPs.
    EXPECT_THAT(r.output, HasSubstr("QPS: the kernel's QP dumps"));
    EXPECT_THAT(r.output, ::testing::ContainsRegex("trainer-0 +nccl .* +0 +30m +qp +unused\n"));
  } else {
    EXPECT_THAT(r.output, HasSubstr("problem: no NETLINK_RDMA on this node (ib_core not loaded): "
                                    "QPs by owner are not counted\n"));
    EXPECT_THAT(r.output, HasSubstr("QPS: not counted (--rdma-usage-qps)"));
    EXPECT_THAT(r.output, ::testing::ContainsRegex("trainer-0 +nccl .* +- +30m +cgroup +unused\n"));
  }
}

// An entry's own grace: a container idle for 30 minutes is still in grace where its entry
// gives an hour; one holding two entries' resources gets the longer.
TEST_F(PodsCommand, AnEntrysOwnGraceIsTheContainers) {
  std::string config = PluginHarness::DemoConfig();
  const std::string name = R"("resourceName": "hca_shared_devices_a",)";
  config.replace(config.find(name), name.size(), name + R"( "unusedGraceSeconds": 3600,)");
  h.WriteConfig(config);
  const char* idle =
      "mlx5_0 hca_handle=1 hca_object=0 \nmlx5_1 hca_handle=1 hca_object=0 \n"
      "mlx5_2 hca_handle=1 hca_object=0 \nmlx5_3 hca_handle=1 hca_object=0 \n";
  Container("a-only", "nccl", 'a', minutes(30), idle);
  Container("b-only", "nccl", 'b', minutes(30), idle);
  Container("both", "nccl", 'c', minutes(30), idle);
  auto pod = [](const std::string& pod_name, char id, std::vector<FakeDevices> devices) {
    return FakePod{.name = pod_name,
                   .pod_namespace = "team-a",
                   .uid = NodeUseTree::Uid(id),
                   .containers = {FakeContainer("nccl", std::move(devices))},
                   .finished = false};
  };
  kubelet_->SetPods(
      {pod("a-only", 'a', {{"rdma/hca_shared_devices_a", {"1"}}}),
       pod("b-only", 'b', {{"rdma/hca_shared_devices_b", {"1"}}}),
       pod("both", 'c',
           {{"rdma/hca_shared_devices_a", {"1"}}, {"rdma/hca_shared_devices_b", {"1"}}})});
  RunResult r = Pods();
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::ContainsRegex("a-only +nccl .* +30m +cgroup +in grace\n"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("b-only +nccl .* +30m +cgroup +unused\n"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex("both +nccl .* +30m +cgroup +in grace\n"));
}

// A DRA pool is named after its node: without one, pods says so instead of matching nothing.
TEST_F(PodsCommand, ADraEntryNeedsTheNodesName) {
  h.WriteConfig(R"({"configList": [
      {"resourceName": "ib", "rdmaHcaMax": 4, "frontend": "dra",
       "selectors": {"linkTypes": ["infiniband"]}}]})");
  RunResult r = h.RunCommand({"pods", "--pod-resources-socket=" + socket_});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.output, HasSubstr("rdma/ib is a DRA entry: its pool is named after the node; "
                                  "pass --node-name or set NODE_NAME"));
  EXPECT_EQ(kubelet_->calls(), 0);
}

// No kubelet: said with how to mount it, exit 1; the rest of the node is still shown.
TEST_F(PodsCommand, WithoutTheKubeletItSaysHowAndFails) {
  kubelet_.reset();
  Container("gpu-job", "main", 'e', minutes(30), "mlx5_0 hca_handle=1 hca_object=9 \n");
  RunResult r = Pods();
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("(no container holds this plugin's devices)"));
  EXPECT_THAT(r.output, HasSubstr("problem: pod-resources List on " + socket_ + ": "));
  EXPECT_THAT(r.output, HasSubstr("hint: the kubelet's pod-resources socket is not reachable"));
  EXPECT_THAT(r.output, HasSubstr("  team-a/gpu-job/main: mlx5_0 contexts=1 objects=9\n"));
}

}  // namespace
}  // namespace rdmadp::testing
