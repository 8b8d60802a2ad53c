#include "pkg/usage/usage_view.h"

#include <algorithm>
#include <tuple>

#include "pkg/text/cat.h"

namespace rdmadp::usage {
namespace {

using NameKey = std::tuple<std::string, std::string, std::string>;  // namespace, pod, container

void AddAll(std::vector<std::string>& out, const std::vector<std::string>& more) {
  out.insert(out.end(), more.begin(), more.end());
}

// The link of a running container: one whose cgroup exists, the newest if more do; else the
// newest link (the container has exited, or not started).
const LinkedContainer* PickLink(const std::vector<const LinkedContainer*>& candidates,
                                const std::map<std::string, const ContainerRdma*>& cgroups) {
  const LinkedContainer* best = nullptr;
  bool best_running = false;
  for (const LinkedContainer* link : candidates) {
    const bool running = cgroups.contains(link->names.container_id);
    if (best == nullptr || (running && !best_running) ||
        (running == best_running && link->started > best->started)) {
      best = link;
      best_running = running;
    }
  }
  return best;
}

}  // namespace

std::vector<std::string> OurHcas::Of(const ContainerAllocations& held) const {
  std::vector<std::string> out;
  for (const auto& [resource, ids] : held.device_ids) {
    if (auto it = by_resource.find(resource); it != by_resource.end()) AddAll(out, it->second);
  }
  for (const DraDevice& device : held.dra_devices) {
    auto pool = by_dra_pool.find(device.pool);
    if (pool == by_dra_pool.end()) continue;
    if (auto it = pool->second.find(device.device); it != pool->second.end()) {
      AddAll(out, it->second);
    } else {
      for (const auto& [name, hcas] : pool->second) AddAll(out, hcas);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> OurHcas::ResourcesOf(const ContainerAllocations& held) const {
  std::set<std::string> out;
  for (const auto& [resource, ids] : held.device_ids) out.insert(resource);
  for (const DraDevice& device : held.dra_devices) {
    if (auto it = resource_of_pool.find(device.pool); it != resource_of_pool.end()) {
      out.insert(it->second);
    }
  }
  return {out.begin(), out.end()};
}

std::set<std::string> OurHcas::All() const {
  std::set<std::string> all;
  for (const auto& [resource, hcas] : by_resource) all.insert(hcas.begin(), hcas.end());
  for (const auto& [pool, devices] : by_dra_pool) {
    for (const auto& [device, hcas] : devices) all.insert(hcas.begin(), hcas.end());
  }
  return all;
}

namespace {

// Foreign by their QPs (the kernel's dumps, where read): a container owning QPs on our HCAs
// that is none of the holders, found with its cgroup's objects already or only here (its
// cgroup without the rdma controller); and the host's own processes' QPs.
void AddForeignQps(const QpOwners& qps, const std::set<std::string>& ours,
                   const std::set<std::string>& joined, const std::set<std::string>& held_pods,
                   const std::set<std::string>& withheld, bool unlinked_holders,
                   const std::map<std::string, const ContainerRdma*>& cgroups_by_id,
                   const std::map<std::string, const LinkedContainer*>& links_by_id,
                   UsageView& view) {
  for (const auto& [id, by_device] : qps.by_container) {
    if (joined.contains(id) || withheld.contains(id)) continue;
    std::map<std::string, int64_t> on_ours;
    for (const auto& [device, n] : by_device) {
      if (ours.contains(device) && n > 0) on_ours[device] = n;
    }
    if (on_ours.empty()) continue;
    const auto cg = cgroups_by_id.find(id);
    const auto link = links_by_id.find(id);
    ContainerCgroup cgroup;
    if (cg != cgroups_by_id.end()) {
      cgroup = cg->second->container;
    } else {
      cgroup.container_id = id;
      if (link != links_by_id.end()) cgroup.pod_uid = link->second->names.pod_uid;
    }
    if (!cgroup.pod_uid.empty() && held_pods.contains(cgroup.pod_uid)) continue;
    // Not a structured binding in the lambda: clang 14's front end (clang-tidy's) refuses it.
    const std::string& container_id = id;
    auto known = std::find_if(view.foreign.begin(), view.foreign.end(), [&](const ForeignUse& f) {
      return f.cgroup.container_id == container_id;
    });
    if (known != view.foreign.end()) {
      known->qps = std::move(on_ours);
      continue;
    }
    ForeignUse foreign{.cgroup = std::move(cgroup),
                       .names = std::nullopt,
                       .counts = {},
                       .qps = std::move(on_ours)};
    if (link != links_by_id.end()) foreign.names = link->second->names;
    if (!foreign.names && unlinked_holders) {
      ++view.foreign_withheld;
      continue;
    }
    view.foreign.push_back(std::move(foreign));
  }
  for (const auto& [device, n] : qps.outside_by_device) {
    if (ours.contains(device) && n > 0) view.host_qps[device] = n;
  }
}

}  // namespace

UsageView JoinUsage(const PodResourcesList& held, const LogLinkScan& links,
                    const CgroupScan& cgroups, const OurHcas& hcas,
                    std::chrono::system_clock::time_point now, const QpOwners* qps) {
  UsageView view;
  AddAll(view.problems, held.problems);
  AddAll(view.problems, links.problems);
  AddAll(view.problems, cgroups.problems);
  view.links_listed = links.listed;
  view.cgroups_listed = cgroups.listed;

  std::map<NameKey, std::vector<const LinkedContainer*>> links_by_name;
  std::map<std::string, const LinkedContainer*> links_by_id;
  for (const LinkedContainer& link : links.containers) {
    const ContainerNames& n = link.names;
    links_by_name[{n.pod_namespace, n.pod, n.container}].push_back(&link);
    links_by_id[n.container_id] = &link;
  }
  std::map<std::string, const ContainerRdma*> cgroups_by_id;
  for (const ContainerRdma& c : cgroups.containers) cgroups_by_id[c.container.container_id] = &c;

  std::set<std::string> joined;     // container IDs of containers holding our devices
  std::set<std::string> held_pods;  // and their pods' UIDs
  bool unlinked_holders = false;
  for (const ContainerAllocations& allocations : held.containers) {
    ContainerUse use;
    use.held = allocations;
    use.hcas = hcas.Of(allocations);
    auto found =
        links_by_name.find({allocations.pod_namespace, allocations.pod, allocations.container});
    const LinkedContainer* link =
        found == links_by_name.end() ? nullptr : PickLink(found->second, cgroups_by_id);
    if (link == nullptr) {
      use.missing = "no kubelet log link (not started yet, or /var/log/containers not mounted)";
      unlinked_holders = true;
      view.containers.push_back(std::move(use));
      continue;
    }
    use.names = link->names;
    use.started = link->started;
    use.sample.age = std::max(std::chrono::duration_cast<Clock::duration>(now - link->started),
                              Clock::duration::zero());
    const std::string& id = link->names.container_id;
    joined.insert(id);
    held_pods.insert(link->names.pod_uid);
    auto cg = cgroups_by_id.find(id);
    if (use.hcas.empty()) {
      use.missing = "its allocations give it no HCA of this node (a pool on another node?)";
    } else if (cg == cgroups_by_id.end()) {
      use.missing = Cat("no cgroup for container ", id.substr(0, 12), " (not running)");
    } else if (cg->second->container.pod_uid != link->names.pod_uid) {
      use.missing =
          Cat("container ", id.substr(0, 12), ": its cgroup's pod UID ",
              cg->second->container.pod_uid, " is not its log link's ", link->names.pod_uid);
    } else if (!cg->second->counts) {
      use.missing = cg->second->problem;
    } else {
      int64_t handles = 0;
      int64_t objects = 0;
      std::vector<std::string> unlisted;
      for (const std::string& hca : use.hcas) {
        auto counts = cg->second->counts->find(hca);
        if (counts == cg->second->counts->end()) {
          unlisted.push_back(hca);
          continue;
        }
        use.counts[hca] = counts->second;
        handles += counts->second.hca_handle;
        objects += counts->second.hca_object;
      }
      if (unlisted.empty()) {
        use.sample.hca_handles = handles;
        use.sample.hca_objects = objects;
      } else {  // half the HCAs read is no verdict: the unread ones may hold the QPs
        use.missing = "rdma.current does not list";
        for (const std::string& hca : unlisted) use.missing += " " + hca;
      }
    }
    if (qps != nullptr && !use.hcas.empty() && cg != cgroups_by_id.end() &&
        cg->second->container.pod_uid == link->names.pod_uid) {
      int64_t owned = 0;
      if (auto mine = qps->by_container.find(id); mine != qps->by_container.end()) {
        for (const std::string& hca : use.hcas) {
          if (auto n = mine->second.find(hca); n != mine->second.end()) owned += n->second;
        }
      }
      use.sample.qps = owned;
    }
    view.containers.push_back(std::move(use));
  }

  // Foreign: a container holding objects on our HCAs that is none of the holders. A pod
  // holding our devices is not foreign to itself (a sidecar); and while a holder has no
  // link, an unnamed container may be that holder: not said to be foreign.
  const std::set<std::string> ours = hcas.All();
  std::set<std::string> withheld;  // container IDs
  for (const ContainerRdma& c : cgroups.containers) {
    if (!c.counts || joined.contains(c.container.container_id) ||
        held_pods.contains(c.container.pod_uid)) {
      continue;
    }
    ForeignUse foreign{.cgroup = c.container, .names = std::nullopt, .counts = {}, .qps = {}};
    for (const auto& [hca, counts] : *c.counts) {
      if (ours.contains(hca) && (counts.hca_handle > 0 || counts.hca_object > 0)) {
        foreign.counts[hca] = counts;
      }
    }
    if (foreign.counts.empty()) continue;
    if (auto link = links_by_id.find(c.container.container_id); link != links_by_id.end()) {
      foreign.names = link->second->names;
    }
    if (!foreign.names && unlinked_holders) {
      ++view.foreign_withheld;
      withheld.insert(c.container.container_id);
      continue;
    }
    view.foreign.push_back(std::move(foreign));
  }
  if (qps != nullptr)
    AddForeignQps(*qps, ours, joined, held_pods, withheld, unlinked_holders, cgroups_by_id,
                  links_by_id, view);
  return view;
}

std::string UseKey(const ContainerUse& use) {
  if (use.names) return Cat(use.names->pod_uid, "/", use.held.container);
  return Cat(use.held.pod_namespace, "/", use.held.pod, "/", use.held.container);
}

}  // namespace rdmadp::usage
