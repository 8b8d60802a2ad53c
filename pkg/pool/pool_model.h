// One resource's pool as every front end sees it: the HCAs its selectors chose, each with
// its health and why, its topology and its char devices, and the shares the resource
// offers. Pure values, built from a scan; the device-plugin renderer (PoolSnapshot) and the
// DRA renderer (pkg/dra) are both built from one, so the two front ends can never disagree
// about what a pool is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/sysfs/inventory.h"

namespace rdmadp::pool {

struct PoolHca {
  sysfs::PciFunction function;  // as the scan found it (address, pcie_root, numa_node, ...)
  bool healthy = false;         // some port ACTIVE, or no ports reported
  std::string health_reason;    // why not ("" when healthy): "mlx5_0 port 1 DOWN"
  bool operator==(const PoolHca&) const = default;
};

struct PoolModel {
  config::ResourceConfig resource;
  std::vector<PoolHca> hcas;  // by PCI address
  bool operator==(const PoolModel&) const = default;

  // Shares each HCA offers: rdmaHcaMax (the device plugin advertises the same number of
  // slots for the whole pool, as the Go plugin does).
  int64_t shares() const { return resource.rdma_hca_max; }
  // Usable while one HCA is.
  bool healthy() const;
  // The NUMA nodes of the HCAs, ascending, without -1.
  std::vector<int64_t> NumaNodes() const;
};

// The RDMA-capable functions of `inventory` that match `resource`'s selectors.
PoolModel SelectPool(const config::ResourceConfig& resource, const sysfs::NodeInventory& inventory);

// Why `fn` is not usable ("" when it is): every port named with its state.
std::string HealthReason(const sysfs::PciFunction& fn);

// Why `fn` cannot serve a pod's RDMA traffic ("" when it can): no ACTIVE port
// (HealthReason), or every ACTIVE port's GID table all zero. Such functions stay out of the
// env hints, and out of the pool with skipUnusable.
std::string UnusableReason(const sysfs::PciFunction& fn);

// A port a pod can use: ACTIVE, with a GID (or GIDs not reported).
bool IsUsablePort(const sysfs::Port& port);
// The usable ports of `fn`, "<rdma device>:<port>" in device then port order.
std::vector<std::string> UsablePorts(const sysfs::PciFunction& fn);

// Whether `id` is one of "0".."slots-1" exactly as written by us: no sign, no leading zero.
bool IsSlotId(std::string_view id, int64_t slots);

}  // namespace rdmadp::pool
