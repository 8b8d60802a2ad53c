// Rescan cost: full discovery + pool build on fake nodes of 16, 256, 1,024 and 4,096 PCI
// functions (HCAs with 15 VFs each, every function RDMA capable, the kernel's symlink
// layout). Baseline in the same run: the floor of the I/O alone, i.e. opening and reading
// just the attribute files that must be read, with no parsing and no pools.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "pkg/pool/snapshot.h"
#include "pkg/sysfs/scanner.h"
#include "test/bench/bench_common.h"
#include "test/support/fake_node.h"
#include "test/support/temp_dir.h"

using namespace rdmadp;
using namespace rdmadp::bench;

namespace {

// Lays out `hcas` ConnectX PFs with 15 VFs each (16 functions per HCA).
void Populate(testing::FakeNode& node, int hcas) {
  for (int h = 0; h < hcas; ++h) {
    for (int f = 0; f < 16; ++f) {
      testing::FakeFunction fn;
      char addr[32];
      std::snprintf(addr, sizeof(addr), "0000:%02x:%02x.%d", 0x10 + h / 8, (h % 8) * 4 + f / 8,
                    f % 8);
      fn.address = addr;
      fn.device = f == 0 ? "1017" : "1018";
      fn.numa_node = h % 2;
      fn.netdevs = {"ib" + std::to_string(h * 16 + f)};
      fn.arphrd = 32;
      fn.ibdev = "mlx5_" + std::to_string(h * 16 + f);
      if (f > 0) {
        char pf[32];
        std::snprintf(pf, sizeof(pf), "0000:%02x:%02x.0", 0x10 + h / 8, (h % 8) * 4);
        fn.physfn = pf;
      }
      node.Add(fn);
    }
  }
}

// The I/O floor: the same 13 filesystem calls per function the scanner needs for what it
// reports (4 attributes, driver link, net/ listing, link type, infiniband/ listing, ports
// listing, port state, the char devices' ibdev files), with no parsing and no pools.
size_t RawFloor(const std::string& sysfs) {
  size_t bytes = 0;
  char buf[4096];
  auto read_file = [&](const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : 0;
    if (fd >= 0) close(fd);
    bytes += static_cast<size_t>(std::max<ssize_t>(0, n));
    return std::string(buf, static_cast<size_t>(std::max<ssize_t>(0, n)));
  };
  auto list = [&](const std::string& path) {
    std::vector<std::string> names;
    if (DIR* d = opendir(path.c_str())) {
      while (const dirent* e = readdir(d)) {
        if (e->d_name[0] != '.') names.emplace_back(e->d_name);
      }
      closedir(d);
    }
    return names;
  };
  for (const char* cls : {"/class/infiniband_verbs", "/class/infiniband_mad"}) {
    for (const auto& n : list(sysfs + cls)) {
      if (n != "abi_version") read_file(sysfs + cls + "/" + n + "/ibdev");
    }
  }
  const std::string dir = sysfs + "/bus/pci/devices";
  for (const auto& n : list(dir)) {
    const std::string dev = dir + "/" + n;
    for (const char* attr : {"/class", "/vendor", "/device", "/numa_node"}) read_file(dev + attr);
    bytes += static_cast<size_t>(
        std::max<ssize_t>(0, readlink((dev + "/driver").c_str(), buf, sizeof(buf))));
    for (const auto& netdev : list(dev + "/net")) {
      read_file(sysfs + "/class/net/" + netdev + "/type");
      break;
    }
    for (const auto& ibdev : list(dev + "/infiniband")) {
      const std::string ports = sysfs + "/class/infiniband/" + ibdev + "/ports";
      for (const auto& p : list(ports)) read_file(ports + "/" + p + "/state");
    }
  }
  return bytes;
}

}  // namespace

