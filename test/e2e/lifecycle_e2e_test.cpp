// The registration lifecycle against the kubelet of every era (docs/kubelet-versions.md):
// the real binary, the era-faithful simulator, exact counts and a quiet window after every
// event — a loop that re-registers would pass "registered at least once", not these.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "pkg/text/cat.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr char kA[] = "rdma/hca_shared_devices_a";
constexpr char kB[] = "rdma/hca_shared_devices_b";
const std::vector<std::string> kBoth = {kA, kB};
constexpr milliseconds kQuiet{5000};  // nothing may register or be lost in this window

// Everything that moves when something registers, is rejected or is lost.
std::string Activity(const SimState& s) {
  std::string out = Cat("creates=", s.registry_creates, " notified=", s.watcher_notifies_ok,
                        " rejected=", s.rejected.size());
  for (const auto& [name, r] : s.resources) {
    Append(out, " ", name, ":", r.register_calls, "/", r.registrations, "/", r.streams_ended);
  }
  return out;
}

class Lifecycle : public ::testing::TestWithParam<KubeletEra> {
 protected:
  void SetUp() override { h.AddDemoHcas(); }
  void TearDown() override {
    if (!HasFailure()) return;
    std::cerr << "---- plugin log ----\n" << h.PluginLog() << "---- kubelet events ----\n";
    for (const auto& e : h.kubelet().State().events) {
      if (!e.starts_with("snapshot")) std::cerr << e << "\n";
    }
  }
  void StartAll(std::vector<std::string> extra = {}) {
    h.WriteConfig(PluginHarness::DemoConfig());
    ASSERT_TRUE(h.kubelet().Start().ok());
    h.StartPlugin(std::move(extra));
    ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 1, milliseconds(10000)));
  }
  // True if nothing registers, is rejected or is lost for `window`.
  bool Quiet(milliseconds window = kQuiet) {
    const std::string base = Activity(h.kubelet().State());
    return h.kubelet().StaysFalse([&](const SimState& s) { return Activity(s) != base; }, window);
  }
  // Watcher mode: registered and notified `n` times in all.
  bool WaitNotified(int n) {
    return h.kubelet().WaitFor([n](const SimState& s) { return s.watcher_notifies_ok >= n; },
                               milliseconds(15000));
  }
  bool Healthy() {
    return h.kubelet().WaitFor(
        [](const SimState& s) {
          for (const auto& name : kBoth) {
            const SimResource& r = s.resources.at(name);
            if (!r.stream_open || r.capacity == 0 || r.allocatable != r.capacity) return false;
          }
          return true;
        },
        milliseconds(10000));
  }
  ino_t Inode(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
  }
  std::string Era() const { return EraName(GetParam()); }
  // Exactly one more Register reached the kubelet per resource, and each is registered twice.
  void ExpectOneMoreRegisterEach(const SimState& before, const SimState& after) {
    for (const auto& name : kBoth) {
      EXPECT_EQ(after.resources.at(name).register_calls,
                before.resources.at(name).register_calls + 1)
          << name;
      EXPECT_EQ(after.resources.at(name).registrations, 2) << name;
    }
  }

  PluginHarness h{GetParam()};
};

// A real restart leaves the dead kubelet.sock in place for the outage: exactly one Register
// per resource reaches the new kubelet, and then nothing for 5 s.
TEST_P(Lifecycle, KubeletRestartWithADeadSocketRegistersExactlyOnce) {
  StartAll();
  const SimState before = h.kubelet().State();
  ASSERT_TRUE(h.kubelet().Restart(milliseconds(1500)).ok());
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, milliseconds(10000)));
  EXPECT_TRUE(Quiet());
  const SimState after = h.kubelet().State();
  ExpectOneMoreRegisterEach(before, after);
  for (const auto& name : kBoth) {
    std::cout << "[measured] " << Era() << " kubelet mode, restart after 1.5 s down: " << name
              << " zero-allocatable "
              << after.resources.at(name).zero_allocatable_ms -
                     before.resources.at(name).zero_allocatable_ms
              << " ms\n";
  }
  EXPECT_TRUE(after.rejected.empty());
  EXPECT_TRUE(Healthy());
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"7"}).ok());
}

