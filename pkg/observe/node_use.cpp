#include "pkg/observe/node_use.h"

#include <algorithm>

#include "pkg/dra/slices/resource_slices.h"
#include "pkg/pool/pool_model.h"
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
  out.view = usage::JoinUsage(held, links, cgroups, ours.hcas, now);
  if (!sources.sysfs_root.empty()) {
    for (const auto& [hca, port] : ours.ports) {
      out.ports.push_back(sysfs::ReadPortCounters(sources.sysfs_root, hca, port));
      for (const std::string& p : out.ports.back().problems) out.view.problems.push_back(p);
    }
  }
  return out;
}

}  // namespace rdmadp::observe
