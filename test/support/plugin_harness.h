// Everything an end-to-end run needs in one place: a temp dir holding a fake node, a
// kubelet simulator on <tmp>/kubelet, a config file, and the real plugin binary pointed
// at all of them.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "test/support/fake_node.h"
#include "test/support/kubelet_sim.h"
#include "test/support/plugin_process.h"
#include "test/support/temp_dir.h"

namespace rdmadp::testing {

class PluginHarness {
 public:
  explicit PluginHarness(KubeletEra era = KubeletEra::kV125to136);

  FakeNode& node() { return node_; }
  KubeletSimulator& kubelet() { return kubelet_; }
  const std::string& root() const { return tmp_.path(); }
  std::string kubelet_root() const { return tmp_.path() + "/kubelet"; }
  std::string config_path() const { return tmp_.path() + "/config/config.json"; }
  std::string log_path() const { return tmp_.path() + "/plugin.log"; }

  void WriteConfig(const std::string& text);
  // Flags that point the plugin at this harness's node, kubelet and config.
  std::vector<std::string> PluginArgs(const std::vector<std::string>& extra = {}) const;
  // Starts the plugin; its stderr goes to log_path() unless `inherit_stderr`.
  PluginProcess& StartPlugin(const std::vector<std::string>& extra = {},
                             bool inherit_stderr = false);
  PluginProcess& plugin() { return *plugin_; }
  // Runs a command of the binary (discover, validate...) to completion against this
  // harness's config, node and /dev.
  RunResult RunCommand(std::vector<std::string> args) const;
  // The plugin's log; a plugin that never started says why instead (an empty log hid it).
  std::string PluginLog() const {
    if (plugin_ && !plugin_->spawn_error().empty()) {
      return "(the plugin did not start: " + plugin_->spawn_error() + ")";
    }
    return ReadFileOrEmpty(log_path());
  }

  // The plugin's metrics endpoint, when it was started with --metrics-address=127.0.0.1:0
  // (the port is read from its start-up line, waiting up to 5 s for it).
  int MetricsPort();
  // GET `path` there: {status, body}; {0, ""} when it does not answer.
  std::pair<int, std::string> MetricsHttp(const std::string& path);
  // One sample of /metrics by its full series text (`name{labels}`), or -1 when absent.
  double Metric(const std::string& series);
  // Polls Metric(series) until it equals `value` (50 ms apart); the last value either way.
  double AwaitMetric(const std::string& series, double value,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

  // Four ConnectX HCAs: two InfiniBand on NUMA 0 (ib0, ib1), two RoCE on NUMA 1, plus an
  // Intel NIC without RDMA.
  void AddDemoHcas();
  // Two resources over the demo HCAs: `_a` = InfiniBand ports, `_b` = RoCE ports.
  static std::string DemoConfig(int periodic_update_interval = 60);

 private:
  TempDir tmp_;
  FakeNode node_;
  KubeletSimulator kubelet_;
  std::unique_ptr<PluginProcess> plugin_;
  int metrics_port_ = 0;
};

}  // namespace rdmadp::testing
