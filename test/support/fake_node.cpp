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
    Link(sys / "class/net" / fn.netdevs[i], net);
  }
  if (fn.ibdev.empty()) return;
  const fs::path ib = dev / "infiniband" / fn.ibdev;
  for (int p = 1; p <= fn.ports; ++p) {
    WriteFile(ib / "ports" / std::to_string(p) / "state", Cat(fn.port_state, "\n"));
    WriteFile(ib / "ports" / std::to_string(p) / "link_layer",
              fn.arphrd == 32 ? "InfiniBand\n" : "Ethernet\n");
    for (int g = 0; g < 4; ++g) {
      const bool set = g == 0 && !fn.zero_gids;
      WriteFile(
          ib / "ports" / std::to_string(p) / "gids" / std::to_string(g),
          set ? Cat("fe80:0000:0000:0000:0002:c903:00", fn.address.substr(5, 2), ":000", p, "\n")
              : "0000:0000:0000:0000:0000:0000:0000:0000\n");
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
