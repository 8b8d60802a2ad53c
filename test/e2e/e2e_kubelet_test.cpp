// The kubelet's lifecycle: restarts, lost streams, watcher and auto modes, rolling updates,
// directories that appear late.
#include "test/e2e/e2e_fixture.h"

namespace rdmadp::testing {
namespace {

// A plugin waiting for a directory follows it by inotify: no timed retry (a poll would wait
// and back off). An immediate one ("retrying in 0 ms") is the kubelet's own doing: it
// creates device-plugins/ and then empties it (CleanupPluginDirectory, as the real kubelet's
// devicemanager Start does), which can take the socket the plugin was publishing the moment
// the directory appeared: the retry counter counts only waits.
void ExpectNoTimedRetry(PluginHarness& h) {
  for (const char* r : {kA, kB}) {
    for (const char* reason : {"serve", "register"}) {
      EXPECT_EQ(h.Metric(std::string("rdma_shared_dp_registration_retries_total{resource=\"") + r +
                         "\",reason=\"" + reason + "\"}"),
                0)
          << r << " " << reason;
    }
  }
}

// Each restart costs exactly one registration per resource. How fast is a figure
// (`[measured]`, registration_bench), not a bound: the 10 s waits are hang guards.
TEST_F(E2E, KubeletRestartReRegistersOncePerRestart) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  for (int round = 2; round <= 4; ++round) {
    const auto start = Clock::now();
    ASSERT_TRUE(h.kubelet().Restart().ok());
    ASSERT_TRUE(WaitRegistered(kA, round)) << "round " << round;
    ASSERT_TRUE(WaitRegistered(kB, round)) << "round " << round;
    std::cout << "[measured] kubelet restart -> re-registered: " << MsSince(start) << " ms\n";
  }
  // "Registered" counts the new stream once it is open; its first list may still be on its
  // way (seen under TSan), so the device view is waited for, not read at once.
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) {
        const SimResource& a = s.resources.at(kA);
        return a.capacity == 1000 && a.allocatable == 1000;
      },
      milliseconds(10000)));
  EXPECT_EQ(Resource(kA).registrations, 4);
  EXPECT_EQ(Resource(kB).registrations, 4);
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"1"}).ok());
}

TEST_F(E2E, LostStreamReRegistersButAReplacedStreamDoesNotLoop) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  const auto start = Clock::now();
  h.kubelet().CancelStream(kA);
  ASSERT_TRUE(WaitRegistered(kA, 2, milliseconds(2000)));
  std::cout << "[measured] stream lost -> re-registered: " << MsSince(start) << " ms\n";
  // The re-registration replaced the stream; that must not trigger yet another one.
  // Resource b's registration is the barrier: restart only b's stream and wait for it.
  h.kubelet().CancelStream(kB);
  ASSERT_TRUE(WaitRegistered(kB, 2, milliseconds(2000)));
  EXPECT_EQ(Resource(kA).registrations, 2);
}

// Another process holding a ListAndWatch stream on our socket (a monitoring tool, a
// debugging grpcurl) must not hide the end of the kubelet's stream (docs/architecture.md,
// "Lifecycle: what happens on each event").
TEST_F(E2E, AnotherListAndWatchClientDoesNotHideTheKubeletsStreamEnd) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  auto channel =
      grpc::CreateChannel("unix://" + Resource(kA).endpoint, grpc::InsecureChannelCredentials());
  auto stub = v1beta1::DevicePlugin::NewStub(channel);
  grpc::ClientContext ctx;
  auto reader = stub->ListAndWatch(&ctx, v1beta1::Empty());
  v1beta1::ListAndWatchResponse first;
  ASSERT_TRUE(reader->Read(&first));  // the other client's stream is open (and the newest)
  EXPECT_EQ(first.devices_size(), 1000);
  h.kubelet().CancelStream(kA);  // the kubelet's stream ends; the other stays
  ASSERT_TRUE(WaitRegistered(kA, 2, milliseconds(2000))) << h.PluginLog();
  ASSERT_TRUE(
      h.kubelet().WaitFor([](const SimState& s) { return s.resources.at(kA).allocatable == 1000; },
                          milliseconds(2000)));
  ctx.TryCancel();
}

