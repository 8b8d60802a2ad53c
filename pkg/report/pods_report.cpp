#include "pkg/report/pods_report.h"

#include <nlohmann/json.hpp>

#include "pkg/report/table.h"
#include "pkg/text/cat.h"
#include "pkg/text/escape.h"

namespace rdmadp::report {
namespace {

using nlohmann::json;
using usage::ContainerUse;

std::string Count(const std::optional<int64_t>& n) { return n ? std::to_string(*n) : "-"; }

std::string Resources(const usage::ContainerAllocations& held) {
  std::vector<std::string> out;
  for (const auto& [resource, ids] : held.device_ids) out.push_back(resource);
  for (const auto& d : held.dra_devices) out.push_back(Cat(d.claim_namespace, "/", d.claim_name));
  return Join(out, ",");
}

std::string Who(const std::optional<usage::ContainerNames>& names,
                const usage::ContainerCgroup& cgroup) {
  if (names) return Cat(names->pod_namespace, "/", names->pod, "/", names->container);
  return Cat("pod UID ", cgroup.pod_uid, ", container ", cgroup.container_id.substr(0, 12));
}

// How to make a missing source readable: once per kind, whatever the number of containers.
std::vector<std::string> Hints(const PodsReport& report) {
  const usage::UsageView& view = report.view;
  bool no_link = false, no_rdma = false;
  for (const ContainerUse& use : view.containers) {
    no_link |= use.missing.starts_with("no kubelet log link");
    no_rdma |= use.missing.find("no rdma.current") != std::string::npos;
  }
  no_link |= !view.links_listed;
  const bool no_cgroup_tree = !view.cgroups_listed;
  const bool no_kubelet = !report.list_error.empty();
  std::vector<std::string> hints;
  if (no_kubelet) {
    hints.emplace_back(
        "the kubelet's pod-resources socket is not reachable: mount the host's "
        "/var/lib/kubelet/pod-resources (images/components/usage) or pass --pod-resources-socket");
  }
  if (no_link) {
    hints.emplace_back(
        "containers are matched through the kubelet's links in /var/log/containers: mount that "
        "directory read-only at --container-logs-dir (images/components/usage)");
  }
  if (no_cgroup_tree) {
    hints.emplace_back(
        "the host's cgroup tree is not readable: mount /sys/fs/cgroup read-only at "
        "--cgroup-root (images/components/usage)");
  }
  if (no_rdma) {
    hints.emplace_back(
        "no rdma.current: the node needs cgroup v2 with the rdma controller enabled down to the "
        "pods (\"rdma\" in each parent's cgroup.subtree_control; docs/observability.md)");
  }
  return hints;
}

}  // namespace

std::string ShortDuration(std::chrono::seconds d) {
  const int64_t s = d.count() < 0 ? 0 : d.count();
  if (s < 60) return Cat(s, "s");
  if (s < 3600) return Cat(s / 60, "m");
  if (s < 86400)
    return s % 3600 / 60 == 0 ? Cat(s / 3600, "h") : Cat(s / 3600, "h", s % 3600 / 60, "m");
  return s % 86400 / 3600 == 0 ? Cat(s / 86400, "d") : Cat(s / 86400, "d", s % 86400 / 3600, "h");
}

std::string PodsTable(const PodsReport& report) {
  const usage::UsageView& view = report.view;
  std::vector<std::vector<std::string>> rows = {{"NAMESPACE", "POD", "CONTAINER", "RESOURCES",
                                                 "HCAS", "CONTEXTS", "OBJECTS", "QPS", "RUNNING",
                                                 "SOURCE", "VERDICT"}};
  for (size_t i = 0; i < view.containers.size(); ++i) {
    const ContainerUse& use = view.containers[i];
    const usage::Judgement& j = report.judgements[i];
    rows.push_back(
        {use.held.pod_namespace, use.held.pod, use.held.container, Resources(use.held),
         use.hcas.empty() ? "-" : Join(use.hcas, ","), Count(use.sample.hca_handles),
         Count(use.sample.hca_objects), Count(use.sample.qps),
         use.started
             ? ShortDuration(std::chrono::duration_cast<std::chrono::seconds>(use.sample.age))
             : "-",
         std::string(usage::UseSourceName(j.source)), std::string(usage::VerdictName(j.verdict))});
    for (std::string& cell : rows.back()) cell = EscapeControls(cell);
  }
  std::string out = AlignedRows(rows);
  if (view.containers.empty()) out += "(no container holds this plugin's devices)\n";
  Append(out, "\nUnused: no QP and no verbs object beyond contexts on any of its HCAs after ",
         ShortDuration(report.grace), " (--rdma-unused-grace). ",
         report.qps_read ? "QPS: the kernel's QP dumps (not QPs made through mlx5 DevX); "
                         : "QPS: not counted (--rdma-usage-qps); ",
         "CONTEXTS and OBJECTS: the container's rdma.current.\n");
  bool first = true;
  for (const ContainerUse& use : view.containers) {
    if (use.missing.empty()) continue;
    if (first) out += "\nNot read:\n";
    first = false;
    Append(out, "  ",
           EscapeControls(Cat(use.held.pod_namespace, "/", use.held.pod, "/", use.held.container)),
           ": ", EscapeControls(use.missing), "\n");
  }
  if (!view.foreign.empty()) out += "\nRDMA objects on this plugin's HCAs without its devices:\n";
  for (const usage::ForeignUse& f : view.foreign) {
    std::string counts;
    for (const auto& [hca, c] : f.counts) {
      Append(counts, " ", hca, " contexts=", c.hca_handle, " objects=", c.hca_object);
    }
    for (const auto& [hca, n] : f.qps) Append(counts, " ", hca, " qps=", n);
    Append(out, "  ", EscapeControls(Who(f.names, f.cgroup)), ":", EscapeControls(counts), "\n");
  }
  if (!view.host_qps.empty()) {
    std::string counts;
    for (const auto& [hca, n] : view.host_qps) Append(counts, " ", hca, " qps=", n);
    Append(out, "\nQPs on this plugin's HCAs of processes in no container (the host's):",
           EscapeControls(counts), "\n");
  }
  if (!report.list_error.empty()) {
    Append(out, "problem: ", EscapeControls(report.list_error), "\n");
  }
  for (const std::string& p : view.problems) Append(out, "problem: ", EscapeControls(p), "\n");
  for (const std::string& h : Hints(report)) Append(out, "hint: ", h, "\n");
  return out;
}

std::string PodsJson(const PodsReport& report) {
  const usage::UsageView& view = report.view;
  auto counts_json = [](const std::map<std::string, usage::RdmaCgroupCounts>& counts) {
    json out = json::object();
    for (const auto& [hca, c] : counts) {
      out[hca] = {{"hcaHandle", c.hca_handle}, {"hcaObject", c.hca_object}};
    }
    return out;
  };
  auto optional_json = [](const std::optional<int64_t>& n) { return n ? json(*n) : json(nullptr); };
  json containers = json::array();
  for (size_t i = 0; i < view.containers.size(); ++i) {
    const ContainerUse& use = view.containers[i];
    json resources = json::object();
    for (const auto& [resource, ids] : use.held.device_ids) resources[resource] = ids;
    json dra = json::array();
    for (const auto& d : use.held.dra_devices) {
      dra.push_back({{"claimNamespace", d.claim_namespace},
                     {"claim", d.claim_name},
                     {"pool", d.pool},
                     {"device", d.device}});
    }
    containers.push_back(
        {{"namespace", use.held.pod_namespace},
         {"pod", use.held.pod},
         {"container", use.held.container},
         {"podUID", use.names ? json(use.names->pod_uid) : json(nullptr)},
         {"containerID", use.names ? json(use.names->container_id) : json(nullptr)},
         {"resources", resources},
         {"draDevices", dra},
         {"hcas", use.hcas},
         {"counts", counts_json(use.counts)},
         {"contexts", optional_json(use.sample.hca_handles)},
         {"objects", optional_json(use.sample.hca_objects)},
         {"qps", optional_json(use.sample.qps)},
         {"runningSeconds",
          use.started
              ? json(std::chrono::duration_cast<std::chrono::seconds>(use.sample.age).count())
              : json(nullptr)},
         {"source", usage::UseSourceName(report.judgements[i].source)},
         {"verdict", usage::VerdictName(report.judgements[i].verdict)},
         {"notRead", use.missing}});
  }
  json foreign = json::array();
  for (const usage::ForeignUse& f : view.foreign) {
    foreign.push_back({{"namespace", f.names ? json(f.names->pod_namespace) : json(nullptr)},
                       {"pod", f.names ? json(f.names->pod) : json(nullptr)},
                       {"container", f.names ? json(f.names->container) : json(nullptr)},
                       {"podUID", f.cgroup.pod_uid},
                       {"containerID", f.cgroup.container_id},
                       {"counts", counts_json(f.counts)},
                       {"qps", f.qps}});
  }
  std::vector<std::string> problems = view.problems;
  if (!report.list_error.empty()) problems.insert(problems.begin(), report.list_error);
  json out = {{"graceSeconds", report.grace.count()},
              {"containers", containers},
              {"foreign", foreign},
              {"hostQps", view.host_qps},
              {"problems", problems},
              {"hints", Hints(report)}};
  // Names come from files a container's owner can influence: replace bad UTF-8, never throw.
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace rdmadp::report
