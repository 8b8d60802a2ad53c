// The device-plugin end-to-end fixture: the real binary against the kubelet simulator on
// a fake node (two InfiniBand HCAs in resource a, two RoCE in b). The suites are split by
// topic (e2e_*_test.cpp), one binary. Measured delays are printed ([measured]).
#pragma once

#include <gmock/gmock.h>
#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "test/support/fs_wait.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

inline constexpr char kA[] = "rdma/hca_shared_devices_a";
inline constexpr char kB[] = "rdma/hca_shared_devices_b";

inline long MsSince(Clock::time_point t) {
  return static_cast<long>(std::chrono::duration_cast<milliseconds>(Clock::now() - t).count());
}

class E2E : public ::testing::Test {
 protected:
  void SetUp() override { h.AddDemoHcas(); }
  void TearDown() override {
    if (!HasFailure()) return;
    std::cerr << "---- plugin log ----\n" << h.PluginLog() << "---- kubelet events ----\n";
    for (const auto& e : h.kubelet().State().events) std::cerr << e << "\n";
  }

  // Waits until `resource` has been registered `registrations` times and has a snapshot
  // after the latest registration.
  bool WaitRegistered(const std::string& resource, int registrations = 1,
                      milliseconds timeout = milliseconds(10000)) {
    return h.kubelet().WaitRegistered({resource}, registrations, timeout);
  }
  bool WaitSnapshot(const std::string& resource,
                    const std::function<bool(const v1beta1::ListAndWatchResponse&)>& pred,
                    milliseconds timeout = milliseconds(10000)) {
    return h.kubelet().WaitFor(
        [&](const SimState& s) {
          auto it = s.resources.find(resource);
          return it != s.resources.end() && !it->second.snapshots.empty() &&
                 pred(it->second.snapshots.back());
        },
        timeout);
  }
  // Waits for a log line (lines written after an event the test saw can lag behind it).
  bool LogShows(const std::string& text, milliseconds timeout = milliseconds(2000)) {
    return WaitForFiles(
        h.root(), [&] { return h.PluginLog().find(text) != std::string::npos; }, timeout);
  }
  SimResource Resource(const std::string& name) { return h.kubelet().State().resources[name]; }
  // A per-resource series of /metrics (the plugin started with kMetricsFlag).
  static std::string Series(std::string_view name, std::string_view resource) {
    return std::string(name) + "{resource=\"" + std::string(resource) + "\"}";
  }
  static constexpr char kMetricsFlag[] = "--metrics-address=127.0.0.1:0";
  // Polls /metrics until build_info says registration mode `mode` (2 s at most).
  bool AwaitMode(const std::string& mode) {
    const std::string want = ",mode=\"" + mode + "\"} 1";
    const auto deadline = Clock::now() + milliseconds(2000);
    while (h.MetricsHttp("/metrics").second.find(want) == std::string::npos) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(milliseconds(50));  // polling a remote state, not a sync
    }
    return true;
  }

  void StartAll(const std::string& config = PluginHarness::DemoConfig(),
                std::vector<std::string> extra = {}) {
    h.WriteConfig(config);
    ASSERT_TRUE(h.kubelet().Start().ok());
    h.StartPlugin(extra);
  }

  static bool AllHealth(const v1beta1::ListAndWatchResponse& m, const std::string& health) {
    if (m.devices_size() == 0) return false;
    for (const auto& d : m.devices()) {
      if (d.health() != health) return false;
    }
    return true;
  }

  PluginHarness h;
};

}  // namespace rdmadp::testing
