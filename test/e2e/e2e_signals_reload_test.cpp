// Signals and reloads: SIGTERM/SIGINT/SIGQUIT exits, SIGHUP and file-watch reloads.
#include "pkg/text/cat.h"
#include "test/e2e/e2e_fixture.h"

namespace rdmadp::testing {
namespace {

TEST_F(E2E, SigtermStopsAndRemovesOnlyOwnSockets) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  const std::string foreign = h.kubelet().device_plugin_dir() + "/other-plugin.sock";
  std::ofstream(foreign) << "";
  const auto start = Clock::now();
  h.plugin().Signal(SIGTERM);
  auto status = h.plugin().WaitExit(milliseconds(10000));
  ASSERT_TRUE(status.has_value()) << "still running 10 s after SIGTERM";
  std::cout << "[measured] SIGTERM -> exit: " << MsSince(start) << " ms\n";
  EXPECT_EQ(*status, 0);
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(h.kubelet().device_plugin_dir())) {
    left.push_back(e.path().filename());
  }
  std::sort(left.begin(), left.end());
  EXPECT_THAT(left, ElementsAre("kubelet.sock", "other-plugin.sock"));
}

TEST_F(E2E, SigintAndSigquitAlsoExitZero) {
  for (int sig : {SIGINT, SIGQUIT}) {
    StartAll();
    ASSERT_TRUE(WaitRegistered(kA));
    h.plugin().Signal(sig);
    EXPECT_EQ(h.plugin().WaitExit(milliseconds(10000)), 0) << strsignal(sig);
    h.kubelet().Stop();
  }
}

TEST_F(E2E, SighupReloadRestartsOnlyWhatChanged) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  h.WriteConfig(R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}},
    {"resourceName": "hca_shared_devices_c", "rdmaHcaMax": 7, "selectors": {"linkTypes": ["ether"]}}
  ]})");
  const auto start = Clock::now();
  h.plugin().Signal(SIGHUP);
  ASSERT_TRUE(WaitRegistered("rdma/hca_shared_devices_c", 1, milliseconds(2000)));
  ASSERT_TRUE(h.kubelet().WaitFor([](const SimState& s) { return !s.resources.at(kB).stream_open; },
                                  milliseconds(2000)));
  std::cout << "[measured] SIGHUP -> new resource registered: " << MsSince(start) << " ms\n";
  SimResource a = Resource(kA);
  EXPECT_EQ(a.registrations, 1);  // unchanged: same socket, same stream
  EXPECT_TRUE(a.stream_open);
  // Its envHints went (the demo config has them): the running server's next Allocate
  // answers without them (a was applied before c registered, in the same loop turn).
  auto alloc = h.kubelet().Allocate(kA, {"0"});
  ASSERT_TRUE(alloc.ok()) << alloc.status();
  EXPECT_EQ(alloc->container_responses(0).envs().count("NCCL_IB_HCA"), 0u);
  EXPECT_EQ(alloc->container_responses(0).envs().size(), 2u);
  EXPECT_EQ(Resource("rdma/hca_shared_devices_c").capacity, 7);
}

// With DeviceSpecs (no --use-cdi) no hook can reach a container: /readyz and the metric say
// the entry's memlock is not applied (issue 52: /readyz was 200 and every counter 0).
TEST_F(E2E, AMemlockDeviceSpecsCannotApplyIsNotReady) {
  StartAll(R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000, "memlock": "unlimited",
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}}]})",
           {kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  EXPECT_EQ(h.Metric("rdma_shared_dp_memlock_applied{resource=\"rdma/hca_shared_devices_a\"}"), 0);
  EXPECT_EQ(h.MetricsHttp("/readyz"),
            std::make_pair(503, std::string("rdma/hca_shared_devices_a: memlock is configured and "
                                            "not applied: memlock needs CDI (--use-cdi); with "
                                            "DeviceSpecs its containers keep the runtime's "
                                            "RLIMIT_MEMLOCK\n")));
}

