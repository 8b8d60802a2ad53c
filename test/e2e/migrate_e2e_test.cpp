// Moving a node between the Go plugin (Mellanox/NVIDIA k8s-rdma-shared-dev-plugin) and ours
// as docs/migrating.md tells an operator to, against the kubelet of every era: our real
// binary (kubelet.sock registration, as images/base runs it), a Go-like plugin per resource
// serving the same names and slot counts with the Go plugin's registration behaviour
// (test/support/go_like_plugin.h: watcher mode, its default wherever plugins_registry exists;
// registered once, never again), and the kubelet simulator with its plugin watcher.
//
//  - Migration (step 4): start ours, wait until it is registered, delete the Go pod.
//  - Rollback: delete OUR pod first and wait until it is gone, then start the Go pod.
//  - The old rollback order (start the Go pod, then delete ours), kept to show why the order
//    matters: on kubelets 1.25-1.36 the end of any stream of a resource disconnects its
//    current client (#121994), by then the Go plugin, which never registers again.
//    Allocatable stays 0 until the Go pod restarts. 1.24 ignores the end of a stream that is
//    no longer current, and 1.37 removes only the endpoint at the ended stream's path.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <map>
#include <memory>

#include "pkg/text/cat.h"
#include "test/support/go_like_plugin.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {
namespace {

using std::chrono::milliseconds;

constexpr char kA[] = "rdma/hca_shared_devices_a";
constexpr char kB[] = "rdma/hca_shared_devices_b";
const std::vector<std::string> kBoth = {kA, kB};
// The demo config's rdmaHcaMax per resource: the Go plugin reads the same ConfigMap.
const std::map<std::string, int64_t> kSlots = {{kA, 1000}, {kB, 500}};
constexpr milliseconds kWait{15000};
constexpr milliseconds kQuiet{5000};  // the measurement window of every "stays" check

bool HasEvent(const SimState& s, const std::string& event) {
  return std::find(s.events.begin(), s.events.end(), event) != s.events.end();
}

// Every resource served: stream open, the configured capacity, all of it allocatable.
bool AllAtCapacity(const SimState& s) {
  for (const auto& resource : kBoth) {
    auto it = s.resources.find(resource);
    if (it == s.resources.end()) return false;
    const SimResource& r = it->second;
    if (!r.stream_open || r.capacity != kSlots.at(resource) || r.allocatable != r.capacity) {
      return false;
    }
  }
  return true;
}

// Every resource known with its capacity and nothing allocatable (the kubelet's "unhealthy").
bool AllAtZero(const SimState& s) {
  for (const auto& resource : kBoth) {
    auto it = s.resources.find(resource);
    if (it == s.resources.end()) return false;
    const SimResource& r = it->second;
    if (r.stream_open || r.capacity != kSlots.at(resource) || r.allocatable != 0) return false;
  }
  return true;
}

// Counters that only grow: whatever registers, is rejected, is lost or drops to 0 moves
// them, so a dip between two wake-ups of a wait is still seen.
// What would show a capacity change: registrations, lost streams, dips to 0, refusals. (Not
// the watcher's notifications, which can land after a registration already counts.)
std::string Activity(const SimState& s) {
  std::string out = Cat("rejected=", s.rejected.size());
  for (const auto& [name, r] : s.resources) {
    Append(out, " ", name, ":", r.register_calls, "/", r.registrations, "/", r.streams_ended, "/",
           r.zero_windows);
  }
  return out;
}

std::string Describe(const SimState& s) {
  std::string out;
  for (const auto& [name, r] : s.resources) {
    Append(out, name, ": endpoint ", r.endpoint, " open ", r.stream_open, " capacity ", r.capacity,
           " allocatable ", r.allocatable, "; ");
  }
  return out;
}

std::string Describe(const GoLikeState& s) {
  std::string out =
      Cat("serving=", s.serving ? 1 : 0, " registrations=", s.registrations,
          " register_calls=", s.register_calls, " get_info=", s.get_info_calls,
          " notified_ok=", s.notified_ok, " notified_failed=", s.notified_failed,
          " options=", s.options_calls, " streams started/open/ended=", s.streams_started, "/",
          s.streams_open, "/", s.streams_ended, " allocate=", s.allocate_calls);
  for (const auto& e : s.errors) Append(out, " error: ", e);
  return out;
}

class Migrate : public ::testing::TestWithParam<KubeletEra> {
 protected:
  void SetUp() override {
    h.AddDemoHcas();
    h.WriteConfig(PluginHarness::DemoConfig());
    h.kubelet().EnableWatcher();  // plugins_registry exists: the Go plugin picks the watcher
    ASSERT_TRUE(h.kubelet().Start().ok());
  }
  void TearDown() override {
    if (!HasFailure()) return;
    std::cerr << "---- plugin log ----\n" << h.PluginLog() << "---- kubelet events ----\n";
    for (const auto& e : h.kubelet().State().events) {
      if (!e.starts_with("snapshot")) std::cerr << e << "\n";
    }
    for (const auto& [resource, plugin] : go_) {
      std::cerr << "---- go-like " << resource << ": " << Describe(plugin->State()) << "\n";
    }
  }
  std::string Era() const { return EraName(GetParam()); }

