#include "pkg/usage/qp_owners.h"

#include "pkg/text/split.h"
#include "pkg/usage/container_cgroup.h"

namespace rdmadp::usage {

std::optional<std::string> UnifiedCgroupOf(std::string_view proc_pid_cgroup) {
  // One line per hierarchy, "<id>:<controllers>:<path>"; cgroup v2's is "0::<path>"
  // (Documentation/admin-guide/cgroup-v2.rst, "Processes").
  for (std::string_view line : Split(proc_pid_cgroup, '\n')) {
    if (line.starts_with("0::/")) return std::string(line.substr(3));
  }
  return std::nullopt;
}

QpOwners CountQpOwners(const std::vector<QpEntry>& qps, const CgroupOfPid& cgroup_of) {
  QpOwners out;
  std::map<uint32_t, std::optional<std::string>> container_of;  // PID -> container ID
  for (const QpEntry& qp : qps) {
    if (qp.kernel) {
      ++out.kernel;
      continue;
    }
    if (!qp.pid) {
      ++out.unseen;
      continue;
    }
    auto it = container_of.find(*qp.pid);
    if (it == container_of.end()) {
      std::optional<std::string> id;
      if (std::optional<std::string> cgroup = cgroup_of(*qp.pid)) {
        if (std::optional<ContainerCgroup> c = ContainerOfCgroup(*cgroup)) id = c->container_id;
      }
      it = container_of.emplace(*qp.pid, std::move(id)).first;
    }
    if (!it->second) {
      ++out.outside_by_device[qp.device];
      continue;
    }
    ++out.by_container[*it->second][qp.device];
  }
  return out;
}

}  // namespace rdmadp::usage