// A kubelet that ends a resource's stream several times in a row (eight here, one after each
// re-registration) gets the resource back after each, without the back-off meant for failing
// Registers (it reached 8, 16, then 30 s by the seventh loss; docs/reliability.md, "Capacity
// and data").
// The 5 s per round is the requirement, not a timing: a live kubelet waits for a lost
// stream at most kLossInterval (1 s), after the first three at once.
TEST_P(Lifecycle, StreamsEndedInARowAreReRegisteredWithoutBackOff) {
  StartAll();
  const SimState before = h.kubelet().State();
  constexpr int kRounds = 8;
  for (int round = 1; round <= kRounds; ++round) {
    h.kubelet().CancelStream(kA);
    ASSERT_TRUE(h.kubelet().WaitRegistered({kA}, 1 + round, milliseconds(5000)))
        << "round " << round;
  }
  EXPECT_TRUE(Quiet());
  const SimState after = h.kubelet().State();
  const SimResource& a = after.resources.at(kA);
  // The plugin sees its stream end (the RST) before the kubelet's client goroutine has
  // recorded it; a v1.37 kubelet refuses a Register from that socket path meanwhile
  // ("already connected", found by the lifecycle loop: 1 run in 5). Each such refusal is
  // answered by exactly one Register at once, which the kubelet accepts.
  ASSERT_TRUE(before.rejected.empty());
  int already_connected = 0;
  for (const std::string& why : after.rejected) {
    EXPECT_THAT(why, HasSubstr("already connected"));
    ++already_connected;
  }
  EXPECT_EQ(a.register_calls, before.resources.at(kA).register_calls + kRounds + already_connected);
  EXPECT_EQ(a.registrations, 1 + kRounds);
  EXPECT_EQ(after.resources.at(kB).register_calls, before.resources.at(kB).register_calls);
  EXPECT_EQ(after.resources.at(kB).registrations, 1);
  std::cout << "[measured] " << Era() << " " << kRounds << " stream ends in a row: " << kA
            << " zero-allocatable "
            << a.zero_allocatable_ms - before.resources.at(kA).zero_allocatable_ms << " ms in "
            << a.zero_windows - before.resources.at(kA).zero_windows << " windows\n";
  EXPECT_TRUE(Healthy());
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"7"}).ok());
}

// The watcher walks plugins_registry at every start: nothing needs re-creating.
TEST_P(Lifecycle, WatcherModeRestartKeepsTheSocket) {
  h.kubelet().EnableWatcher();
  StartAll({"--registration-mode=watcher"});
  ASSERT_TRUE(WaitNotified(2));
  const std::string socket = h.kubelet().State().resources.at(kA).endpoint;
  const ino_t inode = Inode(socket);
  const int creates = h.kubelet().State().registry_creates;
  ASSERT_TRUE(h.kubelet().Restart(milliseconds(500)).ok());
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, milliseconds(10000)));
  ASSERT_TRUE(WaitNotified(4));
  EXPECT_TRUE(Quiet());
  const SimState after = h.kubelet().State();
  EXPECT_EQ(Inode(socket), inode) << "the socket was re-created";
  EXPECT_EQ(after.registry_creates, creates) << "the new kubelet saw no new socket";
  for (const auto& name : kBoth) EXPECT_EQ(after.resources.at(name).registrations, 2) << name;
  EXPECT_TRUE(Healthy());
}

// An outage (4 s) longer than the grace (2.5 s from the stream's end, then no GetInfo): one
// re-creation per resource, then one registration.
TEST_P(Lifecycle, WatcherModeLongOutageRecreatesOnce) {
  h.kubelet().EnableWatcher();
  StartAll({"--registration-mode=watcher", "--metrics-address=127.0.0.1:0"});
  ASSERT_TRUE(WaitNotified(2));
  ASSERT_TRUE(h.kubelet().Restart(milliseconds(4000)).ok());
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, milliseconds(10000)));
  ASSERT_TRUE(WaitNotified(4));
  EXPECT_TRUE(Quiet());
  for (const auto& name : kBoth) {
    EXPECT_EQ(h.kubelet().State().resources.at(name).registrations, 2) << name;
    EXPECT_EQ(h.Metric(Cat("rdma_shared_dp_socket_recreations_total{resource=\"", name, "\"}")), 1)
        << name;
  }
  EXPECT_TRUE(Healthy());
}

// A plugin paused across a restart (CPU starvation, a debugger) sees everything at once when
// it resumes: one registration per resource, no chain.
TEST_P(Lifecycle, SlowPluginAcrossAKubeletRestartRegistersOnce) {
  StartAll();
  const SimState before = h.kubelet().State();
  h.plugin().Signal(SIGSTOP);
  ASSERT_TRUE(h.kubelet().Restart(milliseconds(300)).ok());
  // While it is stopped nothing can register (this is the pause itself, and an assertion).
  EXPECT_TRUE(Quiet(milliseconds(1000)));
  h.plugin().Signal(SIGCONT);
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, milliseconds(10000)));
  EXPECT_TRUE(Quiet());
  ExpectOneMoreRegisterEach(before, h.kubelet().State());
  EXPECT_TRUE(Healthy());
}

