// Reading one sample of per-container RDMA use off this node, for the `pods` command and the
// daemon's observer alike: which of the config's resources and HCAs are ours, then the
// kubelet's pod-resources List, its log links and the cgroup tree, joined
// (pkg/usage/usage_view.h). Blocking and bounded (a List timeout, caps on every read): call
// it from a command or a sampler's own thread, never the event loop.
#pragma once

#include <chrono>
#include <string>

#include "pkg/config/config.h"
#include "pkg/sysfs/inventory.h"
#include "pkg/sysfs/port_counters.h"
#include "pkg/usage/pod_resources.h"
#include "pkg/usage/usage_view.h"

namespace rdmadp::observe {

// Where the node's sources are seen (the flags of the same names).
struct NodeUseSources {
  std::string pod_resources_socket;
  std::string cgroup_root;
  std::string container_logs_dir;
  std::string sysfs_root;  // "": the ports' counters are not read
  // QPs by owner from the kernel's NETLINK_RDMA dumps, their owners' cgroups from
  // <proc_root>/<pid>/cgroup: exact only in the host PID namespace (usage/qp_owners.h).
  bool read_qps = false;
  std::string proc_root = "/proc";
  std::chrono::milliseconds list_timeout{10000};
  size_t max_containers = 10000;  // far above any --max-pods: a bound, not a limit
};

// What the config makes ours on this node: its device plugin resources and DRA driver, and
// the RDMA devices each gives a container (a device plugin resource its whole pool; a DRA
// device, named as pkg/dra/slices names it, its HCA, or a pool or slot device its pool).
struct OurDevices {
  usage::Ours ours;
  usage::OurHcas hcas;
  // Entries with an unusedGraceSeconds of their own, by resource name.
  std::map<std::string, std::chrono::seconds> graces;
  // The grace of a container: the longest of its resources' (never called unused before
  // any of its entries would allow), `fallback` for a resource without its own.
  std::chrono::seconds GraceOf(const usage::ContainerAllocations& held,
                               std::chrono::seconds fallback) const;
  std::vector<std::pair<std::string, int>> ports;  // (RDMA device, port) of every pool's HCAs
};
OurDevices OurDevicesOn(const config::Config& config, const sysfs::NodeInventory& inventory,
                        const std::string& node_name, const std::string& dra_driver);

// One sample; `list_ok` false when the List failed, `list_error` then says why (it is not
// among the view's problems: the observer says it once while it lasts, whatever its text).
struct NodeUse {
  usage::UsageView view;
  bool list_ok = false;
  std::string list_error;
  std::vector<sysfs::PortCounters> ports;  // with NodeUseSources::sysfs_root
  bool qps_read = false;                   // the QP source was read whole and used
};
// `kubelet`: a client of sources.pod_resources_socket, kept by the caller between samples.
NodeUse ReadNodeUse(const OurDevices& ours, const NodeUseSources& sources,
                    usage::PodResourcesClient& kubelet, std::chrono::system_clock::time_point now);

}  // namespace rdmadp::observe
