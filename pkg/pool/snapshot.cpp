#include "pkg/pool/snapshot.h"

#include <algorithm>

#include "pkg/pool/pod_env.h"
#include "pkg/text/cat.h"

namespace rdmadp::pool {
namespace {

void FillDevices(v1beta1::ListAndWatchResponse& out, int64_t slots, bool healthy,
                 const std::vector<int64_t>& numa_nodes) {
  out.mutable_devices()->Reserve(static_cast<int>(slots));
  for (int64_t i = 0; i < slots; ++i) {
    v1beta1::Device* d = out.add_devices();
    d->set_id(Cat(i));
    d->set_health(std::string(healthy ? kHealthy : kUnhealthy));
    if (!numa_nodes.empty()) {
      auto* topology = d->mutable_topology();
      for (int64_t node : numa_nodes) topology->add_nodes()->set_id(node);
    }
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
  for (const auto& hca : snap->model_.hcas) {
    snap->advertised_.hca_addresses.push_back(hca.function.address);
    for (const auto& name : hca.function.char_devices) {
      snap->advertised_.device_paths.push_back(Cat(kCharDevDir, name));
    }
  }
  if (!snap->model_.hcas.empty()) {
    // rdma_cm is node-wide: listed once, not once per HCA as the Go plugin does.
    snap->advertised_.device_paths.push_back(Cat(kCharDevDir, "rdma_cm"));
    snap->advertised_.slots = resource.rdma_hca_max;
  }
  const bool healthy = snap->model_.healthy();
  snap->advertised_.healthy = healthy;
  if (topology) snap->advertised_.numa_nodes = snap->model_.NumaNodes();

  if (cdi != nullptr) {
    std::string joined;
    for (const auto& hca : snap->model_.hcas) {
      const std::string name = Cat(cdi->kind, "=", hca.function.address);
      snap->container_response_.add_cdi_devices()->set_name(name);
      Append(joined, joined.empty() ? "" : ",", name);
    }
    // Runtimes without the DevicePluginCDIDevices gate read the annotation instead.
    if (!joined.empty())
      (*snap->container_response_.mutable_annotations())[cdi->annotation_key] = joined;
  } else {
    for (const auto& path : snap->advertised_.device_paths) {
      v1beta1::DeviceSpec* spec = snap->container_response_.add_devices();
      spec->set_container_path(path);
      spec->set_host_path(path);
      spec->set_permissions("rwm");
    }
  }
  // Which HCAs these are, for the container (pod_env.h): the pool as it is now.
  for (auto& [name, value] : PodEnv(snap->model_, &snap->info_left_out_)) {
    (*snap->container_response_.mutable_envs())[name] = std::move(value);
  }
  if (resource.frontend == config::Frontend::kDevicePlugin && !snap->model_.hcas.empty()) {
    std::vector<sysfs::PciFunction> functions;
    for (const auto& hca : snap->model_.hcas) functions.push_back(hca.function);
    snap->allocate_only_env_ = RoceEnv(functions, resource, &snap->roce_not_set_);
    for (const auto& [name, value] : snap->allocate_only_env_) {
      (*snap->container_response_.mutable_envs())[name] = value;
    }
  }
  snap->container_response_bytes_ = snap->container_response_.ByteSizeLong();
  v1beta1::ListAndWatchResponse list;
  FillDevices(list, snap->advertised_.slots, healthy, snap->advertised_.numa_nodes);
  if (list.ByteSizeLong() > kKubeletMaxMessageBytes) {
    // Only reachable with many NUMA nodes near the rdmaHcaMax bound: losing alignment
    // hints beats a message the kubelet refuses.
    list.Clear();
    FillDevices(list, snap->advertised_.slots, healthy, {});
    snap->topology_dropped_ = true;
  }
  list.SerializeToString(&snap->list_response_bytes_);
  return snap;
}

bool PoolSnapshot::HasDeviceId(std::string_view id) const {
  return IsSlotId(id, advertised_.slots);
}

std::shared_ptr<const PoolSnapshot> PoolSnapshot::AllUnhealthy(
    const std::shared_ptr<const PoolSnapshot>& snapshot) {
  if (!snapshot->advertised_.healthy) return snapshot;
  std::shared_ptr<PoolSnapshot> copy(new PoolSnapshot(*snapshot));
  copy->advertised_.healthy = false;
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