  // Our pod, as images/base runs it.
  void StartOurs() { h.StartPlugin({"--registration-mode=kubelet"}); }
  // Our pod deleted: SIGTERM, and the process is gone.
  bool StopOurs() {
    h.plugin().Signal(SIGTERM);
    return h.plugin().WaitExit(milliseconds(10000)) == 0;
  }
  // The endpoint the kubelet uses now, per resource.
  std::map<std::string, std::string> Endpoints() {
    const SimState s = h.kubelet().State();
    std::map<std::string, std::string> out;
    for (const auto& resource : kBoth) out[resource] = s.resources.at(resource).endpoint;
    return out;
  }
  // The kubelet has seen the stream at each of `endpoints` end.
  bool StreamsEnded(const std::map<std::string, std::string>& endpoints) {
    return h.kubelet().WaitFor(
        [&](const SimState& s) {
          for (const auto& [resource, endpoint] : endpoints) {
            if (!HasEvent(s, Cat("stream ended ", resource, " at ", endpoint))) return false;
          }
          return true;
        },
        kWait);
  }

  // The Go pod starts: one Go-like plugin per resource (the Go plugin's one server per
  // config entry), the same names and slot counts as ours.
  bool StartGo(GoRegistration mode) {
    const SimState now = h.kubelet().State();
    for (const auto& resource : kBoth) {
      const auto it = now.resources.find(resource);
      snapshots_before_go_[resource] = it == now.resources.end() ? 0 : it->second.snapshots.size();
    }
    for (const auto& resource : kBoth) {
      auto plugin = std::make_unique<GoLikePlugin>(
          GoLikeOptions{h.kubelet_root(), resource, static_cast<int>(kSlots.at(resource)), mode});
      GoLikePlugin& started = *(go_[resource] = std::move(plugin));
      if (!started.Start().ok()) return false;
    }
    return true;
  }
  // Each Go-like plugin registered (once, as it sees it) with its stream open.
  bool GoRegistered() {
    for (const auto& [resource, plugin] : go_) {
      if (!plugin->WaitFor(
              [](const GoLikeState& s) { return s.registrations >= 1 && s.streams_open == 1; },
              kWait)) {
        return false;
      }
    }
    return true;
  }
  // The kubelet's current client of every resource is the Go-like plugin, stream open.
  bool KubeletUsesGo() {
    return h.kubelet().WaitFor(
        [this](const SimState& s) {
          for (const auto& [resource, plugin] : go_) {
            auto it = s.resources.find(resource);
            // ...and its device list has arrived: a list still in flight would otherwise
            // land after a disconnect and count as served (the simulator's order, and the
            // kubelet's: a response already received is handled).
            if (it == s.resources.end() || it->second.endpoint != plugin->socket_path() ||
                !it->second.stream_open ||
                it->second.snapshots.size() <= snapshots_before_go_[resource]) {
              return false;
            }
          }
          return true;
        },
        kWait);
  }
  void StopGo() {
    for (auto& [resource, plugin] : go_) plugin->Stop();
  }
  // Exact counts of a Go-like plugin: registered once and never asked again.
  void ExpectRegisteredOnce(const GoLikeState& s, GoRegistration mode, const std::string& what) {
    EXPECT_EQ(s.registrations, 1) << what;
    EXPECT_EQ(s.streams_started, 1) << what;
    EXPECT_TRUE(s.errors.empty()) << what;
    if (mode == GoRegistration::kWatcher) {
      EXPECT_EQ(s.get_info_calls, 1) << what;
      EXPECT_EQ(s.notified_ok, 1) << what;
      EXPECT_EQ(s.register_calls, 0) << what;
    } else {
      EXPECT_EQ(s.register_calls, 1) << what;
      EXPECT_EQ(s.get_info_calls, 0) << what;
    }
  }

