#include "test/support/fake_node.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "pkg/text/cat.h"

namespace rdmadp::testing {
namespace fs = std::filesystem;

namespace {

void WriteFile(const fs::path& path, std::string_view contents) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << contents;
}

// Symlink `link` -> relative path to `target`, as sysfs does.
void Link(const fs::path& link, const fs::path& target) {
  fs::create_directories(link.parent_path());
  std::error_code ec;
  fs::remove(link, ec);
  fs::create_directory_symlink(fs::relative(target, link.parent_path()), link);
}

std::string Hex4(std::string_view id) { return Cat("0x", id, "\n"); }

}  // namespace

std::string FakeHardwareAddress(const FakeFunction& fn, size_t netdev) {
  // 0000:BB:DD.F: the bus, device and function make it the node's own.
  const std::string bdf = fn.address.size() == 12
                              ? Cat(fn.address.substr(5, 2), ":", fn.address.substr(8, 2), ":0",
                                    fn.address.substr(11, 1))
                              : std::string("00:00:00");
  const std::string tail = Cat(bdf, ":0", netdev % 10);
  if (netdev == 0 && fn.arphrd == 32) {
    // IPoIB (drivers/infiniband/ulp/ipoib): the QPN's 4 bytes, then the port's 16-byte GID.
    return Cat("00:00:10:49:fe:80:00:00:00:00:00:00:b8:ce:f6:03:", tail);
  }
  return Cat("b8:ce:", tail);
}

FakeNode::FakeNode(std::string root) : root_(std::move(root)) {
  fs::create_directories(sysfs_root() + "/bus/pci/devices");
  fs::create_directories(sysfs_root() + "/class/net");
  fs::create_directories(sysfs_root() + "/class/infiniband");
  WriteFile(sysfs_root() + "/class/infiniband_verbs/abi_version", "6\n");
  WriteFile(sysfs_root() + "/class/infiniband_mad/abi_version", "5\n");
  SetRdmaCm(true);
}

FakeFunction FakeNode::ConnectX(int index, int numa_node, bool infiniband) {
  FakeFunction fn;
  char addr[32];
  std::snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0x10 + index);
  fn.address = addr;
  fn.numa_node = numa_node;
  fn.netdevs = {infiniband ? Cat("ib", index) : Cat("enp", 16 + index, "s0f0np0")};
  fn.arphrd = infiniband ? 32 : 1;
  fn.ibdev = Cat("mlx5_", index);
  fn.issm = infiniband;  // RoCE ports have no issm
  return fn;
}

// drivers/infiniband/hw/irdma/verbs.c irdma_init_rdma_device: ibdev.dev.parent is the PCI
// function (not the ice.roce/ice.iwarp auxiliary device ice_idc.c ice_plug_aux_dev makes;
// ids from 1). RoCE: "1: CA", RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP (umad and issm, user_mad.c
// ib_umad_add_one); iWARP: "4: RNIC", RDMA_CORE_PORT_IWARP (no IB MADs: no umad, no issm).
// link_layer Ethernet in both (irdma_get_link_layer; the core's RNIC fallback).
FakeFunction FakeNode::IntelE810(int index, int numa_node, bool iwarp) {
  FakeFunction fn;
  char addr[32];
  std::snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0x2f + index);
  fn.address = addr;
  fn.vendor = "8086";
  fn.device = "159b";
  fn.driver = "ice";
  fn.numa_node = numa_node;
  fn.netdevs = {Cat("ens", 1 + index, "f0")};
  fn.ibdev = Cat("irdma", index);
  fn.link_layer = "Ethernet";
  fn.node_type = iwarp ? "4: RNIC" : "1: CA";
  fn.umad = fn.issm = !iwarp;
  fn.aux_devices = {Cat(iwarp ? "ice.iwarp." : "ice.roce.", 1 + index)};
  return fn;
}

