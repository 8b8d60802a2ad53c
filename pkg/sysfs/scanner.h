// Reads the node's PCI network functions and their RDMA char devices from sysfs.
// Every path is resolved under an injected sysfs root and /dev root, so the same code runs
// on a real node and on a fake tree. Stateless and thread-compatible: Scan() may be called
// from any one thread at a time. Per-entry read failures are tolerated and reported in
// NodeInventory::problems; one broken device never empties the inventory.
#pragma once

#include <set>
#include <string>

#include "pkg/sysfs/inventory.h"

namespace rdmadp::sysfs {

// What one scan cost in filesystem calls (for benchmarks; the floor is the files that must
// be read).
struct ScanStats {
  size_t file_reads = 0;    // openat + read + close of one attribute file
  size_t dir_listings = 0;  // openat + getdents
  size_t link_reads = 0;    // readlinkat
  size_t dir_opens = 0;     // O_PATH handle on a directory (its path resolved once)
  size_t stats = 0;         // stat
  size_t functions = 0;     // PCI function directories read
  // Calls that read information; dir_opens only make the others cheaper.
  size_t Reads() const { return file_reads + dir_listings + link_reads + stats; }
};

class Scanner {
 public:
  Scanner(std::string sysfs_root, std::string dev_root);

  // Reads every PCI function.
  NodeInventory Scan(ScanStats* stats = nullptr) const;

  // Re-reads only the functions at `addresses` (as named by a kernel event) and keeps the
  // rest of `previous`: an address that is gone is dropped, a new one added. Returns the
  // same inventory a full Scan() would, provided nothing outside `addresses` changed since
  // `previous` was read; if /dev/infiniband/rdma_cm appeared or went (which concerns every
  // function), it is a full Scan(). Names that are not PCI addresses are ignored.
  NodeInventory Refresh(const NodeInventory& previous, const std::set<std::string>& addresses,
                        ScanStats* stats = nullptr) const;

  const std::string& sysfs_root() const { return sysfs_root_; }
  const std::string& dev_root() const { return dev_root_; }

 private:
  std::string sysfs_root_;
  std::string dev_root_;
};

}  // namespace rdmadp::sysfs
