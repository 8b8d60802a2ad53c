#include "test/support/kubelet_admission.h"

#include "pkg/text/cat.h"

namespace rdmadp::testing {

std::map<std::string, topology::ResourceState> KubeletAdmission::Resources(
    const SimState& state) const {
  std::map<std::string, topology::ResourceState> out;
  for (const auto& [name, res] : state.resources) {
    if (res.snapshots.empty()) continue;
    topology::ResourceState& r = out[name];
    for (const auto& d : res.snapshots.back().devices()) {
      topology::Device device;
      if (d.has_topology()) {  // the kubelet keeps the plugin's Topology as sent
        device.numa_nodes.emplace();
        for (const auto& node : d.topology().nodes()) {
          device.numa_nodes->push_back(static_cast<int>(node.id()));
        }
      }
      r.devices[d.id()] = device;
      if (d.health() == "Healthy") r.healthy.insert(d.id());
    }
    if (auto it = in_use_.find(name); it != in_use_.end()) r.in_use = it->second;
  }
  for (const auto& [name, devices] : static_) {
    topology::ResourceState& r = out[name];
    r.devices = devices;
    for (const auto& [id, d] : devices) r.healthy.insert(id);
    if (auto it = in_use_.find(name); it != in_use_.end()) r.in_use = it->second;
  }
  return out;
}

absl::StatusOr<AdmittedContainer> KubeletAdmission::Admit(
    const std::map<std::string, int>& limits) {
  const SimState state = kubelet_.State();
  const auto resources = Resources(state);
  topology::ContainerState container;
  container.limits = limits;
  // Hint providers in the kubelet's order: CPU manager, memory manager (policy none: no
  // hints), device manager.
  const std::vector<topology::ProviderHints> providers = {
      {}, {}, topology::GetTopologyHints(numa_nodes_, resources, container)};
  const auto [hint, admit] = topology::Merge(policy_, {numa_nodes_, {}}, providers);
  AdmittedContainer out;
  out.hint = hint;
  if (!admit) {
    out.reason = "TopologyAffinityError";
    return out;
  }
  std::map<std::string, topology::DeviceIds> chosen;
  for (const auto& [name, count] : limits) {
    auto it = resources.find(name);
    if (it == resources.end()) continue;  // not a device-plugin resource
    topology::AllocationRequest request;
    request.resource = name;
    request.required = count;
    request.devices = it->second.devices;
    request.healthy = it->second.healthy;
    request.in_use = it->second.in_use;
    request.affinity = hint;
    auto sim = state.resources.find(name);
    if (sim != state.resources.end() && sim->second.has_options &&
        sim->second.options.get_preferred_allocation_available()) {
      const std::string resource = name;  // not the structured binding: clang-tidy 14
      request.preferred = [this, resource, &out](
                              const topology::DeviceIds& available,
                              const topology::DeviceIds& must_include,
                              int size) -> absl::StatusOr<std::vector<std::string>> {
        ++out.preferred_calls;
        auto r = kubelet_.GetPreferredAllocation(resource, {available.begin(), available.end()},
                                                 {must_include.begin(), must_include.end()}, size);
        if (!r.ok()) return r.status();
        if (r->container_responses_size() == 0) return std::vector<std::string>{};
        const auto& ids = r->container_responses(0).deviceids();
        return std::vector<std::string>(ids.begin(), ids.end());
      };
    }
    auto devices = topology::DevicesToAllocate(request);
    if (!devices.ok()) return devices.status();
    chosen[name] = *devices;
  }
  for (const auto& [name, ids] : chosen) {
    out.devices[name] = {ids.begin(), ids.end()};
    in_use_[name].insert(ids.begin(), ids.end());
    if (static_.count(name) != 0) continue;
    auto answer = kubelet_.Allocate(name, out.devices[name]);
    if (!answer.ok()) return answer.status();
    out.answers[name] = answer->container_responses(0);
  }
  out.admitted = true;
  return out;
}

}  // namespace rdmadp::testing
