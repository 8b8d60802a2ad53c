#include "pkg/sysfs/scanner.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>

#include "pkg/config/link_types.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/sysfs/sysfs_parse.h"
#include "pkg/text/cat.h"

namespace rdmadp::sysfs {
namespace {

// The thin I/O edge of the scanner: every filesystem call goes through here and is counted.
class SysfsReader {
 public:
  explicit SysfsReader(ScanStats& stats) : stats_(stats) {}

  // Names in a directory (following symlinks, as sysfs needs), sorted; empty if unreadable.
  std::vector<std::string> ListDir(const std::string& path) {
    ++stats_.dir_listings;
    std::vector<std::string> names;
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return names;
    while (const dirent* e = ::readdir(dir)) {
      std::string_view n = e->d_name;
      if (n != "." && n != "..") names.emplace_back(n);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
  }

  // sysfs attributes are under a page; one open + one read + close.
  std::optional<std::string> ReadSmallFile(const std::string& path) {
    ++stats_.file_reads;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.Valid()) return std::nullopt;
    char buf[4096];
    const ssize_t n = ::read(fd.Get(), buf, sizeof(buf));
    if (n < 0) return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
  }

  std::string LinkBaseName(const std::string& path) {
    ++stats_.link_reads;
    char buf[4096];
    const ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
    if (n <= 0) return "";
    std::string_view target(buf, static_cast<size_t>(n));
    const auto slash = target.rfind('/');
    return std::string(slash == std::string_view::npos ? target : target.substr(slash + 1));
  }

  bool Exists(const std::string& path) {
    ++stats_.stats;
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  }

  // ibdev name -> its char devices, from class/infiniband_verbs and class/infiniband_mad.
  // Built once per scan instead of once per device.
  std::map<std::string, std::vector<std::string>> CharDevicesByIbdev(const std::string& sysfs) {
    std::map<std::string, std::vector<std::string>> by_ibdev;
    for (const char* cls : {"class/infiniband_verbs", "class/infiniband_mad"}) {
      const std::string dir = Cat(sysfs, "/", cls);
      for (const auto& name : ListDir(dir)) {
        if (ClassifyCharDev(name) == CharDevKind::kNone) continue;  // abi_version
        auto ibdev = ReadSmallFile(Cat(dir, "/", name, "/ibdev"));
        if (!ibdev) continue;
        while (!ibdev->empty() && (ibdev->back() == '\n' || ibdev->back() == ' ')) {
          ibdev->pop_back();
        }
        by_ibdev[*ibdev].push_back(name);
      }
    }
    return by_ibdev;
  }

  std::vector<Port> ReadPorts(const std::string& sysfs, const std::string& ibdev) {
    std::vector<Port> ports;
    const std::string dir = Cat(sysfs, "/class/infiniband/", ibdev, "/ports");
    for (const auto& n : ListDir(dir)) {
      Port port;
      port.number = std::atoi(n.c_str());
      if (auto st = ReadSmallFile(Cat(dir, "/", n, "/state"))) port.state = ParsePortState(*st);
      ports.push_back(port);
    }
    std::sort(ports.begin(), ports.end(),
              [](const Port& a, const Port& b) { return a.number < b.number; });
    return ports;
  }

 private:
  ScanStats& stats_;
};

}  // namespace

Scanner::Scanner(std::string sysfs_root, std::string dev_root)
    : sysfs_root_(std::move(sysfs_root)), dev_root_(std::move(dev_root)) {}

NodeInventory Scanner::Scan(ScanStats* stats) const {
  ScanStats local;
  SysfsReader io(stats != nullptr ? *stats : local);
  NodeInventory inv;
  const std::string rdma_cm_path = Cat(dev_root_, "/infiniband/rdma_cm");
  inv.rdma_cm_present = io.Exists(rdma_cm_path);
  const auto char_devs = io.CharDevicesByIbdev(sysfs_root_);
  const std::string pci_dir = Cat(sysfs_root_, "/bus/pci/devices");

  for (const auto& address : io.ListDir(pci_dir)) {
    const std::string dev_dir = Cat(pci_dir, "/", address);
    auto class_text = io.ReadSmallFile(dev_dir + "/class");
    auto class_code = class_text ? ParsePciClass(*class_text) : std::nullopt;
    if (!class_code) {
      inv.problems.push_back(Cat("sysfs: ", dev_dir, "/class: unreadable or malformed"));
      continue;
    }
    if ((*class_code >> 16) != 0x02) continue;  // network controllers only

    PciFunction fn;
    fn.address = address;
    fn.class_code = *class_code;
    fn.vendor = ParsePciId(io.ReadSmallFile(dev_dir + "/vendor").value_or(""));
    fn.device = ParsePciId(io.ReadSmallFile(dev_dir + "/device").value_or(""));
    fn.numa_node = ParseNumaNode(io.ReadSmallFile(dev_dir + "/numa_node").value_or("-1"));
    fn.driver = io.LinkBaseName(dev_dir + "/driver");
    fn.netdevs = io.ListDir(dev_dir + "/net");
    if (!fn.netdevs.empty()) {
      fn.if_name = fn.netdevs.front();
      auto type = io.ReadSmallFile(Cat(sysfs_root_, "/class/net/", fn.if_name, "/type"));
      if (auto arphrd = type ? ParseArphrd(*type) : std::nullopt) {
        fn.link_type = std::string(config::LinkTypeName(*arphrd));
      }
    }
    for (const auto& ibdev : io.ListDir(dev_dir + "/infiniband")) {
      fn.rdma_devices.push_back({ibdev, io.ReadPorts(sysfs_root_, ibdev)});
      if (auto it = char_devs.find(ibdev); it != char_devs.end()) {
        fn.char_devices.insert(fn.char_devices.end(), it->second.begin(), it->second.end());
      }
    }
    std::sort(fn.char_devices.begin(), fn.char_devices.end(),
              [](const std::string& a, const std::string& b) { return CharDevLess(a, b); });

    auto has = [&](CharDevKind kind) {
      return std::any_of(fn.char_devices.begin(), fn.char_devices.end(),
                         [&](const std::string& n) { return ClassifyCharDev(n) == kind; });
    };
    if (fn.rdma_devices.empty()) {
      fn.not_rdma_reason = "no RDMA device (no infiniband/ directory)";
    } else if (!has(CharDevKind::kUverbs)) {
      fn.not_rdma_reason = "no uverbs char device (is ib_uverbs loaded?)";
    } else if (!has(CharDevKind::kUmad)) {
      fn.not_rdma_reason = "no umad char device (is ib_umad loaded?)";
    } else if (!inv.rdma_cm_present) {
      fn.not_rdma_reason = Cat(rdma_cm_path, " is missing (load rdma_ucm; mount the host's /dev)");
    } else {
      fn.rdma_capable = true;
    }
    inv.functions.push_back(std::move(fn));
  }
  return inv;
}

}  // namespace rdmadp::sysfs