  bool BackToCapacity() { return h.kubelet().WaitFor(AllAtCapacity, kWait); }
  // Allocatable stays at capacity, and nothing registers, is lost or dips, for kQuiet (the
  // simulator's own wait is the window).
  bool StaysAtCapacity() {
    const std::string base = Activity(h.kubelet().State());
    return h.kubelet().StaysFalse(
        [&](const SimState& s) { return !AllAtCapacity(s) || Activity(s) != base; }, kQuiet);
  }
  void PrintZero(const std::string& what, const SimState& before, const SimState& after) {
    for (const auto& resource : kBoth) {
      std::cout << "[measured] " << Era() << " " << what << ": " << resource << " zero-allocatable "
                << after.resources.at(resource).zero_allocatable_ms -
                       (before.resources.count(resource) > 0
                            ? before.resources.at(resource).zero_allocatable_ms
                            : 0)
                << " ms\n";
    }
  }

  // The old rollback order: the Go pod started while ours still serves, then ours deleted.
  void OldRollbackOrder(GoRegistration mode) {
    StartOurs();
    ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 1, kWait));
    const std::map<std::string, std::string> ours = Endpoints();
    ASSERT_TRUE(StartGo(mode));
    ASSERT_TRUE(GoRegistered());
    ASSERT_TRUE(KubeletUsesGo()) << "the Go-like plugin is the current client";
    ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, kWait));
    const SimState before = h.kubelet().State();
    ASSERT_TRUE(StopOurs());
    ASSERT_TRUE(StreamsEnded(ours)) << "the kubelet never saw our streams end";
    const std::string how = mode == GoRegistration::kWatcher ? "watcher" : "kubelet";
    if (GetParam() == KubeletEra::kV125to136) {
      // Our stream's end disconnected the current client, the Go-like plugin: its stream is
      // cut, it does nothing, and nothing brings it back.
      EXPECT_TRUE(h.kubelet().WaitFor(AllAtZero, kWait)) << Describe(h.kubelet().State());
      for (const auto& [resource, plugin] : go_) {
        EXPECT_TRUE(plugin->WaitFor(
            [](const GoLikeState& s) { return s.streams_ended == 1 && s.streams_open == 0; },
            kWait))
            << resource;
      }
      const std::string base = Activity(h.kubelet().State());
      EXPECT_TRUE(h.kubelet().StaysFalse(
          [&](const SimState& s) { return !AllAtZero(s) || Activity(s) != base; }, kQuiet))
          << "the Go-like plugin came back";
      EXPECT_FALSE(h.kubelet().Allocate(kA, {"0"}).ok()) << "a pod could still be admitted";
      for (const auto& [resource, plugin] : go_) {
        const GoLikeState s = plugin->State();
        ExpectRegisteredOnce(s, mode, resource);
        EXPECT_TRUE(s.serving) << resource << ": still running, registered nowhere";
        EXPECT_EQ(s.allocate_calls, 0) << resource;
      }
    } else {
      // v1.24 ignores the end of a stream that is no longer current; v1.37 removes only the
      // endpoint at our path and the Go-like plugin stays current.
      EXPECT_TRUE(BackToCapacity());
      EXPECT_TRUE(StaysAtCapacity());
      EXPECT_TRUE(h.kubelet().Allocate(kA, {"0"}).ok());
      for (const auto& [resource, plugin] : go_) {
        const GoLikeState s = plugin->State();
        ExpectRegisteredOnce(s, mode, resource);
        EXPECT_EQ(s.streams_ended, 0) << resource;
        EXPECT_EQ(s.streams_open, 1) << resource;
        EXPECT_EQ(s.allocate_calls, resource == kA ? 1 : 0) << resource;
      }
    }
    const SimState after = h.kubelet().State();
    for (const auto& resource : kBoth) {
      EXPECT_EQ(after.resources.at(resource).registrations, 2) << resource;  // ours, the Go-like
    }
    EXPECT_TRUE(after.rejected.empty());
    PrintZero(Cat("old rollback order (Go pod first, ", how, " mode, then ours deleted)"), before,
              after);
  }

  PluginHarness h{GetParam()};
  std::map<std::string, std::unique_ptr<GoLikePlugin>> go_;  // destroyed before h
  std::map<std::string, size_t> snapshots_before_go_;        // lists the kubelet had before StartGo
};