// drivers/infiniband/hw/bnxt_re/main.c bnxt_re_register_ib: parent the PCI function
// ("bnxt_re%d"); bnxt_en's auxiliary device bnxt_en.rdma.<id> (bnxt_ulp.c, ids from 0);
// ib_verbs.c bnxt_re_get_port_immutable: RoCE (umad and issm); link_layer Ethernet.
FakeFunction FakeNode::BroadcomBnxtRe(int index, int numa_node) {
  FakeFunction fn;
  char addr[32];
  std::snprintf(addr, sizeof(addr), "0000:%02x:00.0", 0x41 + index);
  fn.address = addr;
  fn.vendor = "14e4";
  fn.device = "1750";
  fn.driver = "bnxt_en";
  fn.numa_node = numa_node;
  fn.netdevs = {Cat("ens", 1 + index, "f0np0")};
  fn.ibdev = Cat("bnxt_re", index);
  fn.link_layer = "Ethernet";
  fn.aux_devices = {Cat("bnxt_en.rdma.", index)};
  return fn;
}

// drivers/infiniband/hw/erdma/erdma_main.c: its own PCI driver (1ded:107f), "erdma_%d";
// its netdev is a virtio-net device on another function (erdma_enum_and_get_netdev pairs
// them by MAC): none here. iWARP: "4: RNIC", RDMA_CORE_PORT_IWARP (no umad, no issm).
FakeFunction FakeNode::AlibabaErdma(int index) {
  FakeFunction fn;
  char addr[32];
  std::snprintf(addr, sizeof(addr), "0000:00:%02x.0", 0x06 + index);
  fn.address = addr;
  fn.vendor = "1ded";
  fn.device = "107f";
  fn.driver = "erdma";
  fn.ibdev = Cat("erdma_", index);
  fn.link_layer = "Ethernet";
  fn.node_type = "4: RNIC";
  fn.umad = fn.issm = false;
  return fn;
}

// No IPoIB: ib_ipoib's ipoib_parent_init is what puts a netdev (type 32) on the function;
// mlx5 makes no Ethernet netdev for an IB port. PCI class 0x020700 in IB mode.
FakeFunction FakeNode::ConnectXWithoutNetdev(int index, int numa_node) {
  FakeFunction fn = ConnectX(index, numa_node, /*infiniband=*/true);
  fn.netdevs.clear();
  fn.class_code = 0x020700;
  fn.link_layer = "InfiniBand";
  return fn;
}

