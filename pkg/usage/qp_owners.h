// Queue pairs by the container that owns them, from the kernel's resource tracking (the
// NETLINK_RDMA QP dumps, pkg/netlink/rdma_res.h): each user QP carries its owner's PID as
// the reader's PID namespace numbers it, and /proc/<pid>/cgroup names the owner's cgroup,
// which container_cgroup.h reads back into a container ID. Exact only where the reader sees
// every owner: in the host PID namespace. A user QP without a PID means the reader cannot
// see its owner (a pod without hostPID): then the source is incomplete and not used at all
// (never half a count). QPs made through mlx5 DevX are not tracked by the kernel: the
// cgroup's objects see those. Pure: the caller reads /proc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmadp::usage {

// The cgroup v2 path in a /proc/<pid>/cgroup file ("0::/kubepods.slice/..."); nullopt
// when it has no v2 line (a cgroup v1 host) or is not in that form.
std::optional<std::string> UnifiedCgroupOf(std::string_view proc_pid_cgroup);

struct QpEntry {
  std::string device;           // mlx5_0
  std::optional<uint32_t> pid;  // the owner, as the reader sees it
  bool kernel = false;          // a kernel QP (kern_name set): nobody's container
};

struct QpOwners {
  // Container ID -> RDMA device -> QPs; only containers that own one.
  std::map<std::string, std::map<std::string, int64_t>> by_container;
  size_t unseen = 0;  // user QPs whose owner this reader cannot see
  // User QPs of processes in no container (the host's), or gone, by RDMA device.
  std::map<std::string, int64_t> outside_by_device;
  size_t kernel = 0;
  bool complete() const { return unseen == 0; }
};

// `cgroup_of`: a PID's cgroup v2 path (UnifiedCgroupOf of its /proc file), nullopt when the
// process is gone or unreadable. Called once per distinct PID.
using CgroupOfPid = std::function<std::optional<std::string>(uint32_t pid)>;
QpOwners CountQpOwners(const std::vector<QpEntry>& qps, const CgroupOfPid& cgroup_of);

}  // namespace rdmadp::usage