TEST_F(E2E, PluginStartedBeforeTheKubeletRegistersWhenItAppears) {
  h.WriteConfig(PluginHarness::DemoConfig());
  std::filesystem::create_directories(h.kubelet().device_plugin_dir());
  h.StartPlugin({kMetricsFlag});
  // The plugin is waiting for kubelet.sock; its servers are already listening.
  const std::string dir = h.kubelet().device_plugin_dir();
  auto count_sockets = [&] {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_socket() ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(WaitForFiles(
      dir, [&] { return count_sockets() == 2; }, milliseconds(5000)));
  const auto start = Clock::now();
  ASSERT_TRUE(h.kubelet().Start().ok());
  ASSERT_TRUE(WaitRegistered(kA, 1, milliseconds(2000)));
  ASSERT_TRUE(WaitRegistered(kB, 1, milliseconds(2000)));
  std::cout << "[measured] kubelet.sock created -> registered: " << MsSince(start) << " ms\n";
  // Waiting for kubelet.sock is no failure, and the file's creation was the one trigger.
  for (const char* r : {kA, kB}) {
    EXPECT_EQ(h.Metric(Series("rdma_shared_dp_registration_failures_total", r)), 0) << r;
    EXPECT_EQ(h.Metric(Series("rdma_shared_dp_registrations_total", r)), 1) << r;
  }
}

TEST_F(E2E, WatcherModeRegistersThroughPluginsRegistry) {
  h.kubelet().EnableWatcher();
  StartAll(PluginHarness::DemoConfig(), {"--registration-mode=watcher"});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  SimResource a = Resource(kA);
  EXPECT_EQ(std::filesystem::path(a.endpoint).parent_path(), h.kubelet().plugins_registry_dir());
  EXPECT_EQ(a.capacity, 1000);
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"3"}).ok());
  ASSERT_TRUE(WaitForFiles(
      h.root(),
      [&] {
        return h.PluginLog().find("registered by the kubelet's plugin watcher") !=
               std::string::npos;
      },
      milliseconds(2000)));
  // Nothing registered through kubelet.sock.
  for (const auto& e : std::filesystem::directory_iterator(h.kubelet().device_plugin_dir())) {
    EXPECT_EQ(e.path().filename(), "kubelet.sock");
  }
}

TEST_F(E2E, WatcherNegativeNotificationRecreatesTheSocket) {
  h.kubelet().EnableWatcher();
  h.kubelet().RejectNextWatcherRegistrations(1);
  const auto start = Clock::now();
  StartAll(PluginHarness::DemoConfig(), {"--registration-mode=watcher", kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA, 1, milliseconds(5000)));
  ASSERT_TRUE(WaitRegistered(kB, 1, milliseconds(5000)));
  std::cout << "[measured] watcher rejection -> socket re-created and registered: "
            << MsSince(start) << " ms\n";
  ASSERT_EQ(h.kubelet().State().rejected.size(), 1u);
  // The rejected resource counts one failure and one re-created socket; the other neither.
  double failures = 0;
  double recreations = 0;
  for (const char* r : {kA, kB}) {
    failures += h.Metric(Series("rdma_shared_dp_registration_failures_total", r));
    recreations += h.Metric(Series("rdma_shared_dp_socket_recreations_total", r));
  }
  EXPECT_EQ(failures, 1);
  EXPECT_EQ(recreations, 1);
}

TEST_F(E2E, AutoModeUsesTheWatcherWhenTheKubeletCallsGetInfo) {
  h.kubelet().EnableWatcher();
  StartAll(PluginHarness::DemoConfig(), {"--registration-mode=auto", kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA));
  EXPECT_EQ(std::filesystem::path(Resource(kA).endpoint).parent_path(),
            h.kubelet().plugins_registry_dir());
  EXPECT_TRUE(AwaitMode("watcher"));
}

TEST_F(E2E, AutoModeFallsBackToKubeletSockWhenNobodyCallsGetInfo) {
  // The directory exists (a hostPath mount creates it) but no watcher serves it.
  std::filesystem::create_directories(h.kubelet().plugins_registry_dir());
  const auto start = Clock::now();
  StartAll(PluginHarness::DemoConfig(),
           {"--registration-mode=auto", "--auto-detect-timeout=1", kMetricsFlag});
  ASSERT_TRUE(WaitRegistered(kA, 1, milliseconds(5000)));
  ASSERT_TRUE(WaitRegistered(kB, 1, milliseconds(5000)));
  const long ms = MsSince(start);
  std::cout << "[measured] auto fallback to kubelet.sock: " << ms << " ms (timeout 1000 ms)\n";
  EXPECT_GE(ms, 1000);
  EXPECT_EQ(std::filesystem::path(Resource(kA).endpoint).parent_path(),
            h.kubelet().device_plugin_dir());
  EXPECT_TRUE(AwaitMode("kubelet"));
  EXPECT_TRUE(std::filesystem::is_empty(h.kubelet().plugins_registry_dir()));
}

// A unix socket file at `path`: listening (alive) or bound and closed (dead).
int MakeSocketFile(const std::string& path, bool listening) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  if (listening) {
    ::listen(fd, 1);
    return fd;
  }
  ::close(fd);
  return -1;
}

