// What a container that gets a slot learns about the HCAs behind it, in its environment
// (docs/pod-env.md), following the SR-IOV network device plugin's convention so that existing
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

// PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A for rdma/hca_shared_devices_a. Two resource names
// can give one variable ("rdma/env_dp" and "rdma/ENV_DP"; "a-b/c" and "a/b_c"; "rdma/a" and
// "rdma/a_INFO" with the first's _INFO): config validation refuses the second entry
// (config/validate.cpp, which repeats this rule: config cannot depend on pool).
std::string PciDeviceEnvName(std::string_view full_resource_name);

// The DRA front end's name for one request of a claim (dra/claim_metadata.h):
// PCIDEVICE__<CLAIM>__<REQUEST>, `claim` being the pod's name for a claim made from a
// template, else the claim's name. Each part is the name upper-cased with '-' written '_'
// ("hcas", "ib" -> PCIDEVICE__HCAS__IB) where that reads back as one name only: a name of
// lowercase letters and digits joined by single '-'s, and for the request neither "info"
// nor ending in "-info". Any other name (a '.', a "--", such a request, a name that is not
// a Kubernetes name at all) is written 'x' and its bytes in lowercase hex ("a.b" ->
// x612e62). So, by construction:
//  - never a device plugin's name, nor its _INFO: those have a letter or digit right after
//    "PCIDEVICE_" (a resource name begins with its DNS prefix), these an '_';
//  - two (claim, request) pairs give two names, and no name is another's with "_INFO"
//    appended ('__' is never inside a part, no plain part ends in "_INFO", a hex part has
//    no '_');
//  - no address list ends in "_INFO", which readers take for the JSON twin.
std::string ClaimPciDeviceEnvName(std::string_view claim, std::string_view request);

// A Linux process refuses an environment string over 128 KiB (MAX_ARG_STRLEN): the _INFO
// variable is left out above this, the address list stays. Single-port InfiniBand ConnectX
// HCAs as a node shows them (issm, umad, uverbs, NUMA node, PCIe root: ~430 bytes each) fit
// 238 (pool_test's InfoLeftOutIsSaidNamingThePool); more ports or longer names fit fewer.
inline constexpr size_t kMaxInfoBytes = size_t{100} * 1024;

// NCCL_IB_HCA and UCX_NET_DEVICES (as `hints` asks) naming the usable ports
// (UsablePorts) of `functions`: "=mlx5_0:1,mlx5_1:1" (NCCL's exact-match form: a bare
// "mlx5_1" would also select mlx5_10..19) and "mlx5_0:1,mlx5_1:1". None when no port is
// usable: an empty NCCL_IB_HCA would not stop NCCL, and an empty UCX_NET_DEVICES selects
// every device.
std::map<std::string, std::string> HintEnv(const std::vector<sysfs::PciFunction>& functions,
                                           const std::vector<config::EnvHint>& hints);

// The RoCE class and GID index a pod's libraries use, as `resource` asks (trafficClass,
// gidIndex; envHints names who gets them): NCCL_IB_TC and UCX_IB_TRAFFIC_CLASS,
// NCCL_IB_GID_INDEX and UCX_IB_GID_INDEX. A number from the config is given as it is; "auto"
// is the value every usable port of `functions` has (sysfs::Port traffic_class,
// roce_v2_ipv4_gid). None when a port has none or two ports differ (one variable serves
// every HCA a library opens): `not_set` then gets one line per setting, naming the resource,
// the variables and each port's value. NCCL_IB_TC is also the class of NCCL's GPU-initiated
// (DevX) QPs, which the kernel's per-port class never reaches, unless the pod sets
// NCCL_GIN_IB_TC. Only for the device plugin's Allocate answer (docs/pod-env.md: a CDI edit
// would replace the pod's own value).
std::map<std::string, std::string> RoceEnv(const std::vector<sysfs::PciFunction>& functions,
                                           const config::ResourceConfig& resource,
                                           std::vector<std::string>* not_set);

// [{"rdmaDevice": "mlx5_0", "port": 1, "state": "ACTIVE", "trafficClass": 106,
//   "roceV2GidIndex": 3}, ...]: every port of `fn`, the last two where sysfs has them.
std::string PortsJson(const sysfs::PciFunction& fn);

// `linkLayer` in _INFO: the kernel's name of an RDMA port's link layer ("InfiniBand",
// "Ethernet", as sysfs and ibv_devinfo say) for a netdev's link type ("infiniband", "ether").
std::string_view RdmaLinkLayer(std::string_view link_type);

// The _INFO document for `functions` (keyed by PCI address, in the order given).
std::string DeviceInfoJson(const std::vector<sysfs::PciFunction>& functions);

// PCIDEVICE_<RESOURCE>, _INFO, and the pool's hints (HintEnv over the pool's HCAs) for
// `model`; none for an empty pool; the hints only with `pciDeviceEnv: false`. When _INFO is left
// out (over kMaxInfoBytes), and `info_left_out` is given, it is set to one line saying so that
// names the pool, the variable, the size and the limit, for the caller to log (this is pure); else
// it is cleared.
std::map<std::string, std::string> PodEnv(const PoolModel& model,
                                          std::string* info_left_out = nullptr);

}  // namespace rdmadp::pool
