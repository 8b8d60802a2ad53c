// One resource's pool at one moment, rendered for the kubelet's device-plugin API: the pool
// model (pool_model.h) and everything derived from it (advertised device list, health, NUMA
// topology, Allocate content). Immutable once built; shared between the event loop and gRPC
// threads as std::shared_ptr<const PoolSnapshot>.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pkg/api/deviceplugin.pb.h"
#include "pkg/config/config.h"
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
  std::vector<int64_t> numa_nodes;
  int64_t slots = 0;
  bool healthy = false;
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
  // The per-container Allocate answer: every char device of every pool HCA.
  const v1beta1::ContainerAllocateResponse& container_response() const {
    return container_response_;
  }
  // Its serialized size, computed once: Allocate checks answers against the kubelet's limit.
  size_t container_response_bytes() const { return container_response_bytes_; }
  // Whether `id` is one of the advertised IDs "0".."slots-1".
  bool HasDeviceId(std::string_view id) const;
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
};

using SnapshotPtr = std::shared_ptr<const PoolSnapshot>;

}  // namespace rdmadp::pool