// The demo config with resource b's shares changed from 500 to 250.
constexpr char kBAt250[] = R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 250,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}}
]})";

// /readyz's body once it answers `status` (polled 50 ms apart, 5 s at most).
std::string AwaitReadyz(PluginHarness& h, int status) {
  std::pair<int, std::string> r;
  for (int i = 0; i < 100; ++i) {
    r = h.MetricsHttp("/readyz");
    if (r.first == status) return r.second;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Cat("<", r.first, "> ", r.second);
}

// A file rejected as a whole changes nothing that serves; the gauges and a /readyz detail
// line say so (readiness unchanged: the previous config serves in full), until a good reload.
TEST_F(E2E, InvalidReloadKeepsTheRunningConfigServingAndSaysSo) {
  StartAll(PluginHarness::DemoConfig(), {kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_last_reload_successful"), 1);
  const double hash = h.Metric("rdma_shared_dp_config_hash");
  EXPECT_GT(hash, 0);
  EXPECT_EQ(AwaitReadyz(h, 200), "ready\n");
  h.WriteConfig(R"({"configList": [{"resourceName": "x", "rdmaHcaMax": -1, "devices": ["ib0"]}]})");
  h.plugin().Signal(SIGHUP);
  // The counted config error is the barrier; nothing was applied.
  ASSERT_EQ(h.AwaitMetric("rdma_shared_dp_errors_by_class_total{class=\"config\"}", 1), 1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_reloads_total"), 0);
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_last_reload_successful"), 0);
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_hash"), hash);
  EXPECT_EQ(h.Metric(Series("rdma_shared_dp_slots", kA)), 1000);
  EXPECT_TRUE(Resource(kA).stream_open);
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"0"}).ok());
  EXPECT_EQ(h.MetricsHttp("/readyz"),
            std::make_pair(200, "ready\n" + h.config_path() +
                                    " was rejected at the last reload (\"config: "
                                    "configList[0].rdmaHcaMax: must be >= 0, got -1\"); the "
                                    "previous config keeps serving\n"));
  EXPECT_THAT(h.PluginLog(), HasSubstr("error: reload (SIGHUP) rejected; the running config "
                                       "keeps serving:"));
  // A good reload clears both.
  h.WriteConfig(kBAt250);
  h.plugin().Signal(SIGHUP);
  ASSERT_EQ(h.AwaitMetric("rdma_shared_dp_reloads_total", 1), 1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_last_reload_successful"), 1);
  EXPECT_NE(h.Metric("rdma_shared_dp_config_hash"), hash);
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kB).capacity == 250; }, milliseconds(3000)));
  EXPECT_EQ(AwaitReadyz(h, 200), "ready\n") << "no rejected file pending";
}

