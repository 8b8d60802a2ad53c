// A ConnectX InfiniBand HCA as a pool model holds it, for the DRA tests that build pools
// without a fake node.
#pragma once

#include <string>

#include "pkg/pool/pool_model.h"

namespace rdmadp::testing {

inline pool::PoolHca ConnectXHca(std::string address, int numa, bool healthy = true) {
  pool::PoolHca h;
  h.function.address = std::move(address);
  h.function.vendor = "15b3";
  h.function.device = "101b";
  h.function.driver = "mlx5_core";
  h.function.if_name = "ib0";
  h.function.link_type = "infiniband";
  h.function.numa_node = numa;
  h.function.pcie_root = "pci0000:3a";
  h.function.rdma_devices = {{"mlx5_0", {}}};
  h.healthy = healthy;
  h.health_reason = healthy ? "" : "mlx5_0 port 1 DOWN";
  return h;
}

}  // namespace rdmadp::testing
