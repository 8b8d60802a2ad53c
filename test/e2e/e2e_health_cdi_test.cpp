// Health and CDI: port states, vanished char devices, CDI specs that follow the pool.
#include <nlohmann/json.hpp>
#include <sstream>

#include "test/e2e/e2e_fixture.h"

namespace rdmadp::testing {
namespace {

// CDI mode: names in the spec file that a runtime would resolve.
std::vector<std::string> SpecDeviceNames(const std::string& path) {
  std::vector<std::string> names;
  YAML::Node spec = YAML::LoadFile(path);
  for (const auto& d : spec["devices"]) {
    names.push_back(spec["kind"].Scalar() + "=" + d["name"].Scalar());
  }
  return names;
}

TEST_F(E2E, PeriodicRescanReportsPortHealthAndRecovers) {
  StartAll(PluginHarness::DemoConfig(/*periodic_update_interval=*/1));
  ASSERT_TRUE(WaitRegistered(kA));
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  // One HCA still has an ACTIVE port: the pool stays healthy and nothing is pushed.
  h.node().SetPortState("mlx5_1", 1, "1: DOWN");
  const auto down_at = Clock::now();
  ASSERT_TRUE(WaitSnapshot(
      kA, [](const auto& m) { return AllHealth(m, "Unhealthy"); }, milliseconds(5000)));
  std::cout << "[measured] port down -> Unhealthy at the kubelet (1 s interval): "
            << MsSince(down_at) << " ms\n";
  EXPECT_EQ(Resource(kA).allocatable, 0);
  EXPECT_EQ(Resource(kA).capacity, 1000);
  h.node().SetPortState("mlx5_1", 1, "4: ACTIVE");
  ASSERT_TRUE(WaitSnapshot(
      kA, [](const auto& m) { return AllHealth(m, "Healthy"); }, milliseconds(5000)));
  EXPECT_EQ(Resource(kA).allocatable, 1000);
  // Resource b never changed: exactly one message.
  EXPECT_EQ(Resource(kB).snapshots.size(), 1u);
}

// During a subnet manager's bring-up every port is INIT and the pool is Unhealthy
// (allocatable 0). That is the operator's to fix, so it is a warning that says what to
// check, once per distinct reason, and a line when the pool is usable again
// (docs/troubleshooting.md). (The warning is the feature here: it is asserted as the
// operator reads it.)
TEST_F(E2E, PortsWaitingForTheSubnetManagerAreAWarningThatNamesIt) {
  h.node().SetPortState("mlx5_0", 1, "2: INIT");
  h.node().SetPortState("mlx5_1", 1, "2: INIT");
  StartAll(PluginHarness::DemoConfig(/*periodic_update_interval=*/1));
  ASSERT_TRUE(WaitRegistered(kA));
  EXPECT_EQ(Resource(kA).allocatable, 0);
  const std::string warning =
      "rdma/hca_shared_devices_a: every HCA is unhealthy, so the kubelet admits no pod "
      "(0000:10:00.0: mlx5_0 port 1 INIT (the link is up but the port is not active yet: is a "
      "subnet manager, opensm or UFM, running on this fabric?); 0000:11:00.0: mlx5_1 port 1 "
      "INIT (";
  EXPECT_THAT(h.PluginLog(), HasSubstr(warning));
  h.node().SetPortState("mlx5_0", 1, "4: ACTIVE");
  ASSERT_TRUE(
      h.kubelet().WaitFor([](const SimState& s) { return s.resources.at(kA).allocatable == 1000; },
                          milliseconds(5000)));
  // Said once, though every 1 s rescan met it until the port came up.
  const std::string log = h.PluginLog();
  EXPECT_EQ(log.find(warning), log.rfind(warning));
}

// A missing /dev/infiniband/rdma_cm (rdma_ucm not loaded, or the host's /dev not mounted)
// leaves every HCA out of the pool: the warning names it instead of "no device matches".
TEST_F(E2E, AMissingRdmaCmIsNamedNotCalledANonMatch) {
  std::filesystem::remove(h.node().dev_root() + "/infiniband/rdma_cm");
  StartAll(PluginHarness::DemoConfig(), {"--log-format=json"});
  ASSERT_TRUE(WaitRegistered(kA));
  EXPECT_EQ(Resource(kA).capacity, 0);
  ASSERT_TRUE(LogShows("none can serve a pod"));
  // The resource's warnings: exactly one, naming rdma_cm (a second, of any wording, would be
  // the non-match this replaced).
  std::vector<std::string> warnings;
  std::istringstream lines(h.PluginLog());
  for (std::string line; std::getline(lines, line);) {
    const auto obj = nlohmann::json::parse(line, nullptr, false);
    if (!obj.is_object() || obj.value("level", "") != "warning") continue;
    if (obj.value("resource", "") == kA) warnings.push_back(obj.value("msg", ""));
  }
  ASSERT_EQ(warnings.size(), 1u) << ::testing::PrintToString(warnings);
  const std::string named =
      "rdma/hca_shared_devices_a: 2 function(s) match its selectors but "
      "none can serve a pod (0000:10:00.0: " +
      h.node().dev_root() + "/infiniband/rdma_cm is missing (load rdma_ucm";
  EXPECT_TRUE(warnings[0].starts_with(named)) << warnings[0];
}

TEST_F(E2E, VanishedCharDevicesDropTheHcaUntilTheyReturn) {
  StartAll(PluginHarness::DemoConfig(1));
  ASSERT_TRUE(WaitRegistered(kA));
  h.node().RemoveCharDevices("mlx5_1");  // driver reload
  auto count_paths = [&] {
    auto r = h.kubelet().Allocate(kA, {"0"});
    return r.ok() ? r->container_responses(0).devices_size() : -1;
  };
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kA).snapshots.size() >= 2; },
      milliseconds(5000)));
  EXPECT_EQ(count_paths(), 4);  // issm0 umad0 uverbs0 rdma_cm
  h.node().RestoreCharDevices("mlx5_1");
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kA).snapshots.size() >= 3; },
      milliseconds(5000)));
  EXPECT_EQ(count_paths(), 7);
}