// Issue: one rdmaHcaMax of 1000000000 made the whole file invalid (the 200,000-slot total
// counted the entry its own bound had skipped): nothing started. Now it is skipped, at start and on
// reload, and every other entry serves; on reload an entry that was serving keeps its
// running version.
TEST_F(E2E, OneAbsurdEntryCostsOnlyItselfAtStartAndOnReload) {
  StartAll(R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}},
    {"resourceName": "absurd", "rdmaHcaMax": 1000000000, "selectors": {"vendors": ["15b3"]}},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 1000,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}}]})",
           {kMetricsFlag, "--config-error-interval=1"});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  EXPECT_EQ(Resource(kB).capacity, 1000);
  // Said again while it stays out, for clusters that read logs, not probes.
  const std::string again =
      "error: configList[1] (absurd) is still skipped: config: configList[1].rdmaHcaMax: must be "
      "<= 100000";
  auto count = [&] {
    const std::string log = h.PluginLog();
    size_t n = 0;
    for (size_t at = log.find(again); at != std::string::npos; at = log.find(again, at + 1)) ++n;
    return n;
  };
  EXPECT_TRUE(WaitForFiles(
      h.root(), [&] { return count() >= 2; }, milliseconds(5000)))
      << h.PluginLog();
  EXPECT_EQ(h.kubelet().State().resources.count("rdma/absurd"), 0u);
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_entries_skipped"), 1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_last_reload_successful"), 0);
  // validate says what a start does.
  RunResult v = h.RunCommand({"validate"});
  EXPECT_EQ(v.status, 1);
  EXPECT_THAT(v.output, HasSubstr("configList[1] (absurd) would be skipped at start; the other "
                                  "entries would serve"));

  // b turns absurd, c is new: c serves, b keeps its running version.
  h.WriteConfig(R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 1000000000,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}},
    {"resourceName": "hca_shared_devices_c", "rdmaHcaMax": 7, "selectors": {"linkTypes": ["ether"]}}
  ]})");
  h.plugin().Signal(SIGHUP);
  ASSERT_TRUE(WaitRegistered("rdma/hca_shared_devices_c", 1, milliseconds(5000)));
  EXPECT_EQ(Resource(kB).capacity, 1000);
  EXPECT_EQ(Resource(kB).registrations, 1);
  EXPECT_TRUE(Resource(kB).stream_open);
  EXPECT_EQ(Resource(kA).registrations, 1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_reloads_total"), 1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_entries_skipped"), 1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_entry_skipped{entry=\"configList[1]\",resource_name="
                     "\"hca_shared_devices_b\"}"),
            1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_last_reload_successful"), 0);
  // Everything served before serves still: a detail line, readiness as it was (ready, once
  // c's stream is open).
  EXPECT_EQ(AwaitReadyz(h, 200),
            "ready\nconfig entry configList[1] (hca_shared_devices_b) is invalid and was skipped "
            "at the last reload; its running version keeps serving: fix it in the ConfigMap\n");
}

// A reload that switches an entry's deviceModel while the kubelet holds its IDs (its
// checkpoint) is refused for that entry, which keeps serving as it was; with none held, the
// switch restarts its server, registered anew with GetPreferredAllocation (issue 56).
TEST_F(E2E, AModelSwitchWaitsUntilTheKubeletHoldsNoneOfTheResourcesIds) {
  constexpr char kSlots[] = R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 10,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 10,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}}]})";
  constexpr char kPerHca[] = R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 10, "deviceModel": "perHca",
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 10,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}}]})";
  StartAll(kSlots, {kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(h.kubelet().Allocate(kA, {"3"}).ok());
  // What the kubelet's device manager then checkpoints for the pod (1.20+ format).
  const std::string checkpoint = h.kubelet().device_plugin_dir() + "/kubelet_internal_checkpoint";
  std::ofstream(checkpoint) << R"({"Data": {"PodDeviceEntries": [{"PodUID": "6c7a",
      "ContainerName": "c", "ResourceName": "rdma/hca_shared_devices_a",
      "DeviceIDs": {"0": ["3"]}, "AllocResp": "CgA="}],
      "RegisteredDevices": {"rdma/hca_shared_devices_a": ["0", "1", "2", "3"]}},
      "Checksum": 1})";
  h.WriteConfig(kPerHca);
  h.plugin().Signal(SIGHUP);
  EXPECT_EQ(h.AwaitMetric("rdma_shared_dp_config_entry_skipped{entry=\"configList[0]\","
                          "resource_name=\"hca_shared_devices_a\"}",
                          1),
            1);
  EXPECT_TRUE(
      LogShows("config: configList[0].deviceModel: switching rdma/hca_shared_devices_a "
               "from \"slots\" to \"perHca\" is refused while the kubelet's checkpoint "
               "holds 1 of its device IDs for 1 pod(s)"));
  EXPECT_EQ(Resource(kA).registrations, 1);
  EXPECT_EQ(Resource(kA).capacity, 10);  // the slots it had
  EXPECT_EQ(AwaitReadyz(h, 200),
            "ready\nconfig entry configList[0] (hca_shared_devices_a) is invalid and was skipped "
            "at the last reload; its running version keeps serving: fix it in the ConfigMap\n");

  // The pod is gone and the kubelet freed its IDs: the next reload switches.
  std::ofstream(checkpoint) << R"({"Data": {"PodDeviceEntries": [],
      "RegisteredDevices": {}}, "Checksum": 1})";
  h.plugin().Signal(SIGHUP);
  ASSERT_TRUE(WaitRegistered(kA, 2));
  ASSERT_TRUE(WaitSnapshot(kA, [](const v1beta1::ListAndWatchResponse& l) {
    return l.devices_size() == 20;  // two InfiniBand HCAs x 10
  }));
  EXPECT_TRUE(Resource(kA).options.get_preferred_allocation_available());
  EXPECT_EQ(h.AwaitMetric("rdma_shared_dp_config_entries_skipped", 0), 0);
  auto one = h.kubelet().Allocate(kA, {"0000:11:00.0-9"});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->container_responses(0).envs().at("PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A"),
            "0000:11:00.0");
}

