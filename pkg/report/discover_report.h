// What `k8s-rdma-shared-dp discover` prints: every PCI network function of the node, whether
// it is RDMA capable (and why not), its char devices, NUMA node, port states, and the pools it
// lands in. Pure: an inventory and a config in, text out.
#pragma once

#include <string>

#include "pkg/config/config.h"
#include "pkg/sysfs/inventory.h"

namespace rdmadp::report {

// Aligned columns for humans, followed by one line per pool.
std::string DiscoverTable(const sysfs::NodeInventory& inventory, const config::Config& config);

// One JSON document for tools: {"functions": [...], "pools": [...], "problems": [...]}.
std::string DiscoverJson(const sysfs::NodeInventory& inventory, const config::Config& config);

}  // namespace rdmadp::report