void FakeNode::Add(const FakeFunction& fn) {
  const fs::path sys = sysfs_root();
  const fs::path root = sys / "devices" / fn.pcie_root;
  const fs::path parent = fn.physfn.empty() ? root : root / fn.physfn;
  const fs::path dev = parent / fn.address;
  char cls[16];
  std::snprintf(cls, sizeof(cls), "0x%06x\n", fn.class_code);
  WriteFile(dev / "class", cls);
  WriteFile(dev / "vendor", Hex4(fn.vendor));
  WriteFile(dev / "device", Hex4(fn.device));
  WriteFile(dev / "numa_node", Cat(fn.numa_node, "\n"));
  WriteFile(dev / "modalias", Cat("pci:v0000", fn.vendor, "d0000", fn.device, "\n"));
  {  // as the kernel's pci_uevent() writes it: class without leading zeros, IDs upper case
    std::string id = Cat(fn.vendor, ":", fn.device);
    for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    char cls_hex[16];
    std::snprintf(cls_hex, sizeof(cls_hex), "%X", fn.class_code);
    WriteFile(dev / "uevent",
              Cat(fn.driver.empty() ? "" : Cat("DRIVER=", fn.driver, "\n"), "PCI_CLASS=", cls_hex,
                  "\nPCI_ID=", id, "\nPCI_SUBSYS_ID=", id, "\nPCI_SLOT_NAME=", fn.address,
                  "\nMODALIAS=pci:v0000", id, "\n"));
  }
  Link(sys / "bus/pci/devices" / fn.address, dev);
  if (!fn.driver.empty()) {
    fs::create_directories(sys / "bus/pci/drivers" / fn.driver);
    Link(dev / "driver", sys / "bus/pci/drivers" / fn.driver);
  }
  if (!fn.physfn.empty()) Link(dev / "physfn", parent);
  for (size_t i = 0; i < fn.netdevs.size(); ++i) {
    const fs::path net = dev / "net" / fn.netdevs[i];
    WriteFile(net / "type", Cat(i == 0 ? fn.arphrd : 1, "\n"));
    WriteFile(net / "operstate", "up\n");
    WriteFile(net / "address", Cat(FakeHardwareAddress(fn, i), "\n"));
    Link(sys / "class/net" / fn.netdevs[i], net);
  }
  for (const auto& aux : fn.aux_devices) {
    WriteFile(dev / aux / "uevent",
              Cat("MODALIAS=auxiliary:", aux.substr(0, aux.rfind('.')), "\n"));
    Link(sys / "bus/auxiliary/devices" / aux, dev / aux);
  }
  if (fn.ibdev.empty()) return;
  const fs::path ib = dev / "infiniband" / fn.ibdev;
  WriteFile(ib / "node_type", Cat(fn.node_type, "\n"));
  for (int p = 1; p <= fn.ports; ++p) {
    WriteFile(ib / "ports" / std::to_string(p) / "state", Cat(fn.port_state, "\n"));
    WriteFile(ib / "ports" / std::to_string(p) / "link_layer",
              !fn.link_layer.empty() ? Cat(fn.link_layer, "\n")
              : fn.arphrd == 32      ? std::string("InfiniBand\n")
                                     : std::string("Ethernet\n"));
    const fs::path port = ib / "ports" / std::to_string(p);
    const std::string link_local =
        Cat("fe80:0000:0000:0000:0002:c903:00", fn.address.substr(5, 2), ":000", p, "\n");
    for (int g = 0; g < 4; ++g) {
      std::string gid = "0000:0000:0000:0000:0000:0000:0000:0000\n";
      if (!fn.zero_gids && (g == 0 || (!fn.ipv4_gid.empty() && g == 1))) gid = link_local;
      if (!fn.zero_gids && !fn.ipv4_gid.empty() && g >= 2) {
        gid = Cat("0000:0000:0000:0000:0000:ffff:", fn.ipv4_gid, "\n");
      }
      WriteFile(port / "gids" / std::to_string(g), gid);
      if (!fn.ipv4_gid.empty() && !fn.zero_gids && !fn.netdevs.empty()) {
        WriteFile(port / "gid_attrs/types" / std::to_string(g),
                  g % 2 == 0 ? "IB/RoCE v1\n" : "RoCE v2\n");
        WriteFile(port / "gid_attrs/ndevs" / std::to_string(g), Cat(fn.netdevs[0], "\n"));
      }
    }
    if (fn.traffic_class >= 0) {
      WriteFile(ib / "tc" / std::to_string(p) / "traffic_class",
                Cat("Global tclass=", fn.traffic_class, "\n"));
    }
  }
  Link(sys / "class/infiniband" / fn.ibdev, ib);
  if (fn.uverbs) AddCharDev("infiniband_verbs", Cat("uverbs", next_uverbs_++), fn.ibdev, dev);
  for (int p = 1; p <= fn.ports; ++p) {
    const int n = next_umad_++;
    if (fn.umad) AddCharDev("infiniband_mad", Cat("umad", n), fn.ibdev, dev);
    if (fn.issm) AddCharDev("infiniband_mad", Cat("issm", n), fn.ibdev, dev);
  }
}

void FakeNode::AddVirtualRdmaDevice(const std::string& ibdev, bool iwarp) {
  const fs::path sys = sysfs_root();
  const fs::path ib = sys / "devices/virtual/infiniband" / ibdev;
  WriteFile(ib / "node_type", iwarp ? "4: RNIC\n" : "1: CA\n");
  WriteFile(ib / "ports/1/state", "4: ACTIVE\n");
  WriteFile(ib / "ports/1/link_layer", "Ethernet\n");
  WriteFile(ib / "ports/1/gids/0", "0016:3e01:0203:0000:0000:0000:0000:0000\n");
  Link(sys / "class/infiniband" / ibdev, ib);
  // uverbs takes the RDMA device's parent (uverbs_main.c ib_uverbs_add_one): none either.
  AddCharDev("infiniband_verbs", Cat("uverbs", next_uverbs_++), ibdev,
             (sys / "devices/virtual").string());
}

