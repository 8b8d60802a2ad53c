// The kubelet's choice of a container's device-plugin devices under the Topology Manager,
// ported for tests from Kubernetes 1.34's pkg/kubelet/cm: topologymanager's bitmask/bitmask.go,
// numa_info.go, policy.go, policy_*.go, policy_options.go, topology_manager.go; devicemanager's
// topology_hints.go, manager.go. Text read: kubernetes/kubernetes' from before 1.35's
// contextual logging (which added a logger argument, no rule); no copy tagged 1.34 could be
// pinned. Each function keeps every rule of the upstream one its comment in the .cpp names.
//
// Pure (no I/O, clock or global state), so thread-compatible. Go's nil is std::nullopt where
// upstream tells nil from empty (a hint's affinity, a hint list, a device's Topology); a
// provider's nil and empty maps merge alike (len() == 0): an empty ProviderHints is both. Go
// walks maps and sets in random order, this port sorted (resource names, device IDs, NUMA
// nodes): where upstream may take any of equal candidates, this takes the first.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rdmadp::testing::topology {

// Bit i is NUMA node i (0-63). Go's And, IsEqual and IsEmpty are &, == and == 0 here.
using BitMask = uint64_t;
absl::StatusOr<BitMask> NewBitMask(const std::vector<int>& bits);
// `mask` with all of `bits`, or an error (and no bit added) when one is outside 0-63.
absl::StatusOr<BitMask> AddBits(BitMask mask, const std::vector<int>& bits);
BitMask And(BitMask first, const std::vector<BitMask>& masks);
int Count(BitMask mask);
bool IsSet(BitMask mask, int bit);
bool AnySet(BitMask mask, const std::vector<int>& bits);
bool IsNarrowerThan(BitMask mask, BitMask other);
bool IsLessThan(BitMask mask, BitMask other);
std::vector<int> GetBits(BitMask mask);
// Every non-empty subset of `bits` (each 0-63): by size, then in the order of `bits`.
void IterateBitMasks(const std::vector<int>& bits, const std::function<void(BitMask)>& callback);

struct TopologyHint {
  std::optional<BitMask> numa_affinity;  // nullopt: Go's nil, no NUMA preference
  bool preferred = false;
  bool operator==(const TopologyHint& other) const = default;  // TopologyHint.IsEqual
};
// Preferred first, then the narrower affinity (a nil one counts as no node).
bool LessThan(const TopologyHint& hint, const TopologyHint& other);
void PrintTo(const TopologyHint& hint, std::ostream* os);  // for GoogleTest's messages

// NUMA node -> its distance to each node; a missing distance counts 0 (upstream panics).
using NumaDistances = std::map<int, std::vector<uint64_t>>;
struct NumaInfo {
  std::vector<int> nodes;
  NumaDistances distances;  // read only with prefer_closest_numa
};
BitMask DefaultAffinityMask(const NumaInfo& numa);
double CalculateAverageFor(const NumaDistances& distances, BitMask mask);
BitMask Narrowest(BitMask m1, BitMask m2);
BitMask Closest(const NumaDistances& distances, BitMask m1, BitMask m2);

enum class Policy { kNone, kBestEffort, kRestricted, kSingleNumaNode };
std::string_view PolicyName(Policy policy);
// Options as parsed (their names, values and feature gates are not ported).
struct PolicyOptions {
  bool prefer_closest_numa = false;
  int max_allowable_numa_nodes = 8;  // defaultMaxAllowableNUMANodes
};
// NewManager's refusal of a machine with more NUMA nodes than the options allow.
absl::Status CheckNumaNodeCount(Policy policy, const NumaInfo& numa, const PolicyOptions& opts);

// One provider's hints by resource: nullopt is a nil list (no preference), an empty list a
// resource no NUMA node combination satisfies.
using ProviderHints = std::map<std::string, std::optional<std::vector<TopologyHint>>>;
using HintLists = std::vector<std::vector<TopologyHint>>;

