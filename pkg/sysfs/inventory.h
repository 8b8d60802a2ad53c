// What a scan of sysfs found: the node's PCI network functions and their RDMA parts.
// Plain immutable values, compared field by field to detect change.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rdmadp::sysfs {

enum class PortState { kUnknown, kDown, kInit, kArmed, kActive, kActiveDefer };

// What the port's GID table holds. A function whose tables are all zero cannot serve RC
// verbs (the management functions of some ConnectX systems; a RoCE netdev without
// addresses): UCX aborts a whole worker that opens one (openucx/ucx#11820).
enum class GidTable { kUnknown, kAllZero, kHasGid };

struct Port {
  int number = 0;
  PortState state = PortState::kUnknown;
  GidTable gids = GidTable::kUnknown;  // kUnknown: no gids directory (test trees, old kernels)
  // The class the admin set for every QP of the port (tc/<n>/traffic_class, "Global
  // tclass=N": MLNX_OFED's mlx5_ib), 0..255; -1 when the file is absent or sets none.
  int traffic_class = -1;
  // The first GID index of type "RoCE v2" holding an IPv4 address of the function's own
  // netdev (not a VLAN or macvlan on it); -1 when none (InfiniBand ports: never read).
  int roce_v2_ipv4_gid = -1;
  bool operator==(const Port&) const = default;
};

struct RdmaDevice {
  std::string name;  // mlx5_0
  std::vector<Port> ports;
  bool operator==(const RdmaDevice&) const = default;
};

struct PciFunction {
  std::string address;  // 0000:3b:00.0
  std::string vendor;   // 15b3
  std::string device;   // 1017
  uint32_t class_code = 0;
  int numa_node = -1;  // -1 when the platform reports none
  // The PCIe root complex the function hangs under: the first directory of its real path
  // under /sys/devices ("pci0000:00"), as Kubernetes' resource.kubernetes.io/pcieRoot
  // attribute names it; "" when the path does not show one (a VM's virtio bus).
  std::string pcie_root;
  std::string driver;                // "" when no driver is bound
  std::vector<std::string> netdevs;  // sorted
  std::string if_name;               // first netdev (the Go plugin matches only this one)
  std::string link_type;             // of if_name; "" without a netdev
  // if_name's hardware address as net/<if>/address shows it ("b8:ce:f6:0a:0b:0c"; IPoIB's
  // 20 bytes); "" without a netdev. DRA reports it in a claim's status (networkData).
  std::string hardware_address;
  std::vector<RdmaDevice> rdma_devices;
  // Char devices under /dev/infiniband (issmN, umadN, uverbsN), without rdma_cm.
  std::vector<std::string> char_devices;
  bool rdma_capable = false;
  std::string not_rdma_reason;  // why rdma_capable is false

  bool operator==(const PciFunction&) const = default;
};

// An RDMA device the kernel shows (class/infiniband) that is not on a network function's
// own directory, and so is not served: named with why (discover, the start-up summary).
struct UnservedRdmaDevice {
  std::string ibdev;   // mlx5_2, erdma_0
  std::string where;   // "0000:08:00.0/mlx5_core.sf.2", "virtual"
  std::string reason;  // one line
  bool operator==(const UnservedRdmaDevice&) const = default;
};

struct NodeInventory {
  std::vector<PciFunction> functions;        // network-class (0x02) functions, by PCI address
  std::vector<UnservedRdmaDevice> unserved;  // by ibdev name
  bool rdma_cm_present = false;
  // Per-entry read failures, tolerated, keyed by the PCI address they concern: a refresh of
  // one function replaces exactly its own.
  std::map<std::string, std::vector<std::string>> problems;
  bool operator==(const NodeInventory&) const = default;

  // Every problem, in address order.
  std::vector<std::string> AllProblems() const;
};

// True when a pool HCA counts as healthy: some port ACTIVE, or no ports reported.
bool HasUsablePort(const PciFunction& fn);

}  // namespace rdmadp::sysfs