// With the CDI directory full (a real tmpfs), Allocate would name devices no runtime can
// resolve. The kubelet is shown every slot Unhealthy, so it admits no pod, until a rescan
// writes the spec; then the pool is Healthy again by itself (docs/reliability.md).
TEST_F(E2E, AFullCdiDirectoryKeepsThePoolUnhealthyUntilTheSpecIsWritten) {
  const std::string cdi = h.root() + "/cdi-full";
  std::filesystem::create_directories(cdi);
  if (::mount("tmpfs", cdi.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs (needs root): " << std::strerror(errno);
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{cdi};
  {
    std::ofstream filler(cdi + "/filler");
    const std::string block(4096, 'x');
    for (int i = 0; i < 64 && filler; ++i) filler.write(block.data(), block.size()).flush();
  }
  StartAll(PluginHarness::DemoConfig(1), {"--use-cdi", "--cdi-spec-dir=" + cdi, kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) {
        const auto& r = s.resources.at(kA);
        return r.stream_open && r.capacity == 1000 && r.allocatable == 0;
      },
      milliseconds(5000)))
      << h.PluginLog();
  const std::string spec_a = cdi + "/k8s-rdma-shared-dp_rdma_hca_shared_devices_a.json";
  EXPECT_FALSE(std::filesystem::exists(spec_a));
  // One CDI error per resource, however many rescans meet the full directory.
  EXPECT_EQ(h.Metric(Series("rdma_shared_dp_healthy_slots", kA)), 0);
  EXPECT_EQ(h.Metric("rdma_shared_dp_errors_by_class_total{class=\"cdi\"}"), 2);
  std::filesystem::remove(cdi + "/filler");  // space again: the next 1 s rescan writes it
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kA).allocatable == 1000; }, milliseconds(5000)))
      << h.PluginLog();
  EXPECT_TRUE(std::filesystem::exists(spec_a));
  EXPECT_EQ(h.Metric(Series("rdma_shared_dp_healthy_slots", kA)), 1000);
  EXPECT_EQ(h.Metric("rdma_shared_dp_errors_by_class_total{class=\"cdi\"}"), 2);
}

TEST_F(E2E, CdiModeSpecsResolveAndFollowThePool) {
  const std::string cdi = h.root() + "/cdi";
  std::filesystem::create_directories(cdi);
  std::ofstream(cdi + "/nvidia.com_gpu.yaml") << "foreign spec\n";
  StartAll(PluginHarness::DemoConfig(1), {"--use-cdi", "--cdi-spec-dir=" + cdi});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  const std::string spec_a = cdi + "/k8s-rdma-shared-dp_rdma_hca_shared_devices_a.json";
  ASSERT_TRUE(std::filesystem::exists(spec_a));
  auto names_of = [&](const v1beta1::AllocateResponse& r) {
    std::vector<std::string> out;
    for (const auto& d : r.container_responses(0).cdi_devices()) out.push_back(d.name());
    return out;
  };
  auto a = h.kubelet().Allocate(kA, {"0"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->container_responses(0).devices_size(), 0);
  EXPECT_THAT(names_of(*a), ElementsAre("rdma/hca_shared_devices_a=0000:10:00.0",
                                        "rdma/hca_shared_devices_a=0000:11:00.0"));
  EXPECT_EQ(names_of(*a), SpecDeviceNames(spec_a));
  EXPECT_EQ(
      a->container_responses(0).annotations().at("cdi.k8s.io/rdmadp_rdma_hca_shared_devices_a"),
      "rdma/hca_shared_devices_a=0000:10:00.0,rdma/hca_shared_devices_a=0000:11:00.0");
  auto b = h.kubelet().Allocate(kB, {"0"});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(
      b->container_responses(0).annotations().count("cdi.k8s.io/rdmadp_rdma_hca_shared_devices_a"),
      0u);  // one key per resource: two pools in one container do not collide

  // The Go plugin's stale-spec bug: the spec must follow the pool.
  h.node().RemoveCharDevices("mlx5_1");
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kA).snapshots.size() >= 2; },
      milliseconds(5000)));
  EXPECT_THAT(SpecDeviceNames(spec_a), ElementsAre("rdma/hca_shared_devices_a=0000:10:00.0"));
  auto shrunk = h.kubelet().Allocate(kA, {"0"});
  ASSERT_TRUE(shrunk.ok());
  EXPECT_EQ(names_of(*shrunk), SpecDeviceNames(spec_a));

  h.plugin().Signal(SIGTERM);
  ASSERT_EQ(h.plugin().WaitExit(milliseconds(10000)), 0);
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(cdi))
    left.push_back(e.path().filename());
  EXPECT_THAT(left, ElementsAre("nvidia.com_gpu.yaml"));  // only our own files went
}

}  // namespace
}  // namespace rdmadp::testing
