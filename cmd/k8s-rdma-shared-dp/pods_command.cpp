#include "cmd/k8s-rdma-shared-dp/pods_command.h"

#include <cstdio>
#include <cstdlib>

#include "pkg/config/config.h"
#include "pkg/observe/node_use.h"
#include "pkg/report/pods_report.h"
#include "pkg/sysfs/scanner.h"

namespace rdmadp {
namespace {

observe::NodeUseSources SourcesOf(const cli::Options& opts) {
  return {.pod_resources_socket = !opts.pod_resources_socket.empty()
                                      ? opts.pod_resources_socket
                                      : opts.kubelet_root_dir + "/pod-resources/kubelet.sock",
          .cgroup_root = opts.cgroup_root,
          .container_logs_dir = opts.container_logs_dir,
          .sysfs_root = "",
          .read_qps = opts.rdma_usage_qps};
}

}  // namespace

observe::ObserverOptions UseObserverOptions(const cli::Options& opts,
                                            const std::string& node_name) {
  observe::ObserverOptions out{.interval = std::chrono::seconds(opts.rdma_usage_interval_seconds),
                               .grace = std::chrono::seconds(opts.rdma_unused_grace_seconds),
                               .sources = SourcesOf(opts),
                               .node_name = node_name,
                               .dra_driver = opts.dra_driver_name,
                               .events_api = {},
                               .events_clock = {}};
  out.sources.sysfs_root = opts.sysfs_root;  // the daemon exports the ports' counters too
  // The daemon's shutdown waits for a List in flight: shorter than the command's.
  out.sources.list_timeout = std::chrono::seconds(5);
  return out;
}

int RunPods(const cli::Options& opts) {
  auto loaded = config::LoadConfigFile(opts.config_file);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n%s: cannot tell which resources are this plugin's\n",
                 std::string(loaded.status().message()).c_str(), opts.config_file.c_str());
    return 1;
  }
  const char* node_env = std::getenv("NODE_NAME");
  const std::string node_name =
      !opts.node_name.empty() ? opts.node_name : (node_env != nullptr ? node_env : "");
  for (const config::ResourceConfig& rc : loaded->config.resources) {
    if (rc.frontend == config::Frontend::kDra && node_name.empty()) {
      std::fprintf(stderr,
                   "%s is a DRA entry: its pool is named after the node; pass --node-name or set "
                   "NODE_NAME\n",
                   rc.FullName().c_str());
      return 1;
    }
  }
  const sysfs::NodeInventory inventory = sysfs::Scanner(opts.sysfs_root, opts.dev_root).Scan();
  const observe::OurDevices ours =
      observe::OurDevicesOn(loaded->config, inventory, node_name, opts.dra_driver_name);
  const observe::NodeUseSources sources = SourcesOf(opts);
  usage::PodResourcesClient kubelet(sources.pod_resources_socket);
  const observe::NodeUse use =
      observe::ReadNodeUse(ours, sources, kubelet, std::chrono::system_clock::now());

  const auto grace = std::chrono::seconds(opts.rdma_unused_grace_seconds);
  std::vector<usage::Judgement> judgements;
  for (const usage::ContainerUse& c : use.view.containers) {
    judgements.push_back(usage::Judge(c.sample, c.sample.age, ours.GraceOf(c.held, grace)));
  }
  const report::PodsReport report{.view = use.view,
                                  .judgements = judgements,
                                  .grace = grace,
                                  .list_error = use.list_error,
                                  .qps_read = use.qps_read};
  const std::string out =
      opts.output == "json" ? report::PodsJson(report) : report::PodsTable(report);
  std::fputs(out.c_str(), stdout);
  return use.list_ok ? 0 : 1;
}

}  // namespace rdmadp