// docs/migrating.md step 4: the Go plugin serves the node; ours starts and registers, then
// the Go pod is deleted. Allocatable is back at capacity and stays there on every era. The
// Go pod's exit knocks ours off on <= 1.36 (the kubelet's reaction to the Go plugin's stream
// end on 1.25-1.36, and the watcher's DeRegisterPlugin, by name, on 1.24 and 1.25-1.36);
// ours registers again at once each time. 1.37 removes only the Go plugin's path.
TEST_P(Migrate, MigrationStartsOursThenDeletesTheGoPod) {
  ASSERT_TRUE(StartGo(GoRegistration::kWatcher));
  ASSERT_TRUE(GoRegistered());
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 1, kWait));
  ASSERT_TRUE(BackToCapacity());
  StartOurs();  // kubectl label node ...migrate=true; the pod starts
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 2, kWait));  // ...and is ready
  for (const auto& [resource, endpoint] : Endpoints()) {
    ASSERT_NE(endpoint, go_.at(resource)->socket_path()) << "ours is not the current client";
  }
  const SimState before = h.kubelet().State();
  StopGo();  // kubectl delete pod -l name=rdma-shared-dp-ds ...
  // The watcher sees each socket go and deregisters it at its next pass.
  ASSERT_TRUE(h.kubelet().WaitFor(
      [this](const SimState& s) {
        for (const auto& [resource, plugin] : go_) {
          if (!HasEvent(s, Cat("deregistered ", resource, " at ", plugin->socket_path()))) {
            return false;
          }
        }
        return true;
      },
      kWait));
  // On <= 1.36 the deregistration knocks ours off once more: the window below starts only
  // after ours registered again (it used to start before the knock, which then fell inside).
  if (GetParam() != KubeletEra::kV137) {
    ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 3, kWait));
  }
  EXPECT_TRUE(BackToCapacity());
  EXPECT_TRUE(StaysAtCapacity());
  const SimState after = h.kubelet().State();
  for (const auto& resource : kBoth) {
    const SimResource& r = after.resources.at(resource);
    EXPECT_NE(r.endpoint, go_.at(resource)->socket_path()) << resource;
    switch (GetParam()) {
      case KubeletEra::kV137:  // never knocked off, never at 0
        EXPECT_EQ(r.registrations, 2) << resource;
        EXPECT_EQ(r.zero_windows, before.resources.at(resource).zero_windows) << resource;
        break;
      case KubeletEra::kV124:  // DeRegisterPlugin stops the current endpoint: ours, once
        EXPECT_EQ(r.registrations, 3) << resource;
        break;
      case KubeletEra::kV125to136:
        // Knocked off by the Go stream's end and again by DeRegisterPlugin (once only when
        // the latter lands while ours is still re-registering; more if an old stream's end
        // is handled after ours registered again, #121994 itself).
        EXPECT_GE(r.registrations, 3) << resource;
        break;
    }
  }
  EXPECT_TRUE(after.rejected.empty());
  for (const auto& [resource, plugin] : go_) {
    ExpectRegisteredOnce(plugin->State(), GoRegistration::kWatcher, resource);
  }
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"0"}).ok());
  PrintZero("migration (ours started, then the Go pod deleted)", before, after);
  h.plugin().Signal(SIGTERM);
  EXPECT_EQ(h.plugin().WaitExit(milliseconds(10000)), 0);
}