void FakeNode::AddSubFunction(const FakeSubFunction& sf) {
  const fs::path sys = sysfs_root();
  const fs::path pf = fs::canonical(sys / "bus/pci/devices" / sf.pf);
  const std::string name = Cat("mlx5_core.sf.", sf.aux_id);
  const fs::path dev = pf / name;
  WriteFile(dev / "uevent", "DRIVER=mlx5_core.sf\nMODALIAS=auxiliary:mlx5_core.sf\n");
  WriteFile(dev / "sfnum", Cat(sf.sfnum, "\n"));
  Link(sys / "bus/auxiliary/devices" / name, dev);
  // en_main.c mlx5e_build_nic_netdev: SET_NETDEV_DEV(netdev, mdev->device), the SF's device.
  WriteFile(dev / "net" / sf.netdev / "type", "1\n");
  Link(sys / "class/net" / sf.netdev, dev / "net" / sf.netdev);
  // infiniband/hw/mlx5/main.c mlx5_ib_stage_init_init: ib_dev.dev.parent = mdev->device.
  const fs::path ib = dev / "infiniband" / sf.ibdev;
  WriteFile(ib / "node_type", "1: CA\n");
  WriteFile(ib / "ports/1/state", "4: ACTIVE\n");
  WriteFile(ib / "ports/1/link_layer", "Ethernet\n");
  WriteFile(ib / "ports/1/gids/0", "fe80:0000:0000:0000:0002:c903:0088:0001\n");
  Link(ib / "device", dev);
  Link(sys / "class/infiniband" / sf.ibdev, ib);
  AddCharDev("infiniband_verbs", Cat("uverbs", next_uverbs_++), sf.ibdev, dev.string());
  const int n = next_umad_++;
  AddCharDev("infiniband_mad", Cat("umad", n), sf.ibdev, dev.string());
  AddCharDev("infiniband_mad", Cat("issm", n), sf.ibdev, dev.string());
}

void FakeNode::Remove(const std::string& address) {
  const fs::path sys = sysfs_root();
  const fs::path link = sys / "bus/pci/devices" / address;
  const fs::path dir = fs::canonical(link);
  fs::remove(link);
  fs::remove_all(dir);
  for (const auto& cls : fs::directory_iterator(sys / "class")) {
    for (const auto& entry : fs::directory_iterator(cls.path())) {
      if (entry.is_symlink() && !fs::exists(entry.path())) fs::remove(entry.path());
    }
  }
  std::erase_if(char_devs_, [&](const CharDev& cd) {
    if (cd.device_dir != dir.string()) return false;
    fs::remove(fs::path(dev_root()) / "infiniband" / cd.name);
    return true;
  });
}

void FakeNode::AddCharDev(const std::string& cls, const std::string& name, const std::string& ibdev,
                          const std::string& device_dir) {
  char_devs_.push_back({name, cls, ibdev, device_dir});
  const fs::path entry = fs::path(device_dir) / cls / name;
  WriteFile(entry / "ibdev", ibdev + "\n");
  WriteFile(entry / "dev", "231:0\n");
  Link(fs::path(sysfs_root()) / "class" / cls / name, entry);
  WriteFile(fs::path(dev_root()) / "infiniband" / name, "");
}

void FakeNode::SetPortState(const std::string& ibdev, int port, std::string_view state) {
  WriteFile(fs::path(sysfs_root()) / "class/infiniband" / ibdev / "ports" / std::to_string(port) /
                "state",
            Cat(state, "\n"));
}

void FakeNode::RemoveCharDevices(const std::string& ibdev) {
  for (const auto& cd : char_devs_) {
    if (cd.ibdev != ibdev) continue;
    fs::remove(fs::path(sysfs_root()) / "class" / cd.cls / cd.name);
    fs::remove_all(fs::path(cd.device_dir) / cd.cls / cd.name);
    fs::remove(fs::path(dev_root()) / "infiniband" / cd.name);
  }
}

void FakeNode::RestoreCharDevices(const std::string& ibdev) {
  const auto devs = char_devs_;
  char_devs_.clear();
  for (const auto& cd : devs) {
    if (cd.ibdev == ibdev) {
      AddCharDev(cd.cls, cd.name, cd.ibdev, cd.device_dir);
    } else {
      char_devs_.push_back(cd);
    }
  }
}

void FakeNode::SetRdmaCm(bool present) {
  const fs::path cm = fs::path(dev_root()) / "infiniband/rdma_cm";
  if (present) {
    WriteFile(cm, "");
  } else {
    fs::remove(cm);
  }
}

}  // namespace rdmadp::testing
