// One resource's pool at one moment, rendered for the kubelet's device-plugin API: the pool
// model (pool_model.h) and everything derived from it (advertised device list, health, NUMA
// topology, Allocate content), in the entry's deviceModel: slots (rdmaHcaMax IDs "0".."N-1",
// each the whole pool, as the Go plugin) or perHca (per_hca.h: each HCA its own IDs). Immutable
// once built; shared between the event loop and gRPC threads as std::shared_ptr<const
// PoolSnapshot>.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/deviceplugin.pb.h"
#include "pkg/config/config.h"
#include "pkg/pool/per_hca.h"
#include "pkg/pool/pool_model.h"
#include "pkg/sysfs/inventory.h"

namespace rdmadp::pool {

inline constexpr std::string_view kHealthy = "Healthy";
inline constexpr std::string_view kUnhealthy = "Unhealthy";
inline constexpr std::string_view kCharDevDir = "/dev/infiniband/";
// The kubelet's default gRPC receive limit for one ListAndWatch message.
inline constexpr size_t kKubeletMaxMessageBytes = size_t{4} * 1024 * 1024;

// What the kubelet and containers can observe of a pool; a rescan that leaves this equal
// pushes nothing.
struct Advertised {
  std::vector<std::string> hca_addresses;
  std::vector<std::string> device_paths;
  std::vector<int64_t> numa_nodes;  // slots: every slot's; perHca: the pool's, for the log
  int64_t slots = 0;                // devices in the list: slots, or HCAs x shares_per_hca
  bool healthy = false;             // some device Healthy
  int64_t healthy_slots = 0;        // devices Healthy
  // perHca (per_hca.h): the shares advertised per HCA (rdmaHcaMax unless the list had to be
  // cut to the kubelet's message limit), each HCA's health and the NUMA node its devices
  // carry (-1: none).
  bool per_hca = false;
  int64_t shares_per_hca = 0;
  std::vector<bool> hca_healthy;
  std::vector<int64_t> hca_numa_nodes;
  bool operator==(const Advertised&) const = default;
};

// CDI mode: Allocate answers with CDI device names (`<kind>=<PCI address>`) in both the
// cdi_devices field and the annotation, instead of DeviceSpecs.
struct CdiNaming {
  std::string kind;            // rdma/hca_a
  std::string annotation_key;  // cdi.k8s.io/rdmadp_hca_a
  bool operator==(const CdiNaming&) const = default;
};

class PoolSnapshot {
 public:
  // Selects the RDMA-capable functions of `inventory` that match `resource`. With `cdi`,
  // Allocate content is CDI names; without, DeviceSpecs. When `previous` was built from the
  // same resource, naming and HCAs, it is returned as is: an unchanged rescan builds no
  // messages. Without `topology`, slots carry no NUMA nodes (as the Go plugin's).
  static std::shared_ptr<const PoolSnapshot> Build(
      const config::ResourceConfig& resource, const sysfs::NodeInventory& inventory,
      const CdiNaming* cdi = nullptr, const std::shared_ptr<const PoolSnapshot>& previous = nullptr,
      bool topology = true);

  // A copy of `snapshot` whose slots are all Unhealthy, for a pool that must not be
  // allocated from (its CDI spec could not be written): the kubelet admits no pod to it.
  static std::shared_ptr<const PoolSnapshot> AllUnhealthy(
      const std::shared_ptr<const PoolSnapshot>& snapshot);

  const config::ResourceConfig& resource() const { return model_.resource; }
  const PoolModel& model() const { return model_; }
  const std::vector<PoolHca>& hcas() const { return model_.hcas; }
  const Advertised& advertised() const { return advertised_; }
  // The full ListAndWatch message, built and serialized once per snapshot and kept only
  // serialized: as a parsed message each slot costs ~300 bytes of heap in small objects
  // (1,000 slots: ~0.3 MiB), serialized ~25 bytes. Streams send these bytes as they are.
  const std::string& list_response_bytes() const { return list_response_bytes_; }
  // The same message parsed again (tests, tools; not on a serving path).
  v1beta1::ListAndWatchResponse ListResponse() const;
  // The per-container Allocate answer of the slots model: every char device of every pool
  // HCA. (perHca: the same for the whole pool; Allocate uses ContainerResponseFor.)
  const v1beta1::ContainerAllocateResponse& container_response() const {
    return container_response_;
  }
  // Its serialized size, computed once: Allocate checks answers against the kubelet's limit.
  size_t container_response_bytes() const { return container_response_bytes_; }
  bool per_hca() const { return advertised_.per_hca; }
  // Whether `id` is one of the advertised IDs: "0".."slots-1", or perHca's
  // "<address>-<share>" (per_hca.h).
  bool HasDeviceId(std::string_view id) const;
  // perHca: the HCA (index in hcas()) an advertised ID names.
  std::optional<size_t> HcaOfDeviceId(std::string_view id) const { return ids_.HcaOf(id); }
  const PerHcaIds& per_hca_ids() const { return ids_; }
  // perHca: the answer for a container given the devices of `hcas` (indices in hcas(),
  // ascending, no repeats): their char devices or CDI names, and PCIDEVICE_*, _INFO, hints
  // and RoCE variables of those HCAs only.
  v1beta1::ContainerAllocateResponse ContainerResponseFor(const std::vector<size_t>& hcas) const;
  // Every advertised ID, in list order (tests, discover).
  std::vector<std::string> DeviceIds() const;
  // perHca: why fewer than rdmaHcaMax shares per HCA are advertised, one line naming the
  // resource ("" when all are): the list would exceed the kubelet's message limit.
  const std::string& shares_cut() const { return shares_cut_; }
  // Set when topology had to be dropped to stay under the kubelet's message limit.
  bool topology_dropped() const { return topology_dropped_; }
  // Why the Allocate answer has no PCIDEVICE_<RESOURCE>_INFO, in one line naming the pool
  // ("" when it has one, or the pool is empty): the pool's JSON is over pool::kMaxInfoBytes
  // (pod_env.h). The front end logs it once, when it starts to apply.
  const std::string& info_left_out() const { return info_left_out_; }
  // The variables of the Allocate answer that a CDI spec must not carry (pool/pod_env.h
  // RoceEnv): the kubelet puts a device plugin's variables before the pod's own and the
  // runtime keeps the last of a name, so the pod's value wins; a CDI edit replaces it.
  const std::map<std::string, std::string>& allocate_only_env() const { return allocate_only_env_; }
  // Why a RoCE variable the entry asks for is not in the answer, one line each.
  const std::vector<std::string>& roce_not_set() const { return roce_not_set_; }

 private:
  PoolSnapshot() = default;

  PoolModel model_;
  Advertised advertised_;
  std::string list_response_bytes_;
  v1beta1::ContainerAllocateResponse container_response_;
  size_t container_response_bytes_ = 0;
  bool topology_dropped_ = false;
  std::string info_left_out_;
  std::map<std::string, std::string> allocate_only_env_;
  std::vector<std::string> roce_not_set_;
  std::optional<CdiNaming> cdi_;
  PerHcaIds ids_{{}, 0};
  std::string shares_cut_;
};

using SnapshotPtr = std::shared_ptr<const PoolSnapshot>;

}  // namespace rdmadp::pool