// The policy's merge of every provider's hints: the best hint, and whether it admits the pod.
std::pair<TopologyHint, bool> Merge(Policy policy, const NumaInfo& numa,
                                    const std::vector<ProviderHints>& providers,
                                    const PolicyOptions& opts = {});
bool CanAdmitPodResult(Policy policy, const TopologyHint& hint);

// The steps of Merge, for upstream's own tests of each.
HintLists FilterProvidersHints(const std::vector<ProviderHints>& providers);
HintLists FilterSingleNumaHints(const HintLists& hints);
int MaxOfMinAffinityCounts(const HintLists& hints);
struct HintMerger {
  NumaInfo numa;
  HintLists hints;
  int best_non_preferred_affinity_count = 0;
  Policy policy = Policy::kBestEffort;
  PolicyOptions opts;
};
HintMerger NewHintMerger(const NumaInfo& numa, const HintLists& hints, Policy policy,
                         const PolicyOptions& opts);
// `current` (may be null) or `candidate`, whichever the merge keeps: never a copy.
const TopologyHint* Compare(const HintMerger& merger, const TopologyHint* current,
                            const TopologyHint* candidate);
TopologyHint MergeHints(const HintMerger& merger);

// A device's Topology: nullopt is nil, an empty list a Topology without NUMA nodes.
struct Device {
  std::optional<std::vector<int>> numa_nodes;
};
using Devices = std::map<std::string, Device>;  // by device ID
using DeviceIds = std::set<std::string>;
bool DeviceHasTopologyAlignment(const Devices& devices);
std::vector<TopologyHint> GenerateDeviceTopologyHints(const std::vector<int>& numa_nodes,
                                                      const Devices& all,
                                                      const DeviceIds& available,
                                                      const DeviceIds& reusable, int request);

// A resource as the device manager holds it; having an entry makes it a device-plugin one.
struct ResourceState {
  Devices devices;    // all the plugin listed, healthy or not
  DeviceIds healthy;  // healthyDevices
  DeviceIds in_use;   // allocatedDevices: given to any container
};
// The container asking: its limits (of any resource) and what is already held for it.
struct ContainerState {
  std::map<std::string, int> limits;
  std::map<std::string, DeviceIds> allocated;  // podDevices.containerDevices, by resource
  std::map<std::string, DeviceIds> reusable;   // devicesToReuse of its pod, by resource
};
// The device manager's hints for the container's device-plugin resources.
ProviderHints GetTopologyHints(const std::vector<int>& numa_nodes,
                               const std::map<std::string, ResourceState>& resources,
                               const ContainerState& container);

// aligned: on a NUMA node of the affinity; unaligned: on others only; no_affinity: without a
// NUMA node, or every device when alignment does not apply.
struct AffinityFiltered {
  DeviceIds aligned, unaligned, no_affinity;
};
AffinityFiltered FilterByAffinity(const Devices& all, const DeviceIds& available,
                                  const TopologyHint& affinity);

// The plugin's GetPreferredAllocation: the device IDs of its first container response.
using PreferredAllocation = std::function<absl::StatusOr<std::vector<std::string>>(
    const DeviceIds& available, const DeviceIds& must_include, int size)>;
struct AllocationRequest {
  std::string resource;  // for the messages
  int required = 0;
  Devices devices;
  std::optional<DeviceIds> healthy;            // nullopt: never registered
  DeviceIds in_use;                            // allocatedDevices of the resource
  std::optional<DeviceIds> container_devices;  // held by the container already; nullopt: none
  DeviceIds reusable;
  TopologyHint affinity;          // the Topology Manager's hint for the container
  PreferredAllocation preferred;  // empty: the plugin does not offer GetPreferredAllocation
};
// The devices to Allocate (empty: nothing to do), for the caller to add to those in use.
absl::StatusOr<DeviceIds> DevicesToAllocate(const AllocationRequest& request);

}  // namespace rdmadp::testing::topology