// A plugin paused while more happens in the kubelet's directories than the kernel queues
// for it (fs.inotify.max_queued_events): the kubelet's restart behind that (our sockets
// deleted, kubelet.sock created) is lost, and the kernel queues IN_Q_OVERFLOW instead. The
// overflow makes the plugin look: each socket served again, one Register each. Without the
// look, our sockets stayed gone and every Register failed its self-check.
TEST_P(Lifecycle, ARestartLostToAnOverflowedWatchQueueIsFoundByLooking) {
  StartAll();
  const SimState before = h.kubelet().State();
  h.plugin().Signal(SIGSTOP);
  long queued = 16384;
  std::ifstream("/proc/sys/fs/inotify/max_queued_events") >> queued;
  const std::string flood = h.kubelet().device_plugin_dir() + "/flood";
  for (long i = 0; i <= queued / 2; ++i) {  // a create and a delete each: the queue is full
    std::ofstream(flood).put('x');
    std::filesystem::remove(flood);
  }
  ASSERT_TRUE(h.kubelet().Restart(milliseconds(0)).ok());
  h.plugin().Signal(SIGCONT);
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, milliseconds(10000)));
  EXPECT_TRUE(Quiet());
  ExpectOneMoreRegisterEach(before, h.kubelet().State());
  EXPECT_TRUE(Healthy());
}

TEST_P(Lifecycle, SlowPluginInWatcherModeIsRegisteredWithoutRecreation) {
  h.kubelet().EnableWatcher();
  StartAll({"--registration-mode=watcher"});
  ASSERT_TRUE(WaitNotified(2));
  const std::string socket = h.kubelet().State().resources.at(kA).endpoint;
  const ino_t inode = Inode(socket);
  h.plugin().Signal(SIGSTOP);
  ASSERT_TRUE(h.kubelet().Restart(milliseconds(0)).ok());
  EXPECT_TRUE(Quiet(milliseconds(3000)));  // GetInfo times out while it is stopped
  h.plugin().Signal(SIGCONT);
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, milliseconds(15000)));
  ASSERT_TRUE(WaitNotified(4));
  EXPECT_TRUE(Quiet());
  EXPECT_EQ(Inode(socket), inode) << "the socket was re-created";
  for (const auto& name : kBoth) {
    EXPECT_EQ(h.kubelet().State().resources.at(name).registrations, 2) << name;
  }
  EXPECT_TRUE(Healthy());
}

// Rolling update in kubelet mode: the new instance registers beside the old one, the old
// one exits, and both settle without ping-pong. Exact registrations per era: v1.25-1.36
// disconnects the current client when the old stream ends (#121994), so the new instance
// registers once more; v1.24 ignores the old stream's end; v1.37 promotes the survivor.
TEST_P(Lifecycle, RollingUpdateSettlesWithoutPingPong) {
  StartAll();
  const SimState start = h.kubelet().State();
  PluginProcess second(PluginBinary(), h.PluginArgs(), h.root() + "/second.log");
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, milliseconds(10000)));
  EXPECT_TRUE(Quiet(milliseconds(2000))) << "two live instances fight";
  h.plugin().Signal(SIGTERM);
  ASSERT_EQ(h.plugin().WaitExit(milliseconds(5000)), 0);
  const int expected = GetParam() == KubeletEra::kV125to136 ? 3 : 2;
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, expected, milliseconds(10000)));
  EXPECT_TRUE(Quiet());
  const SimState after = h.kubelet().State();
  for (const auto& name : kBoth) {
    EXPECT_EQ(after.resources.at(name).registrations, expected) << name;
    std::cout << "[measured] " << Era() << " rolling update: " << name << " zero-allocatable "
              << after.resources.at(name).zero_allocatable_ms -
                     start.resources.at(name).zero_allocatable_ms
              << " ms\n";
  }
  EXPECT_TRUE(after.rejected.empty());
  EXPECT_TRUE(Healthy());
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"0"}).ok());
  second.Signal(SIGTERM);
  EXPECT_EQ(second.WaitExit(milliseconds(5000)), 0);
  if (HasFailure()) std::cerr << "---- second ----\n" << ReadFileOrEmpty(h.root() + "/second.log");
}