TEST_F(E2E, ConfigFileChangeReloadsWithoutASignal) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  const auto start = Clock::now();
  h.WriteConfig(kBAt250);
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kB).capacity == 250; }, milliseconds(3000)));
  std::cout << "[measured] config file replaced -> new capacity at the kubelet: " << MsSince(start)
            << " ms\n";
  EXPECT_EQ(Resource(kA).registrations, 1);
}

uint64_t InodeOf(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

// The inodes a process watches with inotify, as the kernel lists them in fdinfo.
std::set<uint64_t> WatchedInodes(pid_t pid) {
  std::set<uint64_t> inodes;
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& fd : std::filesystem::directory_iterator(fds)) {
    std::error_code ec;
    if (std::filesystem::read_symlink(fd.path(), ec).string() != "anon_inode:inotify") continue;
    std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" + fd.path().filename().string());
    for (std::string line; std::getline(info, line);) {
      const auto pos = line.find(" ino:");
      if (line.starts_with("inotify ") && pos != std::string::npos) {
        inodes.insert(std::stoull(line.substr(pos + 5), nullptr, 16));
      }
    }
  }
  return inodes;
}

// An operator who gates config changes (a rollout per ConfigMap, or by hand) turns the file
// watch off; SIGHUP still reloads (README.md, "Differences from the Go plugin").
TEST_F(E2E, WatchConfigFalseReloadsOnlyOnSighup) {
  StartAll(PluginHarness::DemoConfig(), {"--watch-config=false", kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  EXPECT_EQ(WatchedInodes(h.plugin().pid())
                .count(InodeOf(std::filesystem::path(h.config_path()).parent_path())),
            0u);
  h.WriteConfig(kBAt250);
  h.plugin().Signal(SIGHUP);
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kB).capacity == 250; }, milliseconds(3000)));
  EXPECT_EQ(h.AwaitMetric("rdma_shared_dp_reloads_total", 1), 1);
}

// ... and the default does watch it: the check above can fail.
TEST_F(E2E, TheConfigDirectoryIsWatchedByDefault) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  EXPECT_EQ(WatchedInodes(h.plugin().pid())
                .count(InodeOf(std::filesystem::path(h.config_path()).parent_path())),
            1u);
}

