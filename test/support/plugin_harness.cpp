#include "test/support/plugin_harness.h"

#include <filesystem>
#include <fstream>

#include "pkg/text/cat.h"

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
  plugin_ = std::make_unique<PluginProcess>(PluginBinary(), PluginArgs(extra),
                                            inherit_stderr ? "" : log_path());
  return *plugin_;
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
      "selectors": { "vendors": ["15b3"], "linkTypes": ["infiniband"] }
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

}  // namespace rdmadp::testing
