// Builds a fake node's /sys and /dev the way the kernel lays them out: real device
// directories under sys/devices/pci0000:00/, reached through the same symlinks as on a
// real node (bus/pci/devices, class/net, class/infiniband, class/infiniband_verbs,
// class/infiniband_mad, the driver link). Used by unit tests, e2e tests, the demo and
// the benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rdmadp::testing {

struct FakeFunction {
  std::string address;  // 0000:3b:00.0
  std::string vendor = "15b3";
  std::string device = "1017";
  uint32_t class_code = 0x020000;
  int numa_node = -1;
  std::string driver = "mlx5_core";  // "" = no driver bound
  std::vector<std::string> netdevs;  // first one gets `arphrd`
  int arphrd = 1;                    // 1 ether, 32 infiniband
  std::string ibdev;                 // "" = not RDMA capable
  int ports = 1;
  std::string port_state = "4: ACTIVE";
  // ports/N/gids/0..3 as the kernel shows a GID table (unused entries read as zeros):
  // index 0 the link-local GID, or every entry zero (a management function's table).
  bool zero_gids = false;
  // RoCE: an IPv4 address of the first netdev ("c0a8:0101" for 192.168.1.1), laid out as the
  // kernel's roce_gid_mgmt.c fills the table: 0 and 1 the link-local GID as RoCE v1 and v2,
  // 2 and 3 the IPv4-mapped one as RoCE v1 and v2, each with gid_attrs/types and ndevs.
  std::string ipv4_gid;
  // tc/<port>/traffic_class as MLNX_OFED's mlx5_ib shows it ("Global tclass=N"); -1: no file.
  int traffic_class = -1;
  bool uverbs = true;
  bool umad = true;
  bool issm = true;
  std::string physfn;                    // PF address when this is a VF
  std::string pcie_root = "pci0000:00";  // the root complex directory under sys/devices
  // The ports' link_layer ("" = from arphrd: InfiniBand for 32, else Ethernet) and the
  // device's node_type (drivers/infiniband/core/sysfs.c: "1: CA", iWARP "4: RNIC").
  std::string link_layer;
  std::string node_type = "1: CA";
  // Auxiliary devices the NIC driver hangs under the function (drivers/base/auxiliary.c:
  // "<module>.<name>.<id>", linked from bus/auxiliary/devices), e.g. "ice.roce.1". Their
  // RDMA driver still parents the RDMA device to the PCI function (below).
  std::vector<std::string> aux_devices;
};

// An mlx5 sub-function: the auxiliary device mlx5_core.sf.<aux_id> under its PF's directory
// (drivers/net/ethernet/mellanox/mlx5/core/sf/dev/dev.c mlx5_sf_dev_add: parent the PF,
// an `sfnum` file), with its own netdev, RDMA device and char devices beneath it
// (mlx5_sf_dev_probe makes it the mlx5 core device's `device`).
struct FakeSubFunction {
  std::string pf;  // 0000:08:00.0
  int aux_id = 2;
  int sfnum = 88;
  std::string netdev = "enp8s0f0s88";
  std::string ibdev = "mlx5_2";
};

// What net/<netdev>/address of `fn`'s netdev number `netdev` shows: unique per function and
// netdev; IPoIB's 20 bytes for an InfiniBand netdev, else 6.
std::string FakeHardwareAddress(const FakeFunction& fn, size_t netdev);

class FakeNode {
 public:
  // Lays out an empty node under `root` (root/sys, root/dev/infiniband/rdma_cm).
  explicit FakeNode(std::string root);

  void Add(const FakeFunction& fn);
  // Hot-unplug: the function's directory, its bus link and the class links into it go.
  void Remove(const std::string& address);
  void SetPortState(const std::string& ibdev, int port, std::string_view state);
  // Driver reload: the char-device class entries and /dev nodes of `ibdev` vanish.
  void RemoveCharDevices(const std::string& ibdev);
  void RestoreCharDevices(const std::string& ibdev);
  void SetRdmaCm(bool present);

  std::string sysfs_root() const { return root_ + "/sys"; }
  std::string dev_root() const { return root_ + "/dev"; }

  // An RDMA device with no parent (/sys/devices/virtual/infiniband/<ibdev>, no `device`
  // link, its uverbs under devices/virtual/infiniband_verbs): upstream erdma registers so
  // (drivers/infiniband/hw/erdma/erdma_main.c never sets ibdev.dev.parent), as do rxe/siw.
  void AddVirtualRdmaDevice(const std::string& ibdev, bool iwarp);
  void AddSubFunction(const FakeSubFunction& sf);

  // A ConnectX HCA with one port: `index` picks its PCI address, netdev and ibdev.
  static FakeFunction ConnectX(int index, int numa_node, bool infiniband);
  // The vendors' layouts, from their kernel drivers (each names its files):
  // Intel E810 (ice + irdma) in RoCE v2 mode (the default) or iWARP mode.
  static FakeFunction IntelE810(int index, int numa_node, bool iwarp);
  // Broadcom BCM57508 (bnxt_en + bnxt_re).
  static FakeFunction BroadcomBnxtRe(int index, int numa_node);
  // Alibaba eRDMA (erdma, iWARP) as a driver that parents its RDMA device to the PCI
  // function lays it out; upstream's virtual layout is AddVirtualRdmaDevice.
  static FakeFunction AlibabaErdma(int index);
  // A ConnectX InfiniBand HCA with IPoIB not loaded: no net/ directory, class 0x0207.
  static FakeFunction ConnectXWithoutNetdev(int index, int numa_node);

 private:
  struct CharDev {
    std::string name;  // uverbs0
    std::string cls;   // infiniband_verbs
    std::string ibdev;
    std::string device_dir;
  };
  void AddCharDev(const std::string& cls, const std::string& name, const std::string& ibdev,
                  const std::string& device_dir);

  std::string root_;
  int next_uverbs_ = 0;
  int next_umad_ = 0;
  std::vector<CharDev> char_devs_;
};

}  // namespace rdmadp::testing
