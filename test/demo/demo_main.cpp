// The built-in demo node: a fake sysfs with four ConnectX HCAs, the kubelet simulator, and
// the real plugin binary. Prints what the kubelet saw: registrations, capacity, and one
// allocation (device nodes and environment); then `pods` on two containers holding the pool,
// one using it and one not; then stops the plugin with SIGTERM. Exits 1
// when any of that is missing (ctest runs it as demo_test).
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>

#include "pkg/text/cat.h"
#include "test/support/fake_pod_resources.h"
#include "test/support/node_use_tree.h"
#include "test/support/plugin_harness.h"

using namespace rdmadp;
using namespace rdmadp::testing;
using std::chrono::milliseconds;

namespace {

void Say(const std::string& line) {
  std::printf("[kubelet-sim] %s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

int main() {
  PluginHarness h;
  h.AddDemoHcas();
  h.WriteConfig(PluginHarness::DemoConfig());
  if (auto s = h.kubelet().Start(); !s.ok()) {
    std::fprintf(stderr, "demo: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  Say("fake node at " + h.root() +
      "/node: 4 ConnectX HCAs (2 InfiniBand on NUMA 0, 2 RoCE on "
      "NUMA 1) and one Intel NIC without RDMA");
  Say("config:\n" + PluginHarness::DemoConfig());
  Say("starting the plugin: " + PluginBinary() + " " + Join(h.PluginArgs(), " "));
  const auto start = std::chrono::steady_clock::now();
  h.StartPlugin({}, /*inherit_stderr=*/true);

  const std::vector<std::string> names = {"rdma/hca_shared_devices_a", "rdma/hca_shared_devices_b"};
  const bool ready = h.kubelet().WaitFor(
      [&](const SimState& s) {
        for (const auto& n : names) {
          auto it = s.resources.find(n);
          if (it == s.resources.end() || it->second.snapshots.empty()) return false;
        }
        return true;
      },
      milliseconds(10000));
  const auto ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start).count();
  if (!ready) {
    Say("the plugin did not register both resources within 10 s");
    return 1;
  }
  SimState state = h.kubelet().State();
  Say(Cat("both resources registered and listed within ", ms, " ms of exec"));
  for (const auto& n : names) {
    const SimResource& r = state.resources.at(n);
    const auto& last = r.snapshots.back();
    std::string numa;
    if (last.devices_size() > 0 && last.devices(0).has_topology()) {
      for (const auto& node : last.devices(0).topology().nodes()) {
        Append(numa, numa.empty() ? "" : " ", node.id());
      }
    }
    Say(Cat(n, ": endpoint ", r.endpoint, "; capacity ", r.capacity, ", allocatable ",
            r.allocatable, "; NUMA nodes [", numa, "]"));
  }

  Say("pod requests rdma/hca_shared_devices_a: 1 -> Allocate([\"0\"])");
  auto alloc = h.kubelet().Allocate("rdma/hca_shared_devices_a", {"0"});
  if (!alloc.ok()) {
    Say("Allocate failed: " + std::string(alloc.status().message()));
    return 1;
  }
  const auto& answer = alloc->container_responses(0);
  for (const auto& spec : answer.devices()) {
    Say(Cat("  device ", spec.host_path(), " -> ", spec.container_path(), " (", spec.permissions(),
            ")"));
  }
  // The environment the container gets (docs/pod-env.md), in name order; _INFO is long JSON.
  const std::map<std::string, std::string> envs(answer.envs().begin(), answer.envs().end());
  for (const auto& [name, value] : envs) {
    constexpr size_t kShown = 96;
    Say(Cat("  env ", name, "=", value.substr(0, kShown),
            value.size() > kShown ? Cat("... (", value.size(), " bytes)") : ""));
  }
  if (envs.empty()) {
    Say("the allocation carries no environment");
    return 1;
  }

  // Per-container RDMA use (docs/observability.md): two pods hold the pool; one's processes
  // made verbs objects on its HCAs, the other's only opened contexts (NCCL fallen back to TCP).
  Say("two pods hold rdma/hca_shared_devices_a for 30 min: trainer-0 made verbs objects, "
      "trainer-1 opened contexts only; `k8s-rdma-shared-dp pods` on the node:");
  NodeUseTree tree(h.root() + "/usage");
  tree.Container("team-a", "trainer-0", "nccl", 'a', std::chrono::minutes(30),
                 "mlx5_0 hca_handle=1 hca_object=57 \nmlx5_1 hca_handle=1 hca_object=12 \n");
  tree.Container("team-a", "trainer-1", "nccl", 'b', std::chrono::minutes(30),
                 "mlx5_0 hca_handle=1 hca_object=0 \nmlx5_1 hca_handle=1 hca_object=0 \n");
  const std::string socket = h.root() + "/usage/pod-resources.sock";
  auto pod_resources = FakePodResources::Start(socket, 34);
  if (!pod_resources.ok()) {
    Say(std::string(pod_resources.status().message()));
    return 1;
  }
  std::vector<FakePod> pods;
  for (const auto& [name, id] : {std::pair{"trainer-0", 'a'}, std::pair{"trainer-1", 'b'}}) {
    pods.push_back({.name = name,
                    .pod_namespace = "team-a",
                    .uid = NodeUseTree::Uid(id),
                    .containers = {FakeContainer("nccl", {{"rdma/hca_shared_devices_a", {"0"}}})},
                    .finished = false});
  }
  (*pod_resources)->SetPods(std::move(pods));
  const RunResult use = h.RunCommand({"pods", "--pod-resources-socket=" + socket,
                                      "--cgroup-root=" + tree.cgroup_root(),
                                      "--container-logs-dir=" + tree.links_dir()});
  std::printf("%s", use.output.c_str());
  if (use.status != 0 || use.output.find("cgroup  used") == std::string::npos ||
      use.output.find("cgroup  unused") == std::string::npos) {
    Say("pods did not show one used and one unused container");
    return 1;
  }

  Say("sending SIGTERM to the plugin");
  h.plugin().Signal(SIGTERM);
  auto status = h.plugin().WaitExit(milliseconds(5000));
  size_t leftover = 0;
  for (const auto& e : std::filesystem::directory_iterator(h.kubelet().device_plugin_dir())) {
    if (e.path().filename() != "kubelet.sock") ++leftover;
  }
  Say(Cat("plugin exited with status ", status.value_or(-1), "; plugin sockets left: ", leftover));
  return status == 0 && leftover == 0 ? 0 : 1;
}
