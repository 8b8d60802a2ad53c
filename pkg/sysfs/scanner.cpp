#include "pkg/sysfs/scanner.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/ascii.h"
#include "pkg/config/link_types.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/sysfs/sysfs_parse.h"
#include "pkg/text/cat.h"

namespace rdmadp::sysfs {
namespace {

// A GID index is 8 bits wherever verbs take one (ibv_global_route.sgid_index).
constexpr int kMaxGidIndex = 256;

// The thin I/O edge of the scanner: every filesystem call goes through here and is counted.
// Paths are resolved relative to directory handles (openat), so the long
// <root>/bus/pci/devices/<bdf> prefix and its symlink are walked once per function, not once
// per attribute.
class SysfsReader {
 public:
  explicit SysfsReader(ScanStats& stats) : stats_(stats) {}
  ScanStats& stats() { return stats_; }

  // Failures other than "does not exist" are reported here, naming the file, with paths
  // relative to `base` (set per function). Absent attributes are normal; unreadable ones
  // would otherwise silently drop an HCA or mark a pool Unhealthy.
  void ReportTo(std::vector<std::string>* problems, std::string base) {
    problems_ = problems;
    base_ = std::move(base);
  }

  // An O_PATH handle on a directory; invalid if it does not exist.
  UniqueFd OpenDir(int at, const std::string& path) {
    ++stats_.dir_opens;
    return UniqueFd(::openat(at, path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }

  // Names in a directory (following symlinks, as sysfs needs), sorted; empty if unreadable.
  std::vector<std::string> ListDir(int at, const std::string& path) {
    ++stats_.dir_listings;
    std::vector<std::string> names;
    const int fd = ::openat(at, path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      Failed(path, errno);
      return names;
    }
    DIR* dir = ::fdopendir(fd);  // owns fd from here
    if (dir == nullptr) {
      ::close(fd);
      return names;
    }
    while (const dirent* e = ::readdir(dir)) {
      std::string_view n = e->d_name;
      if (n != "." && n != "..") names.emplace_back(n);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
  }

  // sysfs attributes are regular files under a page; one open + fstat + one read + close.
  // Anything else is unreadable, named in the problems: a FIFO (planted in a fake
  // --sysfs-root) would block the open until a writer came and the read until it wrote,
  // holding the first scan, SIGTERM and `discover` for ever (H6 of the hardening round at
  // 050f44e), so the open does not wait (O_NONBLOCK) and only a regular file is read.
  // `quiet`: a failure is an answer, not a problem (a GID entry that went between two reads
  // answers EINVAL).
  std::optional<std::string> ReadSmallFile(int at, const std::string& path, bool quiet = false) {
    ++stats_.file_reads;
    UniqueFd fd(::openat(at, path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (!fd.Valid() || ::fstat(fd.Get(), &st) != 0) {
      if (!quiet) Failed(path, errno);
      return std::nullopt;
    }
    if (!S_ISREG(st.st_mode)) {
      if (quiet) return std::nullopt;
      // A directory keeps the read's own words for it.
      Refused(path, S_ISDIR(st.st_mode) ? std::strerror(EISDIR) : "not a regular file");
      return std::nullopt;
    }
    char buf[4096];
    const ssize_t n = ::read(fd.Get(), buf, sizeof(buf));
    if (n < 0) {
      if (!quiet) Failed(path, errno);
      return std::nullopt;
    }
    return std::string(buf, static_cast<size_t>(n));
  }

  std::string ReadLink(int at, const std::string& path) {
    ++stats_.link_reads;
    char buf[4096];
    const ssize_t n = ::readlinkat(at, path.c_str(), buf, sizeof(buf) - 1);
    return n <= 0 ? "" : std::string(buf, static_cast<size_t>(n));
  }

  std::string LinkBaseName(int at, const std::string& path) {
    const std::string target = ReadLink(at, path);
    const auto slash = target.rfind('/');
    return slash == std::string::npos ? target : target.substr(slash + 1);
  }

  bool Exists(const std::string& path) {
    ++stats_.stats;
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  }

  bool ExistsAt(int at, const std::string& name) {
    ++stats_.stats;
    struct stat st {};
    return ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  }

  // ibdev name -> its char devices, from class/infiniband_verbs and class/infiniband_mad.
  // Built once per scan instead of once per device.
  std::map<std::string, std::vector<std::string>> CharDevicesByIbdev(const std::string& sysfs) {
    std::map<std::string, std::vector<std::string>> by_ibdev;
    for (const char* cls : {"class/infiniband_verbs", "class/infiniband_mad"}) {
      UniqueFd dir = OpenDir(AT_FDCWD, Cat(sysfs, "/", cls));
      if (!dir.Valid()) continue;
      for (const auto& name : ListDir(dir.Get(), ".")) {
        if (ClassifyCharDev(name) == CharDevKind::kNone) continue;  // abi_version
        auto ibdev = ReadSmallFile(dir.Get(), name + "/ibdev");
        if (!ibdev) continue;
        while (!ibdev->empty() && (ibdev->back() == '\n' || ibdev->back() == ' ')) {
          ibdev->pop_back();
        }
        by_ibdev[*ibdev].push_back(name);
      }
    }
    return by_ibdev;
  }

  // Whether the port has a GID. Entry 0 is set on every usable port: one read, no listing of
  // the table (128 to 256 entries) on each rescan. Only when it is zero are the others read.
  GidTable ReadGidTable(int device_dir, const std::string& gids_dir) {
    auto first = ReadSmallFile(device_dir, Cat(gids_dir, "/0"));
    if (first && IsNonZeroGid(*first)) return GidTable::kHasGid;
    std::vector<std::string> names = ListDir(device_dir, gids_dir);
    if (names.empty()) return GidTable::kUnknown;
    for (const auto& name : names) {
      if (name == "0") continue;
      auto gid = ReadSmallFile(device_dir, Cat(gids_dir, "/", name));
      if (gid && IsNonZeroGid(*gid)) return GidTable::kHasGid;
    }
    return GidTable::kAllZero;
  }

  // What a pod on RoCE should use (inventory.h Port): the admin's class for the port, and
  // on a function whose netdev is Ethernet (`netdevs` non-empty only then: its link type is
  // already read, and is its ports' link layer) the first RoCE v2 GID holding an IPv4
  // address of one of `netdevs`. The GID table is walked in index order and stops there (the kernel
  // puts the netdev's addresses first, so this is a few reads); a port without such an entry costs
  // a walk of its table (at most kMaxGidIndex reads) at each scan.
  void ReadRoce(int device_dir, const std::string& ibdev, const std::string& port_dir, int port_n,
                const std::vector<std::string>& netdevs, Port& port) {
    if (auto tc = ReadSmallFile(device_dir,
                                Cat("infiniband/", ibdev, "/tc/", port_n, "/traffic_class"))) {
      port.traffic_class = ParseGlobalTrafficClass(*tc).value_or(-1);
    }
    if (netdevs.empty()) return;
    for (int i = 0; i < kMaxGidIndex; ++i) {
      auto gid = ReadSmallFile(device_dir, Cat(port_dir, "/gids/", i), /*quiet=*/true);
      if (!gid) return;  // past the table's end
      if (!IsIpv4MappedGid(*gid)) continue;
      auto type = ReadSmallFile(device_dir, Cat(port_dir, "/gid_attrs/types/", i), true);
      if (!type || !IsRoceV2GidType(*type)) continue;
      auto ndev = ReadSmallFile(device_dir, Cat(port_dir, "/gid_attrs/ndevs/", i), true);
      if (!ndev) continue;
      const std::string name(absl::StripAsciiWhitespace(*ndev));
      if (std::find(netdevs.begin(), netdevs.end(), name) == netdevs.end()) continue;
      port.roce_v2_ipv4_gid = i;
      return;
    }
  }

  // Port states of `ibdev`, read through the function's own infiniband/<ibdev> directory
  // (class/infiniband/<ibdev> is a symlink to it); `roce_netdevs` as ReadRoce takes them.
  std::vector<Port> ReadPorts(int device_dir, const std::string& ibdev,
                              const std::vector<std::string>& roce_netdevs) {
    std::vector<Port> ports;
    const std::string dir = Cat("infiniband/", ibdev, "/ports");
    for (const auto& n : ListDir(device_dir, dir)) {
      Port port;
      port.number = std::atoi(n.c_str());
      if (auto st = ReadSmallFile(device_dir, Cat(dir, "/", n, "/state"))) {
        port.state = ParsePortState(*st);
      }
      port.gids = ReadGidTable(device_dir, Cat(dir, "/", n, "/gids"));
      ReadRoce(device_dir, ibdev, Cat(dir, "/", n), port.number, roce_netdevs, port);
      ports.push_back(port);
    }
    std::sort(ports.begin(), ports.end(),
              [](const Port& a, const Port& b) { return a.number < b.number; });
    return ports;
  }

 private:
  void Failed(const std::string& path, int err) {
    if (err != ENOENT) Refused(path, std::strerror(err));
  }

  void Refused(const std::string& path, std::string_view why) {
    if (problems_ == nullptr) return;
    problems_->push_back(Cat("cannot read ", base_.empty() ? "" : base_ + "/", path, ": ", why,
                             " (what it says about the HCA is unknown)"));
  }

  ScanStats& stats_;
  std::vector<std::string>* problems_ = nullptr;
  std::string base_;
};

// Reads one PCI function. Returns nullopt for non-network functions; read failures go to
// `problems`.
using CharDevMap = std::map<std::string, std::vector<std::string>>;

std::optional<PciFunction> ScanFunction(SysfsReader& io, int pci_dir, const std::string& address,
                                        const std::string& pci_path,
                                        const std::function<const CharDevMap&()>& class_char_devs,
                                        bool rdma_cm_present, const std::string& rdma_cm_path,
                                        std::vector<std::string>& problems) {
  ++io.stats().functions;
  UniqueFd dev = io.OpenDir(pci_dir, address);  // follows the bus symlink once
  if (!dev.Valid()) {  // gone since it was listed or named by an event: not a problem
    if (errno != ENOENT) {
      problems.push_back(Cat("cannot open ", pci_path, "/", address, ": ", std::strerror(errno)));
    }
    return std::nullopt;
  }
  io.ReportTo(&problems, Cat(pci_path, "/", address));
  PciFunction fn;
  fn.address = address;
  // One read for class, IDs and driver; the separate files only if uevent is unusable.
  auto uevent = ParsePciUevent(io.ReadSmallFile(dev.Get(), "uevent").value_or(""));
  if (uevent) {
    fn.class_code = *uevent->class_code;
  } else {
    auto class_text = io.ReadSmallFile(dev.Get(), "class");
    auto class_code = class_text ? ParsePciClass(*class_text) : std::nullopt;
    if (!class_code) {
      problems.push_back(Cat("sysfs: ", pci_path, "/", address, "/class: unreadable or malformed"));
      return std::nullopt;
    }
    fn.class_code = *class_code;
  }
  if ((fn.class_code >> 16) != 0x02) return std::nullopt;  // network controllers only
  if (uevent) {
    fn.vendor = uevent->vendor;
    fn.device = uevent->device;
    fn.driver = uevent->driver;
  } else {
    fn.vendor = ParsePciId(io.ReadSmallFile(dev.Get(), "vendor").value_or(""));
    fn.device = ParsePciId(io.ReadSmallFile(dev.Get(), "device").value_or(""));
    fn.driver = io.LinkBaseName(dev.Get(), "driver");
  }
  fn.numa_node = ParseNumaNode(io.ReadSmallFile(dev.Get(), "numa_node").value_or("-1"));
  fn.pcie_root = PcieRootOfLink(io.ReadLink(pci_dir, address));
  fn.netdevs = io.ListDir(dev.Get(), "net");
  if (!fn.netdevs.empty()) {
    fn.if_name = fn.netdevs.front();
    // net/<if> here is what class/net/<if> links to.
    auto type = io.ReadSmallFile(dev.Get(), Cat("net/", fn.if_name, "/type"));
    if (auto arphrd = type ? ParseArphrd(*type) : std::nullopt) {
      fn.link_type = std::string(config::LinkTypeName(*arphrd));
    }
    auto mac = io.ReadSmallFile(dev.Get(), Cat("net/", fn.if_name, "/address"));
    fn.hardware_address = mac ? ParseHardwareAddress(*mac) : "";
  }
  // RoCE GIDs are looked for only where the netdev is Ethernet (an InfiniBand port's are not
  // IPv4 addresses).
  const std::vector<std::string> no_netdevs;
  const std::vector<std::string>& roce_netdevs = fn.link_type == "ether" ? fn.netdevs : no_netdevs;
  for (const auto& ibdev : io.ListDir(dev.Get(), "infiniband")) {
    fn.rdma_devices.push_back({ibdev, io.ReadPorts(dev.Get(), ibdev, roce_netdevs)});
  }
  if (fn.netdevs.empty() && !fn.rdma_devices.empty() && !fn.rdma_devices[0].ports.empty() &&
      !io.ExistsAt(dev.Get(), "physfn")) {
    // No netdev (an InfiniBand HCA without IPoIB loaded): its link type is its first port's
    // link layer, in the netdev's name for it, so `linkTypes: [infiniband]` selects it. The
    // Go plugin never saw such a function (it walks netdevs). Not for a VF: one without a
    // netdev here is most likely one whose netdev a CNI moved into a pod, and it must not
    // join a shared pool by its link type.
    const auto& first = fn.rdma_devices[0];
    if (auto layer = io.ReadSmallFile(dev.Get(), Cat("infiniband/", first.name, "/ports/",
                                                     first.ports[0].number, "/link_layer"))) {
      fn.link_type = LinkTypeOfLinkLayer(*layer);
    }
  }
  if (!fn.rdma_devices.empty()) {
    // The function's own char devices live under it (class/infiniband_verbs/uverbsN links
    // here). Two listings per function, instead of an ibdev read per char device.
    for (const char* cls : {"infiniband_verbs", "infiniband_mad"}) {
      for (auto& name : io.ListDir(dev.Get(), cls)) {
        if (ClassifyCharDev(name) != CharDevKind::kNone) fn.char_devices.push_back(std::move(name));
      }
    }
    if (fn.char_devices.empty()) {  // a kernel without those links: map through the classes
      for (const auto& dev_entry : fn.rdma_devices) {
        const CharDevMap& map = class_char_devs();
        if (auto it = map.find(dev_entry.name); it != map.end()) {
          fn.char_devices.insert(fn.char_devices.end(), it->second.begin(), it->second.end());
        }
      }
    }
  }
  // sysfs lists what the kernel registered; a pod gets what exists under --dev-root. A node
  // the container cannot see (a /dev not mounted from the host, udev not done yet) is never
  // handed out: Allocate would name a device the runtime cannot create.
  const std::string dev_dir = rdma_cm_path.substr(0, rdma_cm_path.rfind('/'));
  std::string first_missing;
  std::erase_if(fn.char_devices, [&](const std::string& name) {
    if (io.Exists(Cat(dev_dir, "/", name))) return false;
    if (first_missing.empty()) first_missing = Cat(dev_dir, "/", name);
    return true;
  });
  std::sort(fn.char_devices.begin(), fn.char_devices.end(),
            [](const std::string& a, const std::string& b) { return CharDevLess(a, b); });
  auto has = [&](CharDevKind kind) {
    return std::any_of(fn.char_devices.begin(), fn.char_devices.end(),
                       [&](const std::string& n) { return ClassifyCharDev(n) == kind; });
  };
  if (fn.rdma_devices.empty()) {
    fn.not_rdma_reason = "no RDMA device (no infiniband/ directory)";
  } else if (!has(CharDevKind::kUverbs)) {
    fn.not_rdma_reason = first_missing.empty()
                             ? "no uverbs char device (is ib_uverbs loaded?)"
                             : Cat(first_missing, " is missing (mount the host's /dev)");
  } else if (!rdma_cm_present) {
    // umad and issm are optional: iWARP ports have none (ib_umad makes them only for ports
    // with IB MADs, user_mad.c ib_umad_add_one), and verbs and rdma_cm serve without them. One
    // that sysfs lists but /dev lacks is left out of the device nodes, as issm always was.
    fn.not_rdma_reason = Cat(rdma_cm_path, " is missing (load rdma_ucm; mount the host's /dev)");
  } else {
    fn.rdma_capable = true;
  }
  return fn;
}

// What every function's scan shares within one Scan() or Refresh(): the node-level facts and
// the lazily built class map.
class ScanContext {
 public:
  ScanContext(const std::string& sysfs_root, const std::string& dev_root, SysfsReader& io)
      : sysfs_root_(sysfs_root),
        rdma_cm_path_(Cat(dev_root, "/infiniband/rdma_cm")),
        pci_path_(Cat(sysfs_root, "/bus/pci/devices")),
        rdma_cm_present_(io.Exists(rdma_cm_path_)),
        pci_(io.OpenDir(AT_FDCWD, pci_path_)) {}

  bool rdma_cm_present() const { return rdma_cm_present_; }
  int pci_dir() const { return pci_.Get(); }

  // Thread-safe: chunks of a large node call it in parallel.
  std::optional<PciFunction> Function(SysfsReader& io, const std::string& address,
                                      std::vector<std::string>& problems) {
    return ScanFunction(io, pci_.Get(), address, pci_path_, class_char_devs_, rdma_cm_present_,
                        rdma_cm_path_, problems);
  }

  // Adds what building the class map cost (once, if at all).
  void AddClassMapStats(ScanStats& total) const {
    total.file_reads += class_map_stats_.file_reads;
    total.dir_listings += class_map_stats_.dir_listings;
    total.dir_opens += class_map_stats_.dir_opens;
  }

 private:
  const std::string& sysfs_root_;
  const std::string rdma_cm_path_;
  const std::string pci_path_;
  const bool rdma_cm_present_;
  const UniqueFd pci_;
  // Built only if some function lacks its own char-device directories.
  std::once_flag class_map_once_;
  CharDevMap class_map_;
  ScanStats class_map_stats_;
  const std::function<const CharDevMap&()> class_char_devs_ = [this]() -> const CharDevMap& {
    std::call_once(class_map_once_, [this] {
      SysfsReader reader(class_map_stats_);
      class_map_ = reader.CharDevicesByIbdev(sysfs_root_);
    });
    return class_map_;
  };
};

// Kept few: a node is not expected to show many RDMA devices outside network functions.
constexpr size_t kMaxUnserved = 64;

// The RDMA devices class/infiniband lists that no function of `functions` holds, with why
// (sysfs_parse.h UnservedReason). One listing; a link read only for each such device.
std::vector<UnservedRdmaDevice> FindUnserved(
    SysfsReader& io, const std::string& sysfs, const std::vector<PciFunction>& functions,
    const std::map<std::string, std::vector<std::string>>& problems) {
  std::set<std::string> served;
  for (const auto& fn : functions) {
    for (const auto& d : fn.rdma_devices) served.insert(d.name);
  }
  std::vector<UnservedRdmaDevice> out;
  size_t more = 0;
  // An unreadable sfnum only leaves the number out of the reason. And `io` may still report
  // to the last function's problem list, which Refresh has since destroyed.
  io.ReportTo(nullptr, "");
  UniqueFd dir = io.OpenDir(AT_FDCWD, Cat(sysfs, "/class/infiniband"));
  if (!dir.Valid()) return out;
  for (const auto& name : io.ListDir(dir.Get(), ".")) {
    if (served.contains(name)) continue;
    if (out.size() >= kMaxUnserved) {
      ++more;
      continue;
    }
    const std::string target = io.ReadLink(dir.Get(), name);
    std::string sfnum;
    if (target.find(".sf.") != std::string::npos) {
      sfnum = io.ReadSmallFile(dir.Get(), Cat(name, "/device/sfnum")).value_or("");
      while (!sfnum.empty() && (sfnum.back() == '\n' || sfnum.back() == ' ')) sfnum.pop_back();
    }
    UnservedRdmaDevice u{name, "", ""};
    u.reason = UnservedReason(target, sfnum, u.where);
    if (problems.contains(u.where)) {  // its function was not read: the class is unknown
      u.reason = Cat("on PCI function ", u.where,
                     ", which could not be read (the problem "
                     "lines say why): not served");
    }
    out.push_back(std::move(u));
  }
  if (more > 0) out.push_back({"...", "", Cat(more, " more RDMA devices, not named here")});
  return out;
}

void AddStats(ScanStats& total, const ScanStats& part) {
  total.file_reads += part.file_reads;
  total.dir_listings += part.dir_listings;
  total.link_reads += part.link_reads;
  total.dir_opens += part.dir_opens;
  total.stats += part.stats;
  total.functions += part.functions;
}

// Large nodes are scanned in contiguous chunks on several threads (the work is syscalls;
// 64 HCAs with VFs make 1,024 functions). Small ones stay on the caller's thread.
constexpr size_t kParallelThreshold = 128;

}  // namespace

Scanner::Scanner(std::string sysfs_root, std::string dev_root)
    : sysfs_root_(std::move(sysfs_root)), dev_root_(std::move(dev_root)) {}

NodeInventory Scanner::Scan(ScanStats* stats) const {
  ScanStats local;
  ScanStats& total = stats != nullptr ? *stats : local;
  SysfsReader io(total);
  ScanContext ctx(sysfs_root_, dev_root_, io);
  NodeInventory inv;
  inv.rdma_cm_present = ctx.rdma_cm_present();
  const std::vector<std::string> addresses = io.ListDir(ctx.pci_dir(), ".");

  struct Chunk {
    ScanStats stats;
    std::vector<PciFunction> functions;
    std::map<std::string, std::vector<std::string>> problems;
  };
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t chunks = addresses.size() >= kParallelThreshold ? std::min<size_t>(cores, 8) : 1;
  std::vector<Chunk> results(chunks);
  auto scan_chunk = [&](size_t c) {
    SysfsReader reader(results[c].stats);
    const size_t begin = addresses.size() * c / chunks;
    const size_t end = addresses.size() * (c + 1) / chunks;
    for (size_t i = begin; i < end; ++i) {
      std::vector<std::string> problems;
      if (auto fn = ctx.Function(reader, addresses[i], problems)) {
        results[c].functions.push_back(std::move(*fn));
      }
      if (!problems.empty()) results[c].problems[addresses[i]] = std::move(problems);
    }
  };
  std::vector<std::thread> helpers;
  for (size_t c = 1; c < chunks; ++c) helpers.emplace_back(scan_chunk, c);
  scan_chunk(0);
  for (auto& t : helpers) t.join();
  ctx.AddClassMapStats(total);
  for (auto& r : results) {  // chunks are contiguous: address order is kept
    std::move(r.functions.begin(), r.functions.end(), std::back_inserter(inv.functions));
    inv.problems.merge(r.problems);
    AddStats(total, r.stats);
  }
  inv.unserved = FindUnserved(io, sysfs_root_, inv.functions, inv.problems);
  return inv;
}

NodeInventory Scanner::Refresh(const NodeInventory& previous,
                               const std::set<std::string>& addresses, ScanStats* stats) const {
  ScanStats local;
  ScanStats& total = stats != nullptr ? *stats : local;
  SysfsReader io(total);
  ScanContext ctx(sysfs_root_, dev_root_, io);
  if (ctx.rdma_cm_present() != previous.rdma_cm_present) return Scan(stats);
  NodeInventory inv;
  inv.rdma_cm_present = previous.rdma_cm_present;
  std::map<std::string, PciFunction> fresh;
  for (const std::string& address : addresses) {
    if (!IsPciAddress(address)) continue;  // never a path: names come from kernel events
    std::vector<std::string> problems;
    if (auto fn = ctx.Function(io, address, problems)) fresh.emplace(address, std::move(*fn));
    if (!problems.empty()) inv.problems[address] = std::move(problems);
  }
  ctx.AddClassMapStats(total);
  for (const auto& [address, list] : previous.problems) {
    if (!addresses.contains(address)) inv.problems.emplace(address, list);
  }
  // Merge by address: the kept functions of `previous` and the fresh ones, in order.
  auto next = fresh.begin();
  for (const PciFunction& fn : previous.functions) {
    for (; next != fresh.end() && next->first < fn.address; ++next) {
      inv.functions.push_back(std::move(next->second));
    }
    if (!addresses.contains(fn.address)) inv.functions.push_back(fn);
  }
  for (; next != fresh.end(); ++next) inv.functions.push_back(std::move(next->second));
  inv.unserved = FindUnserved(io, sysfs_root_, inv.functions, inv.problems);
  return inv;
}

}  // namespace rdmadp::sysfs