int main() {
  config::ResourceConfig pfs, vfs;
  pfs.resource_name = "pfs";
  pfs.rdma_hca_max = 1000;
  pfs.selectors.device_ids = {"1017"};
  vfs.resource_name = "vfs";
  vfs.rdma_hca_max = 1000;
  vfs.selectors.device_ids = {"1018"};
  double per_fn_256 = 0;
  // BENCH_RESCAN_HCAS=64 runs one size (for profiling).
  std::vector<int> sizes = {1, 16, 64, 256};
  if (const char* only = std::getenv("BENCH_RESCAN_HCAS")) sizes = {std::atoi(only)};
  for (int hcas : sizes) {
    const int functions = hcas * 16;
    testing::TempDir tmp;
    testing::FakeNode node(tmp.path());
    Populate(node, hcas);
    sysfs::Scanner scanner(node.sysfs_root(), node.dev_root());
    sysfs::ScanStats stats;
    scanner.Scan(&stats);  // warm the dentry cache, as a long-running daemon has it
    const int runs = functions >= 4096 ? 7 : 21;
    std::vector<double> scan_ms, floor_ms, first_ms;
    size_t pooled = 0;
    pool::SnapshotPtr prev_a, prev_b;  // as the daemon keeps them between rescans
    {
      auto t = Clock::now();
      sysfs::NodeInventory inv = scanner.Scan();
      prev_a = pool::PoolSnapshot::Build(pfs, inv);
      prev_b = pool::PoolSnapshot::Build(vfs, inv);
      first_ms.push_back(MsSince(t));
    }
    for (int r = 0; r < runs; ++r) {
      auto t0 = Clock::now();
      RawFloor(node.sysfs_root());
      floor_ms.push_back(MsSince(t0));
      auto t1 = Clock::now();
      sysfs::NodeInventory inv = scanner.Scan();
      auto a = pool::PoolSnapshot::Build(pfs, inv, nullptr, prev_a);
      auto b = pool::PoolSnapshot::Build(vfs, inv, nullptr, prev_b);
      scan_ms.push_back(MsSince(t1));
      if (a != prev_a || b != prev_b) return 1;  // nothing changed: the snapshots are reused
      pooled = a->hcas().size() + b->hcas().size();
    }
    if (pooled != static_cast<size_t>(functions)) {
      std::fprintf(stderr, "expected %d pooled functions, got %zu\n", functions, pooled);
      return 1;
    }
    const std::string tag = "rescan " + std::to_string(functions) + " fns";
    const double median = Median(scan_ms);
    const std::string target = functions == 1024 ? "<= 20 ms" : "info";
    Row(tag, "first scan + 2 pools built", first_ms[0], "ms", "info", "info", "info");
    Row(tag, "rescan + 2 pools, median", median, "ms", Fmt(Median(floor_ms)) + " ms raw I/O floor",
        target, functions == 1024 ? Verdict(median <= 20) : "info");
    Row(tag, "per function", median * 1000 / functions, "us", "info", "linear", "info");
    Row(tag, "filesystem calls per function", static_cast<double>(stats.Reads()) / functions, "",
        "13 naive (class, vendor, device, numa, driver, net/, type, infiniband/, ports/, state, "
        "ibdev x3)",
        "info", "info");
    // A kernel event that names its function (a link event, a uevent under a PCI device, a
    // verbs event): that function re-read and both pools rebuilt. The port flips every run,
    // so the pool really changes.
    {
      std::vector<double> event_ms;
      sysfs::NodeInventory inv = scanner.Scan();
      sysfs::ScanStats one;
      const std::string address = inv.functions[0].address;
      for (int r = 0; r < runs; ++r) {
        node.SetPortState(inv.functions[0].rdma_devices[0].name, 1,
                          r % 2 == 0 ? "1: DOWN" : "4: ACTIVE");
        one = {};
        auto t = Clock::now();
        inv = scanner.Refresh(inv, {address}, &one);
        prev_a = pool::PoolSnapshot::Build(pfs, inv, nullptr, prev_a);
        prev_b = pool::PoolSnapshot::Build(vfs, inv, nullptr, prev_b);
        event_ms.push_back(MsSince(t));
      }
      if (one.functions != 1) return 1;
      const double event = Median(event_ms);
      Row(tag, "event on one function: re-read + 2 pools, median", event, "ms",
          Fmt(median) + " ms full rescan", "info", Fmt(median / event) + "x less");
      Row(tag, "event on one function: filesystem calls", static_cast<double>(one.Reads()), "",
          std::to_string(stats.Reads()) + " full rescan", "info", "info");
    }
    if (functions == 256) per_fn_256 = median / functions;
    if (functions == 4096) {
      const double ratio = (median / functions) / per_fn_256;
      Row("rescan growth", "per-function cost 4096 vs 256", ratio, "x", "1.00 (linear)", "<= 1.5",
          Verdict(ratio <= 1.5));
    }
  }
  return 0;
}
