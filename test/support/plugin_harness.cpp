#include "test/support/plugin_harness.h"

#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "pkg/text/cat.h"
#include "test/support/fs_wait.h"

namespace rdmadp::testing {

PluginHarness::PluginHarness(KubeletEra era)
    : node_(tmp_.path() + "/node"), kubelet_(tmp_.path() + "/kubelet", era) {
  std::filesystem::create_directories(tmp_.path() + "/config");
}

void PluginHarness::WriteConfig(const std::string& text) {
  // Write-then-rename, as a ConfigMap update would, so a watching plugin never reads half.
  const std::string tmp = config_path() + ".tmp";
  std::ofstream(tmp) << text;
  std::filesystem::rename(tmp, config_path());
}

std::vector<std::string> PluginHarness::PluginArgs(const std::vector<std::string>& extra) const {
  std::vector<std::string> args = {
      "--config-file=" + config_path(), "--kubelet-root-dir=" + kubelet_root(),
      "--sysfs-root=" + node_.sysfs_root(), "--dev-root=" + node_.dev_root(), "--no-link-up"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

PluginProcess& PluginHarness::StartPlugin(const std::vector<std::string>& extra,
                                          bool inherit_stderr) {
  metrics_port_ = 0;
  plugin_ = std::make_unique<PluginProcess>(PluginBinary(), PluginArgs(extra),
                                            inherit_stderr ? "" : log_path());
  return *plugin_;
}

int PluginHarness::MetricsPort() {
  if (metrics_port_ != 0) return metrics_port_;
  std::smatch m;
  const std::regex re("metrics on http://127.0.0.1:([0-9]+)/metrics");
  std::string log;
  WaitForFiles(
      root(),
      [&] {
        log = PluginLog();
        return std::regex_search(log, m, re);
      },
      std::chrono::milliseconds(5000));
  metrics_port_ = m.empty() ? 0 : std::stoi(m[1]);
  return metrics_port_;
}

std::pair<int, std::string> PluginHarness::MetricsHttp(const std::string& path) {
  httplib::Client client("127.0.0.1", MetricsPort());
  client.set_read_timeout(5, 0);
  auto r = client.Get(path.c_str());
  return r ? std::make_pair(r->status, r->body) : std::make_pair(0, std::string());
}

double PluginHarness::Metric(const std::string& series) {
  const std::string body = MetricsHttp("/metrics").second;
  const auto pos = body.find("\n" + series + " ");
  return pos == std::string::npos ? -1 : std::stod(body.substr(pos + series.size() + 2));
}

double PluginHarness::AwaitMetric(const std::string& series, double value,
                                  std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  double v = Metric(series);
  while (v != value && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    v = Metric(series);
  }
  return v;
}

void PluginHarness::AddDemoHcas() {
  node_.Add(FakeNode::ConnectX(0, 0, /*infiniband=*/true));
  node_.Add(FakeNode::ConnectX(1, 0, /*infiniband=*/true));
  node_.Add(FakeNode::ConnectX(2, 1, /*infiniband=*/false));
  node_.Add(FakeNode::ConnectX(3, 1, /*infiniband=*/false));
  FakeFunction intel;
  intel.address = "0000:05:00.0";
  intel.vendor = "8086";
  intel.device = "1521";
  intel.driver = "igb";
  intel.netdevs = {"eno1"};
  node_.Add(intel);
}

std::string PluginHarness::DemoConfig(int periodic_update_interval) {
  return Cat(R"({
  "periodicUpdateInterval": )",
             periodic_update_interval, R"(,
  "configList": [
    {
      "resourceName": "hca_shared_devices_a",
      "rdmaHcaMax": 1000,
      "selectors": { "vendors": ["15b3"], "linkTypes": ["infiniband"] },
      "envHints": ["nccl", "ucx"]
    },
    {
      "resourceName": "hca_shared_devices_b",
      "rdmaHcaMax": 500,
      "selectors": { "vendors": ["15b3"], "linkTypes": ["ether"] }
    }
  ]
}
)");
}

RunResult PluginHarness::RunCommand(std::vector<std::string> args) const {
  args.push_back("--config-file=" + config_path());
  args.push_back("--sysfs-root=" + node_.sysfs_root());
  args.push_back("--dev-root=" + node_.dev_root());
  return RunToExit(args, std::chrono::milliseconds(10000));
}

}  // namespace rdmadp::testing