// docs/migrating.md "Rollback": ours deleted first and gone, then the Go pod started (watcher
// mode). Allocatable is 0 in between (no plugin), then back at capacity for good on every
// era, served by the Go-like plugin, registered once.
TEST_P(Migrate, RollbackDeletesOursThenStartsTheGoPod) {
  StartOurs();
  ASSERT_TRUE(h.kubelet().WaitRegistered(kBoth, 1, kWait));
  ASSERT_TRUE(BackToCapacity());
  const std::map<std::string, std::string> ours = Endpoints();
  const SimState before = h.kubelet().State();
  ASSERT_TRUE(StopOurs());  // kubectl delete pod ...; kubectl wait --for=delete
  // Gone as the kubelet sees it: our streams ended, nothing serves.
  ASSERT_TRUE(StreamsEnded(ours));
  EXPECT_TRUE(h.kubelet().WaitFor(AllAtZero, kWait));
  ASSERT_TRUE(StartGo(GoRegistration::kWatcher));  // kubectl label node ...rollback=true
  ASSERT_TRUE(GoRegistered());
  EXPECT_TRUE(KubeletUsesGo());
  EXPECT_TRUE(BackToCapacity());
  EXPECT_TRUE(StaysAtCapacity());
  const SimState after = h.kubelet().State();
  for (const auto& resource : kBoth) {
    EXPECT_EQ(after.resources.at(resource).registrations, 2) << resource;  // ours, the Go-like
  }
  EXPECT_TRUE(after.rejected.empty());
  EXPECT_TRUE(h.kubelet().Allocate(kA, {"0"}).ok());
  for (const auto& [resource, plugin] : go_) {
    const GoLikeState s = plugin->State();
    ExpectRegisteredOnce(s, GoRegistration::kWatcher, resource);
    EXPECT_EQ(s.streams_ended, 0) << resource;
    EXPECT_EQ(s.allocate_calls, resource == kA ? 1 : 0) << resource;
  }
  // From SIGTERM to the Go-like plugin's list: our exit, its start and the watcher's pass
  // (up to 1 s); on a cluster, the Go pod's scheduling and start come on top.
  PrintZero("rollback (ours deleted, then the Go pod started)", before, after);
}

// The old documented rollback order, kept to show why the order matters: on 1.25-1.36
// allocatable ends at 0 and stays there; on 1.24 and 1.37 it stays at capacity.
TEST_P(Migrate, OldRollbackOrderStartsTheGoPodFirst) { OldRollbackOrder(GoRegistration::kWatcher); }

// The same with the Go plugin in kubelet mode (no plugins_registry mounted, or an old
// release): its registration is as final, so the outcome is the same.
TEST_P(Migrate, OldRollbackOrderWithTheGoPluginInKubeletMode) {
  OldRollbackOrder(GoRegistration::kKubelet);
}

INSTANTIATE_TEST_SUITE_P(Eras, Migrate, ::testing::ValuesIn(kAllEras),
                         [](const ::testing::TestParamInfo<KubeletEra>& p) {
                           return EraTestName(p.param);
                         });

}  // namespace
}  // namespace rdmadp::testing
