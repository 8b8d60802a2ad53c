#include "pkg/pool/snapshot.h"

#include <algorithm>

#include "pkg/pool/pod_env.h"
#include "pkg/text/cat.h"

namespace rdmadp::pool {
namespace {

void AddDevice(v1beta1::ListAndWatchResponse& out, std::string id, bool healthy,
               const std::vector<int64_t>& numa_nodes) {
  v1beta1::Device* d = out.add_devices();
  d->set_id(std::move(id));
  d->set_health(std::string(healthy ? kHealthy : kUnhealthy));
  if (!numa_nodes.empty()) {
    auto* topology = d->mutable_topology();
    for (int64_t node : numa_nodes) topology->add_nodes()->set_id(node);
  }
}

void FillSlots(v1beta1::ListAndWatchResponse& out, int64_t slots, bool healthy,
               const std::vector<int64_t>& numa_nodes) {
  out.mutable_devices()->Reserve(static_cast<int>(slots));
  for (int64_t i = 0; i < slots; ++i) AddDevice(out, Cat(i), healthy, numa_nodes);
}

// perHca: every HCA's `shares` devices, each with its HCA's health and NUMA node.
void FillPerHca(v1beta1::ListAndWatchResponse& out, const PoolModel& model, int64_t shares,
                bool topology) {
  out.mutable_devices()->Reserve(static_cast<int>(shares * std::ssize(model.hcas)));
  for (const auto& hca : model.hcas) {
    std::vector<int64_t> numa;
    if (topology && hca.function.numa_node >= 0) numa.push_back(hca.function.numa_node);
    for (int64_t i = 0; i < shares; ++i) {
      AddDevice(out, PerHcaDeviceId(hca.function.address, i), hca.healthy, numa);
    }
  }
}

// What a container is given for `model`'s HCAs (the pool's, or those of its IDs): their char
// devices (or CDI names) and rdma_cm, and the variables pod_env.h makes of them.
void FillAnswer(const PoolModel& model, const std::optional<CdiNaming>& cdi,
                v1beta1::ContainerAllocateResponse& out, std::string* info_left_out,
                std::map<std::string, std::string>* allocate_only_env,
                std::vector<std::string>* roce_not_set) {
  if (cdi) {
    std::string joined;
    for (const auto& hca : model.hcas) {
      const std::string name = Cat(cdi->kind, "=", hca.function.address);
      out.add_cdi_devices()->set_name(name);
      Append(joined, joined.empty() ? "" : ",", name);
    }
    // Runtimes without the DevicePluginCDIDevices gate read the annotation instead.
    if (!joined.empty()) (*out.mutable_annotations())[cdi->annotation_key] = joined;
  } else {
    auto add = [&](const std::string& path) {
      v1beta1::DeviceSpec* spec = out.add_devices();
      spec->set_container_path(path);
      spec->set_host_path(path);
      spec->set_permissions("rwm");
    };
    for (const auto& hca : model.hcas) {
      for (const auto& name : hca.function.char_devices) add(Cat(kCharDevDir, name));
    }
    // rdma_cm is node-wide: listed once, not once per HCA as the Go plugin does.
    if (!model.hcas.empty()) add(Cat(kCharDevDir, "rdma_cm"));
  }
  // Which HCAs these are, for the container (pod_env.h).
  for (auto& [name, value] : PodEnv(model, info_left_out)) {
    (*out.mutable_envs())[name] = std::move(value);
  }
  const config::ResourceConfig& resource = model.resource;
  if (resource.frontend == config::Frontend::kDevicePlugin && !model.hcas.empty()) {
    std::vector<sysfs::PciFunction> functions;
    for (const auto& hca : model.hcas) functions.push_back(hca.function);
    std::map<std::string, std::string> roce = RoceEnv(functions, resource, roce_not_set);
    for (const auto& [name, value] : roce) (*out.mutable_envs())[name] = value;
    if (allocate_only_env != nullptr) *allocate_only_env = std::move(roce);
  }
}

}  // namespace

std::shared_ptr<const PoolSnapshot> PoolSnapshot::Build(
    const config::ResourceConfig& resource, const sysfs::NodeInventory& inventory,
    const CdiNaming* cdi, const std::shared_ptr<const PoolSnapshot>& previous, bool topology) {
  PoolModel model = SelectPool(resource, inventory);
  const std::optional<CdiNaming> naming = cdi != nullptr ? std::optional(*cdi) : std::nullopt;
  if (previous && previous->model_ == model && previous->cdi_ == naming) return previous;
  std::shared_ptr<PoolSnapshot> snap(new PoolSnapshot());
  snap->model_ = std::move(model);
  snap->cdi_ = naming;
  const PoolModel& m = snap->model_;
  Advertised& adv = snap->advertised_;
  for (const auto& hca : m.hcas) {
    adv.hca_addresses.push_back(hca.function.address);
    for (const auto& name : hca.function.char_devices) {
      adv.device_paths.push_back(Cat(kCharDevDir, name));
    }
  }
  if (!m.hcas.empty()) adv.device_paths.push_back(Cat(kCharDevDir, "rdma_cm"));
  adv.healthy = m.healthy();
  if (topology) adv.numa_nodes = m.NumaNodes();
  adv.per_hca = resource.PerHcaDevices();

  FillAnswer(m, naming, snap->container_response_, &snap->info_left_out_, &snap->allocate_only_env_,
             &snap->roce_not_set_);
  snap->container_response_bytes_ = snap->container_response_.ByteSizeLong();

  v1beta1::ListAndWatchResponse list;
  if (!adv.per_hca) {
    if (!m.hcas.empty()) adv.slots = resource.rdma_hca_max;
    adv.healthy_slots = adv.healthy ? adv.slots : 0;
    FillSlots(list, adv.slots, adv.healthy, adv.numa_nodes);
    if (list.ByteSizeLong() > kKubeletMaxMessageBytes) {
      // Only reachable with many NUMA nodes near the rdmaHcaMax bound: losing alignment
      // hints beats a message the kubelet refuses.
      list.Clear();
      FillSlots(list, adv.slots, adv.healthy, {});
      snap->topology_dropped_ = true;
    }
  } else {
    // HCAs x shares devices could outgrow the kubelet's message: fewer shares of each, said,
    // decided before anything is built (a list of millions of devices is never made), and
    // the NUMA nodes kept, which are what this model is for. A device takes at most what one
    // with the longest ID, "Unhealthy" and the largest node takes in a list.
    int64_t shares = resource.rdma_hca_max;
    if (shares > 0 && !m.hcas.empty()) {
      v1beta1::ListAndWatchResponse one;
      std::string longest;
      int64_t node = 0;  // the largest NUMA node: the longest varint
      for (const auto& hca : m.hcas) {
        std::string id = PerHcaDeviceId(hca.function.address, shares - 1);
        if (id.size() > longest.size()) longest = std::move(id);
        node = std::max<int64_t>(node, hca.function.numa_node);
      }
      AddDevice(one, longest, false,
                topology ? std::vector<int64_t>{node} : std::vector<int64_t>{});
      const auto per_device = static_cast<int64_t>(one.ByteSizeLong());
      const auto fit = static_cast<int64_t>(kKubeletMaxMessageBytes) / per_device /
                       static_cast<int64_t>(m.hcas.size());
      shares = std::min(shares, fit);
    }
    FillPerHca(list, m, shares, topology);
    if (shares < resource.rdma_hca_max) {
      snap->shares_cut_ =
          Cat(resource.FullName(), ": advertising ", shares, " of the ", resource.rdma_hca_max,
              " shares of each of its ", m.hcas.size(),
              " HCAs: more would make the device list larger than the kubelet's ",
              kKubeletMaxMessageBytes, "-byte message limit (lower rdmaHcaMax, or split the pool)");
    }
    adv.shares_per_hca = shares;
    adv.slots = shares * std::ssize(m.hcas);
    for (const auto& hca : m.hcas) {
      adv.hca_healthy.push_back(hca.healthy);
      adv.hca_numa_nodes.push_back(topology ? hca.function.numa_node : -1);
      if (hca.healthy) adv.healthy_slots += shares;
    }
    snap->ids_ = PerHcaIds(m.hcas, shares);
  }
  list.SerializeToString(&snap->list_response_bytes_);
  return snap;
}

bool PoolSnapshot::HasDeviceId(std::string_view id) const {
  return advertised_.per_hca ? ids_.HcaOf(id).has_value() : IsSlotId(id, advertised_.slots);
}

v1beta1::ContainerAllocateResponse PoolSnapshot::ContainerResponseFor(
    const std::vector<size_t>& hcas) const {
  PoolModel chosen;
  chosen.resource = model_.resource;
  for (size_t i : hcas) chosen.hcas.push_back(model_.hcas.at(i));
  v1beta1::ContainerAllocateResponse out;
  FillAnswer(chosen, cdi_, out, nullptr, nullptr, nullptr);
  return out;
}

std::vector<std::string> PoolSnapshot::DeviceIds() const {
  std::vector<std::string> out;
  const v1beta1::ListAndWatchResponse list = ListResponse();
  for (const auto& d : list.devices()) out.push_back(d.id());
  return out;
}

std::shared_ptr<const PoolSnapshot> PoolSnapshot::AllUnhealthy(
    const std::shared_ptr<const PoolSnapshot>& snapshot) {
  if (!snapshot->advertised_.healthy) return snapshot;
  std::shared_ptr<PoolSnapshot> copy(new PoolSnapshot(*snapshot));
  copy->advertised_.healthy = false;
  copy->advertised_.healthy_slots = 0;
  copy->advertised_.hca_healthy.assign(copy->advertised_.hca_healthy.size(), false);
  v1beta1::ListAndWatchResponse list = snapshot->ListResponse();
  for (auto& device : *list.mutable_devices()) device.set_health(std::string(kUnhealthy));
  list.SerializeToString(&copy->list_response_bytes_);
  return copy;
}

v1beta1::ListAndWatchResponse PoolSnapshot::ListResponse() const {
  v1beta1::ListAndWatchResponse list;
  list.ParseFromString(list_response_bytes_);
  return list;
}

}  // namespace rdmadp::pool