TEST_F(E2E, StaleSocketsOfDeadInstancesAreRemovedAndNothingElse) {
  // Left behind after the kubelet started (its start-up cleanup removes every socket).
  h.WriteConfig(PluginHarness::DemoConfig());
  ASSERT_TRUE(h.kubelet().Start().ok());
  const std::string dir = h.kubelet().device_plugin_dir();
  MakeSocketFile(dir + "/hca_shared_devices_a-deadbeef.sock", false);
  MakeSocketFile(dir + "/.hca_shared_devices_a-feedf00d.sock", false);  // died mid-publish
  const int live = MakeSocketFile(dir + "/hca_shared_devices_b-0badf00d.sock", true);
  MakeSocketFile(dir + "/someone-else-dead.sock", false);
  h.StartPlugin();
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  EXPECT_FALSE(std::filesystem::exists(dir + "/hca_shared_devices_a-deadbeef.sock"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/.hca_shared_devices_a-feedf00d.sock"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/hca_shared_devices_b-0badf00d.sock"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/someone-else-dead.sock"));
  ::close(live);
}

TEST_F(E2E, TwoInstancesServeSideBySideDuringARollingUpdate) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  const std::string old_endpoint = Resource(kA).endpoint;
  PluginProcess second(PluginBinary(), h.PluginArgs(), h.root() + "/second.log");
  ASSERT_TRUE(WaitRegistered(kA, 2));
  const std::string new_endpoint = Resource(kA).endpoint;
  EXPECT_NE(old_endpoint, new_endpoint);
  h.plugin().Signal(SIGTERM);  // the old pod goes away
  ASSERT_EQ(h.plugin().WaitExit(milliseconds(10000)), 0);
  EXPECT_FALSE(std::filesystem::exists(old_endpoint));
  EXPECT_TRUE(std::filesystem::exists(new_endpoint));
  // On v1.25-1.36 the old stream's end disconnects the new client (#121994), which then
  // registers again; exact counts per era are in lifecycle_e2e_test.
  EXPECT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) {
        const SimResource& a = s.resources.at(kA);
        return a.stream_open && a.allocatable == 1000;
      },
      milliseconds(5000)));
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"0"}).ok());
  second.Signal(SIGTERM);
  EXPECT_EQ(second.WaitExit(milliseconds(10000)), 0);
  if (HasFailure())
    std::cerr << "---- second instance ----\n" << ReadFileOrEmpty(h.root() + "/second.log");
}

TEST_F(E2E, NoSocketDirectoryYetServesWhenTheKubeletCreatesIt) {
  h.WriteConfig(PluginHarness::DemoConfig());
  std::filesystem::create_directories(h.kubelet_root());  // root exists, device-plugins not
  h.StartPlugin({kMetricsFlag});
  ASSERT_TRUE(WaitForFiles(
      h.root(),
      [&] {
        return h.PluginLog().find("does not exist yet; will serve when the kubelet creates it") !=
               std::string::npos;
      },
      milliseconds(5000)));
  const auto start = Clock::now();
  ASSERT_TRUE(h.kubelet().Start().ok());  // creates device-plugins/ and kubelet.sock
  ASSERT_TRUE(WaitRegistered(kA, 1, milliseconds(2000)));
  ASSERT_TRUE(WaitRegistered(kB, 1, milliseconds(2000)));
  std::cout << "[measured] device-plugins/ created -> registered: " << MsSince(start) << " ms\n";
  ExpectNoTimedRetry(h);
}

TEST_F(E2E, NoKubeletRootYetFollowsThePathDownWithoutPolling) {
  h.WriteConfig(PluginHarness::DemoConfig());
  ASSERT_FALSE(std::filesystem::exists(h.kubelet_root()));
  h.StartPlugin({kMetricsFlag});
  ASSERT_TRUE(LogShows("does not exist yet; will serve when the kubelet creates it"));
  const auto start = Clock::now();
  ASSERT_TRUE(h.kubelet().Start().ok());  // creates <root>/kubelet/device-plugins/kubelet.sock
  ASSERT_TRUE(WaitRegistered(kA, 1, milliseconds(2000)));
  ASSERT_TRUE(WaitRegistered(kB, 1, milliseconds(2000)));
  std::cout << "[measured] kubelet root created -> registered: " << MsSince(start) << " ms\n";
  ExpectNoTimedRetry(h);
}

TEST_F(E2E, WatcherModeSurvivesKubeletRestarts) {
  h.kubelet().EnableWatcher();
  StartAll(PluginHarness::DemoConfig(), {"--registration-mode=watcher"});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  for (int round = 2; round <= 4; ++round) {
    ASSERT_TRUE(h.kubelet().Restart().ok());  // plugins_registry is kept and walked again
    const auto start = Clock::now();
    ASSERT_TRUE(WaitRegistered(kA, round, milliseconds(3000))) << "round " << round;
    ASSERT_TRUE(WaitRegistered(kB, round, milliseconds(3000))) << "round " << round;
    std::cout << "[measured] watcher-mode kubelet restart -> registered again: " << MsSince(start)
              << " ms\n";
  }
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"0"}).ok());
  EXPECT_EQ(std::filesystem::path(Resource(kA).endpoint).parent_path(),
            h.kubelet().plugins_registry_dir());
}

}  // namespace
}  // namespace rdmadp::testing
