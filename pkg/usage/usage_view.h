// One sample's view of RDMA use on the node: every container that holds our devices (from
// the kubelet's pod-resources List) joined to its container ID and start (the kubelet's log
// links) and to its cgroup's rdma counts on the HCAs its allocations give it; and every
// container that holds RDMA objects on our HCAs without holding our devices (a foreign
// user: another plugin mounting every uverbs device). Pure: the reads come in, the caller
// judges (verdict.h) and shows.
//
// The join, exact or not at all (docs/observability.md, "Which container"):
//   pod-resources (namespace, pod, container) -> log link (pod UID, container ID, started)
//   -> cgroup (pod UID, container ID) -> rdma.current.
// A container with several links (it restarted; the dead one is not yet removed) is the one
// whose cgroup exists, the newest if more do. A container whose allocations give it none of
// this node's HCAs, or whose rdma.current leaves one of them out, is not judged (half the
// HCAs read could hide the QPs).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pkg/usage/cgroup_scan.h"
#include "pkg/usage/log_links.h"
#include "pkg/usage/pod_resources.h"
#include "pkg/usage/qp_owners.h"
#include "pkg/usage/verdict.h"

namespace rdmadp::usage {

// The RDMA devices (mlx5_0) each allocation gives a container.
struct OurHcas {
  std::map<std::string, std::vector<std::string>> by_resource;  // "rdma/hca_a" -> HCAs
  // DRA: pool -> device -> HCAs; a device not named here (a "pool" or "slot-N" device)
  // gives every HCA of its pool.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> by_dra_pool;
  std::map<std::string, std::string> resource_of_pool;  // DRA pool -> "rdma/ib"

  std::vector<std::string> Of(const ContainerAllocations& held) const;  // sorted, unique
  std::set<std::string> All() const;
  // The config's resources `held` is of ("rdma/hca_a"; a DRA device's pool's entry), sorted.
  std::vector<std::string> ResourcesOf(const ContainerAllocations& held) const;
};

struct ContainerUse {
  ContainerAllocations held;
  std::vector<std::string> hcas;        // what its allocations give it, sorted
  std::optional<ContainerNames> names;  // its log link: pod UID, container ID
  std::optional<std::chrono::system_clock::time_point> started;
  std::map<std::string, RdmaCgroupCounts> counts;  // its cgroup's, on its HCAs
  UseSample sample;                                // what the verdict reads
  std::string missing;  // why a source is missing ("" when every source there is was read)
};

struct ForeignUse {
  ContainerCgroup cgroup;
  std::optional<ContainerNames> names;             // when its log link says
  std::map<std::string, RdmaCgroupCounts> counts;  // on our HCAs, not all zero
  std::map<std::string, int64_t> qps;              // its QPs on our HCAs, where dumps were read
};

struct UsageView {
  std::vector<ContainerUse> containers;  // in pod-resources order
  std::vector<ForeignUse> foreign;       // in cgroup order
  // Unnamed containers with objects on our HCAs left out of `foreign` while a holder has no
  // link (either may be the other).
  size_t foreign_withheld = 0;
  // User QPs on our HCAs of processes in no container (the host's own, or gone since the
  // dump), by RDMA device, where the kernel's dumps were read (QpOwners::outside_by_device).
  std::map<std::string, int64_t> host_qps;
  std::vector<std::string> problems;  // of the reads: the List's, the links', the walk's
  bool links_listed = true;           // the links' directory could be read
  bool cgroups_listed = true;         // the cgroup root could be read
};

// `now` gives each container's age (UseSample::age) from its link's time. `qps`: the QPs by
// owner (qp_owners.h) when that source was read and complete, else nullptr.
UsageView JoinUsage(const PodResourcesList& held, const LogLinkScan& links,
                    const CgroupScan& cgroups, const OurHcas& hcas,
                    std::chrono::system_clock::time_point now, const QpOwners* qps = nullptr);

// The verdict book's key: pod UID and container name (a restart keeps its grace going; a pod
// recreated under the same name starts its own), or namespace/pod/container before the
// kubelet's link names the UID.
std::string UseKey(const ContainerUse& use);

}  // namespace rdmadp::usage
