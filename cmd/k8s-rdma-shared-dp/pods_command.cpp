#include "cmd/k8s-rdma-shared-dp/pods_command.h"

#include <cstdio>
#include <cstdlib>

#include "pkg/config/config.h"
#include "pkg/dra/slices/resource_slices.h"
#include "pkg/pool/pool_model.h"
#include "pkg/report/pods_report.h"
#include "pkg/sysfs/scanner.h"
#include "pkg/text/cat.h"
#include "pkg/usage/cgroup_scan.h"
#include "pkg/usage/log_links.h"
#include "pkg/usage/pod_resources.h"
#include "pkg/usage/usage_view.h"

namespace rdmadp {
namespace {

// What a node the size of the largest ones holds: the kubelet's --max-pods ceiling is far
// below this; each cap only bounds memory against a hostile or broken source.
constexpr size_t kMaxContainers = 10000;
constexpr auto kListTimeout = std::chrono::seconds(10);

// The RDMA devices each of the config's resources gives a container on this node: a device
// plugin resource its whole pool; a DRA device (dra/slices: "hca-<address>" per HCA, or a
// pool or slot device) its HCA or its pool.
usage::OurHcas HcasOfPools(const config::Config& config, const sysfs::NodeInventory& inventory,
                           const std::string& node_name) {
  usage::OurHcas out;
  dra::SliceContext ctx;
  ctx.node_name = node_name;
  for (const config::ResourceConfig& rc : config.resources) {
    const pool::PoolModel pool = pool::SelectPool(rc, inventory);
    for (const pool::PoolHca& hca : pool.hcas) {
      for (const sysfs::RdmaDevice& rd : hca.function.rdma_devices) {
        if (rc.frontend == config::Frontend::kDra) {
          out.by_dra_pool[dra::PoolName(ctx, rc)][dra::HcaDeviceName(hca.function.address)]
              .push_back(rd.name);
        } else {
          out.by_resource[rc.FullName()].push_back(rd.name);
        }
      }
    }
  }
  return out;
}

}  // namespace

int RunPods(const cli::Options& opts) {
  auto loaded = config::LoadConfigFile(opts.config_file);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n%s: cannot tell which resources are this plugin's\n",
                 std::string(loaded.status().message()).c_str(), opts.config_file.c_str());
    return 1;
  }
  const config::Config& config = loaded->config;
  const char* node_env = std::getenv("NODE_NAME");
  const std::string node_name =
      !opts.node_name.empty() ? opts.node_name : (node_env != nullptr ? node_env : "");

  usage::Ours ours;
  for (const config::ResourceConfig& rc : config.resources) {
    if (rc.frontend == config::Frontend::kDra) {
      ours.dra_driver = opts.dra_driver_name;
    } else {
      ours.resources.insert(rc.FullName());
    }
  }
  const sysfs::NodeInventory inventory = sysfs::Scanner(opts.sysfs_root, opts.dev_root).Scan();
  const usage::OurHcas hcas = HcasOfPools(config, inventory, node_name);

  const std::string socket = !opts.pod_resources_socket.empty()
                                 ? opts.pod_resources_socket
                                 : opts.kubelet_root_dir + "/pod-resources/kubelet.sock";
  usage::PodResourcesList held;
  auto listed = usage::ListOurAllocations(socket, kListTimeout, ours, kMaxContainers);
  if (listed.ok()) {
    held = std::move(*listed);
  } else {
    held.problems.push_back(std::string(listed.status().message()));
  }
  const usage::LogLinkScan links =
      usage::ScanKubeletLogLinks(opts.container_logs_dir, kMaxContainers);
  const usage::CgroupScan cgroups = usage::ScanContainerCgroups(opts.cgroup_root, kMaxContainers);
  const usage::UsageView view =
      usage::JoinUsage(held, links, cgroups, hcas, std::chrono::system_clock::now());

  const auto grace = std::chrono::seconds(opts.rdma_unused_grace_seconds);
  std::vector<usage::Judgement> judgements;
  for (const usage::ContainerUse& use : view.containers) {
    judgements.push_back(usage::Judge(use.sample, use.sample.age, grace));
  }
  const report::PodsReport report{.view = view, .judgements = judgements, .grace = grace};
  const std::string out =
      opts.output == "json" ? report::PodsJson(report) : report::PodsTable(report);
  std::fputs(out.c_str(), stdout);
  return listed.ok() ? 0 : 1;
}

}  // namespace rdmadp
