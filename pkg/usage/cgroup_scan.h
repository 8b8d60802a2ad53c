// Finds the containers' cgroups in the host's cgroup v2 tree and reads each one's
// rdma.current (container_cgroup.h names them, rdma_cgroup.h reads the file). The tree is
// the host's, mounted read-only (e.g. at /host/sys/fs/cgroup); a test hands it a directory
// laid out the same way. Bounded: at most `max_containers` containers, `kMaxScanDepth`
// levels, `kMaxScanDirs` directories looked into, 64 KiB per file; what was left out is
// said in `problems`. Below a container's cgroup nothing is walked (it is the container's).
// Reads the file system only: any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pkg/usage/container_cgroup.h"
#include "pkg/usage/rdma_cgroup.h"

namespace rdmadp::usage {

inline constexpr int kMaxScanDepth = 16;
inline constexpr size_t kMaxScanDirs = 100000;

struct ContainerRdma {
  ContainerCgroup container;
  // Its rdma.current by device; nullopt when the file is missing (no rdma controller
  // enabled down to this cgroup) or unreadable, `problem` says which.
  std::optional<std::map<std::string, RdmaCgroupCounts>> counts;
  std::string problem;
};

struct CgroupScan {
  std::vector<ContainerRdma> containers;  // in walk order, sorted by path
  std::vector<std::string> problems;      // what could not be walked or was left out
  bool listed = true;                     // false: the root itself could not be read
};

CgroupScan ScanContainerCgroups(const std::string& cgroup_root, size_t max_containers);

}  // namespace rdmadp::usage
