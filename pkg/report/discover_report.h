// What `k8s-rdma-shared-dp discover` prints: every PCI network function of the node, whether
// it is RDMA capable (and why not), its char devices, NUMA node, port states, and the pools it
// lands in. Pure: an inventory and a config in, text out.
#pragma once

#include <string>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/sysfs/inventory.h"

namespace rdmadp::report {

// What loading the config found beside its valid entries: the daemon skips these entries
// (and serves the rest) and logs these lines; discover shows both.
struct ConfigFindings {
  std::vector<config::SkippedEntry> skipped;
  std::vector<std::string> problems;  // the load error, warnings
};

// Aligned columns for humans, the functions that cannot serve a pod and why, then one line
// per pool (with the env a container given a slot gets), skipped entry and problem.
std::string DiscoverTable(const sysfs::NodeInventory& inventory, const config::Config& config,
                          const ConfigFindings& findings = {});

// One JSON document for tools: {"functions": [...], "pools": [...] (each with the "env" a
// container of the pool gets), "skipped": [...],
// "problems": [...]}.
std::string DiscoverJson(const sysfs::NodeInventory& inventory, const config::Config& config,
                         const ConfigFindings& findings = {});

}  // namespace rdmadp::report
