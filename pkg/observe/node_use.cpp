#include "pkg/observe/node_use.h"

#include <algorithm>
#include <set>

#include "pkg/dra/slices/resource_slices.h"
#include "pkg/fd/files.h"
#include "pkg/netlink/rdma_res.h"
#include "pkg/pool/pool_model.h"
#include "pkg/text/cat.h"
#include "pkg/usage/cgroup_scan.h"
#include "pkg/usage/log_links.h"

namespace rdmadp::observe {

OurDevices OurDevicesOn(const config::Config& config, const sysfs::NodeInventory& inventory,
                        const std::string& node_name, const std::string& dra_driver) {
  OurDevices out;
  dra::SliceContext ctx;
  ctx.node_name = node_name;
  for (const config::ResourceConfig& rc : config.resources) {
    const bool dra = rc.frontend == config::Frontend::kDra;
    if (rc.unused_grace_seconds) {
      out.graces[rc.FullName()] = std::chrono::seconds(*rc.unused_grace_seconds);
    }
    if (dra) {
      out.ours.dra_driver = dra_driver;
      out.hcas.resource_of_pool[dra::PoolName(ctx, rc)] = rc.FullName();
    } else {
      out.ours.resources.insert(rc.FullName());
    }
    const pool::PoolModel pool = pool::SelectPool(rc, inventory);
    for (const pool::PoolHca& hca : pool.hcas) {
      for (const sysfs::RdmaDevice& rd : hca.function.rdma_devices) {
        for (const sysfs::Port& port : rd.ports) out.ports.emplace_back(rd.name, port.number);
        if (dra) {
          out.hcas.by_dra_pool[dra::PoolName(ctx, rc)][dra::HcaDeviceName(hca.function.address)]
              .push_back(rd.name);
        } else {
          out.hcas.by_resource[rc.FullName()].push_back(rd.name);
        }
      }
    }
  }
  std::sort(out.ports.begin(), out.ports.end());  // an HCA in two pools: read once
  out.ports.erase(std::unique(out.ports.begin(), out.ports.end()), out.ports.end());
  return out;
}

namespace {

constexpr auto kDumpTimeout = std::chrono::seconds(2);
constexpr size_t kMaxDumpDevices = 4096;
constexpr size_t kMaxQps = 1000000;  // a node's QPs; each entry ~64 bytes while counted
constexpr size_t kMaxProcCgroupBytes = 4096;

// Every QP on our HCAs with its owner, or why the source cannot be used this sample.
std::optional<usage::QpOwners> ReadQpOwners(const OurDevices& ours, const NodeUseSources& sources,
                                            std::vector<std::string>& problems) {
  auto devices = netlink::DumpRdmaDevices(kDumpTimeout, kMaxDumpDevices);
  if (!devices.ok()) {
    problems.push_back(
        netlink::IsNoRdmaNetlink(devices.status())
            ? "no NETLINK_RDMA on this node (ib_core not loaded): QPs by owner "
              "are not counted"
            : Cat("the kernel's RDMA device list: ", std::string(devices.status().message())));
    return std::nullopt;
  }
  std::set<std::string> our_devices;
  for (const auto& [hca, port] : ours.ports) our_devices.insert(hca);
  std::vector<usage::QpEntry> qps;
  for (const netlink::RdmaDeviceEntry& device : *devices) {
    if (!our_devices.contains(device.name)) continue;
    auto entries = netlink::DumpRdmaResources(netlink::ResDump::kQueuePairs, device.index,
                                              kDumpTimeout, kMaxQps);
    if (!entries.ok()) {
      problems.push_back(
          Cat("the kernel's QPs of ", device.name, ": ", std::string(entries.status().message())));
      return std::nullopt;
    }
    for (const netlink::RdmaResEntry& e : *entries) {
      qps.push_back({.device = e.dev_name, .pid = e.pid, .kernel = !e.kern_name.empty()});
    }
  }
  usage::QpOwners owners = usage::CountQpOwners(qps, [&](uint32_t pid) {
    const std::optional<std::string> text =
        fd::ReadFile(Cat(sources.proc_root, "/", pid, "/cgroup"), kMaxProcCgroupBytes);
    return text ? usage::UnifiedCgroupOf(*text) : std::nullopt;
  });
  if (!owners.complete()) {
    problems.push_back(Cat(owners.unseen,
                           " QP(s) on our HCAs have owners this process cannot "
                           "see: QPs by owner need the host PID namespace "
                           "(images/components/usage-qps); not counted"));
    return std::nullopt;
  }
  return owners;
}

}  // namespace

std::chrono::seconds OurDevices::GraceOf(const usage::ContainerAllocations& held,
                                         std::chrono::seconds fallback) const {
  std::optional<std::chrono::seconds> longest;
  for (const std::string& resource : hcas.ResourcesOf(held)) {
    auto own = graces.find(resource);
    const std::chrono::seconds g = own == graces.end() ? fallback : own->second;
    longest = std::max(longest.value_or(g), g);
  }
  return longest.value_or(fallback);
}

NodeUse ReadNodeUse(const OurDevices& ours, const NodeUseSources& sources,
                    usage::PodResourcesClient& kubelet, std::chrono::system_clock::time_point now) {
  NodeUse out;
  usage::PodResourcesList held;
  auto listed = kubelet.List(sources.list_timeout, ours.ours, sources.max_containers);
  out.list_ok = listed.ok();
  if (listed.ok()) {
    held = std::move(*listed);
  } else {
    out.list_error = std::string(listed.status().message());
  }
  const usage::LogLinkScan links =
      usage::ScanKubeletLogLinks(sources.container_logs_dir, sources.max_containers);
  const usage::CgroupScan cgroups =
      usage::ScanContainerCgroups(sources.cgroup_root, sources.max_containers);
  std::vector<std::string> qp_problems;
  std::optional<usage::QpOwners> qps;
  if (sources.read_qps) qps = ReadQpOwners(ours, sources, qp_problems);
  out.qps_read = qps.has_value();
  out.view = usage::JoinUsage(held, links, cgroups, ours.hcas, now, qps ? &*qps : nullptr);
  for (std::string& p : qp_problems) out.view.problems.push_back(std::move(p));
  if (!sources.sysfs_root.empty()) {
    for (const auto& [hca, port] : ours.ports) {
      out.ports.push_back(sysfs::ReadPortCounters(sources.sysfs_root, hca, port));
      for (const std::string& p : out.ports.back().problems) out.view.problems.push_back(p);
    }
  }
  return out;
}

}  // namespace rdmadp::observe