TEST_F(E2E, ConfigMapDataSymlinkSwapReloads) {
  // The kubelet's atomic writer: config.json -> ..data/config.json, ..data -> ..<timestamp>.
  namespace fs = std::filesystem;
  const fs::path dir = h.root() + "/configmap";
  auto publish = [&](const std::string& version, const std::string& text) {
    fs::create_directories(dir / version);
    std::ofstream(dir / version / "config.json") << text;
    fs::create_directory_symlink(version, dir / "..data_tmp");
    fs::rename(dir / "..data_tmp", dir / "..data");  // atomic swap: IN_MOVED_TO ..data
  };
  publish("..2026_11_21_10_00_00.1", PluginHarness::DemoConfig());
  fs::create_symlink("..data/config.json", dir / "config.json");
  ASSERT_TRUE(h.kubelet().Start().ok());
  h.StartPlugin({"--config-file=" + (dir / "config.json").string()});
  ASSERT_TRUE(WaitRegistered(kB));
  const auto start = Clock::now();
  std::string next = PluginHarness::DemoConfig();
  next.replace(next.find("500"), 3, "321");
  publish("..2026_11_21_10_05_00.2", next);
  fs::remove_all(dir / "..2026_11_21_10_00_00.1");
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kB).capacity == 321; }, milliseconds(3000)));
  std::cout << "[measured] ConfigMap ..data swap -> new capacity at the kubelet: " << MsSince(start)
            << " ms\n";
  EXPECT_EQ(Resource(kA).registrations, 1);  // unchanged resource kept its stream
  EXPECT_TRUE(Resource(kA).stream_open);
}

TEST_F(E2E, SigtermWhileRegisterHangsDoesNotWaitForIt) {
  h.kubelet().SetRegisterDelay(milliseconds(30000));
  StartAll();
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) {
        return std::any_of(s.events.begin(), s.events.end(), [](const std::string& e) {
          return e.rfind("register received", 0) == 0;
        });
      },
      milliseconds(5000)));
  const auto start = Clock::now();
  h.plugin().Signal(SIGTERM);
  // The behaviour under test: shutdown does not wait for the Register's 5 s deadline. Half
  // of it tells the two apart on any machine.
  auto status = h.plugin().WaitExit(milliseconds(2500));
  ASSERT_TRUE(status.has_value()) << "still running 2.5 s after SIGTERM: it waited for Register";
  std::cout << "[measured] SIGTERM during a hung Register -> exit: " << MsSince(start) << " ms\n";
  EXPECT_EQ(*status, 0);
}

// The demo config's entries without envHints, then plus one DRA entry.
constexpr char kDemoPlain[] = R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}}
]})";
constexpr char kDemoPlusDra[] = R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}},
    {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}},
    {"resourceName": "hca_dra", "rdmaHcaMax": 8, "frontend": "dra",
     "selectors": {"linkTypes": ["ether"]}}
]})";

// No DRA registration socket in plugins_registry.
bool NoDraRegistration(const std::string& registry) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(registry, ec)) {
    if (e.path().filename().string().starts_with("rdma.k8s-rdma-shared-dp.io")) return false;
  }
  return true;
}

// Start and reload share one check per front end. Without a node name (the base DaemonSet
// sets no NODE_NAME), a start skips a DRA entry; a reload that adds one used to be applied:
// slices with an empty spec.nodeName (422) and a DRA driver registered with the kubelet. Now
// a reload skips it as a start does, and the rest of the file applies.
TEST_F(E2E, AReloadAddingADraEntryWithoutANodeNameSkipsItAsAStartDoes) {
  ::unsetenv("NODE_NAME");
  StartAll(kDemoPlusDra, {kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_entries_skipped"), 1) << "the start skips it";
  EXPECT_TRUE(NoDraRegistration(h.kubelet().plugins_registry_dir()));
  h.plugin().Signal(SIGTERM);
  ASSERT_EQ(h.plugin().WaitExit(milliseconds(10000)), 0);
  h.kubelet().Stop();

  StartAll(kDemoPlain, {kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  h.WriteConfig(kDemoPlusDra);
  h.plugin().Signal(SIGHUP);
  ASSERT_EQ(h.AwaitMetric("rdma_shared_dp_errors_by_class_total{class=\"config\"}", 1), 1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_reloads_total"), 0) << "what serves is unchanged";
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_entries_skipped"), 1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_config_last_reload_successful"), 0);
  EXPECT_TRUE(NoDraRegistration(h.kubelet().plugins_registry_dir()));
  EXPECT_TRUE(Resource(kA).stream_open);
}

}  // namespace
}  // namespace rdmadp::testing