// Rolling update in watcher mode. On <= v1.36 the old pod's exit disconnects the *current*
// client by name (the new pod): its stream ends while the same kubelet keeps running, which
// will not register it again on its own, so it re-creates its socket at once and is
// registered again. v1.37 unregisters only the old path and the new pod is untouched.
TEST_P(Lifecycle, WatcherRollingUpdateSettlesWithoutPingPong) {
  h.kubelet().EnableWatcher();
  StartAll({"--registration-mode=watcher"});
  ASSERT_TRUE(WaitNotified(2));
  const SimState start = h.kubelet().State();
  PluginProcess second(PluginBinary(), h.PluginArgs({"--registration-mode=watcher"}),
                       h.root() + "/second.log");
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, milliseconds(10000)));
  ASSERT_TRUE(WaitNotified(4));
  EXPECT_TRUE(Quiet(milliseconds(3000))) << "two live instances fight";
  h.plugin().Signal(SIGTERM);
  ASSERT_EQ(h.plugin().WaitExit(milliseconds(5000)), 0);
  const int expected = GetParam() == KubeletEra::kV137 ? 2 : 3;
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, expected, milliseconds(15000)));
  ASSERT_TRUE(WaitNotified(2 * expected));
  EXPECT_TRUE(Quiet());
  const SimState after = h.kubelet().State();
  for (const auto& name : kBoth) {
    EXPECT_EQ(after.resources.at(name).registrations, expected) << name;
    std::cout << "[measured] " << Era() << " watcher rolling update: " << name
              << " zero-allocatable "
              << after.resources.at(name).zero_allocatable_ms -
                     start.resources.at(name).zero_allocatable_ms
              << " ms\n";
  }
  EXPECT_TRUE(Healthy());
  second.Signal(SIGTERM);
  EXPECT_EQ(second.WaitExit(milliseconds(5000)), 0);
  if (HasFailure()) std::cerr << "---- second ----\n" << ReadFileOrEmpty(h.root() + "/second.log");
}

// A rolling update that changes the config (docs/reliability.md, "Capacity and data"). The
// old instance (1000 slots, rescanning every second) writes its list last (a port flap only
// it sees); when it exits, the kubelet's view stayed the old list on v1.24 (the old stream's
// end is ignored) and v1.37 (the survivor is promoted without a re-sync). The survivor (500
// slots, no periodic rescans) sees the old socket go and sends its list again: the view is
// the survivor's within 5 s.
TEST_P(Lifecycle, RollingUpdateWithAConfigChangeEndsWithTheSurvivorsList) {
  h.WriteConfig(PluginHarness::DemoConfig(1));  // the old instance rescans every second
  ASSERT_TRUE(h.kubelet().Start().ok());
  h.StartPlugin({});
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 1, milliseconds(10000)));
  const std::string second_config = h.root() + "/second-config.json";
  {
    std::string config = PluginHarness::DemoConfig(0);
    const auto at = config.find("\"rdmaHcaMax\": 1000");
    config.replace(at, std::string("\"rdmaHcaMax\": 1000").size(), "\"rdmaHcaMax\": 500");
    std::ofstream(second_config) << config;
  }
  std::vector<std::string> args = h.PluginArgs();
  for (auto& a : args) {
    if (a.starts_with("--config-file")) a = "--config-file=" + second_config;
  }
  PluginProcess second(PluginBinary(), args, h.root() + "/second.log");
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kA).capacity == 500; }, milliseconds(10000)));
  // Only the old instance rescans: its changed list (every port down: every slot
  // Unhealthy) is the last one written.
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  h.node().SetPortState("mlx5_1", 1, "1: DOWN");
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.at(kA).capacity == 1000; }, milliseconds(10000)));
  h.plugin().Signal(SIGTERM);
  ASSERT_EQ(h.plugin().WaitExit(milliseconds(10000)), 0);
  EXPECT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) {
        const SimResource& a = s.resources.at(kA);
        return a.capacity == 500 && a.stream_open;
      },
      milliseconds(5000)))
      << "capacity " << h.kubelet().State().resources.at(kA).capacity;
  second.Signal(SIGTERM);
  EXPECT_EQ(second.WaitExit(milliseconds(5000)), 0);
  if (HasFailure()) std::cerr << "---- second ----\n" << ReadFileOrEmpty(h.root() + "/second.log");
}

INSTANTIATE_TEST_SUITE_P(Eras, Lifecycle, ::testing::ValuesIn(kAllEras),
                         [](const ::testing::TestParamInfo<KubeletEra>& p) {
                           return EraTestName(p.param);
                         });

}  // namespace
}  // namespace rdmadp::testing
