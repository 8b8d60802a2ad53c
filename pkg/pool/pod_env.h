// What a container that gets a slot learns about the HCAs behind it, in its environment
// (issue 30), following the SR-IOV network device plugin's convention so that existing
// readers (app-netutil, CNIs) work: PCIDEVICE_<RESOURCE> lists the pool's PCI addresses in
// PCI order, comma-separated; PCIDEVICE_<RESOURCE>_INFO is a JSON object keyed by PCI address
// with that plugin's "generic" and "rdma" sections, extended with the RDMA device, netdev,
// NUMA node, PCIe root, link layer and each port's state. <RESOURCE> is the full resource
// name upper-cased, every character that is not a letter or digit made '_'.
// Pure: a pool model in, variables out.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/pool/pool_model.h"

namespace rdmadp::pool {

// PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A for rdma/hca_shared_devices_a.
std::string PciDeviceEnvName(std::string_view full_resource_name);

// A Linux process refuses an environment string over 128 KiB (MAX_ARG_STRLEN): the _INFO
// variable is left out above this (about 300 HCAs); the address list stays.
inline constexpr size_t kMaxInfoBytes = 100 * 1024;

// NCCL_IB_HCA and UCX_NET_DEVICES (as `hints` asks) naming the usable ports
// (UsablePorts) of `functions`: "=mlx5_0:1,mlx5_1:1" (NCCL's exact-match form: a bare
// "mlx5_1" would also select mlx5_10..19) and "mlx5_0:1,mlx5_1:1". None when no port is
// usable: an empty NCCL_IB_HCA would not stop NCCL, and an empty UCX_NET_DEVICES selects
// every device.
std::map<std::string, std::string> HintEnv(const std::vector<sysfs::PciFunction>& functions,
                                           const std::vector<config::EnvHint>& hints);

// [{"rdmaDevice": "mlx5_0", "port": 1, "state": "ACTIVE"}, ...]: every port of `fn`.
std::string PortsJson(const sysfs::PciFunction& fn);

// The _INFO document for `functions` (keyed by PCI address, in the order given).
std::string DeviceInfoJson(const std::vector<sysfs::PciFunction>& functions);

// PCIDEVICE_<RESOURCE>, _INFO, and the pool's hints (HintEnv over the pool's HCAs) for
// `model`; none for an empty pool.
std::map<std::string, std::string> PodEnv(const PoolModel& model);

}  // namespace rdmadp::pool
