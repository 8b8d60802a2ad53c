// Which device-plugin devices the kubelet gives a container under the Topology Manager, for
// tests: the hint merge of each policy and the device manager's hints and device choice,
// ported from the kubelet of Kubernetes 1.34 (pkg/kubelet/cm/topologymanager: bitmask/
// bitmask.go, numa_info.go, policy.go, policy_none.go, policy_best_effort.go,
// policy_restricted.go, policy_single_numa_node.go, policy_options.go, topology_manager.go;
// pkg/kubelet/cm/devicemanager: topology_hints.go, manager.go). Each function keeps every rule
// of the upstream function its comment in topology_manager.cpp names; what is left out is
// said where it would be.
//
// Pure: functions of their arguments only (no I/O, clock or global state), so
// thread-compatible. Go's nil is std::nullopt where upstream tells nil from empty (a hint's
// affinity, a resource's hint list, a device's Topology); a provider's nil map and empty map
// merge alike (upstream tests len() == 0), so an empty ProviderHints stands for both. Go walks
// maps and sets in random order; here they are walked sorted (resource names, device IDs,
// NUMA node IDs), so where upstream may take any of equal candidates this takes the first.
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
// `current` (which may be null) or `candidate`, whichever the merge keeps: never a copy.
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

struct AffinityFiltered {
  DeviceIds aligned;      // on a NUMA node of the affinity
  DeviceIds unaligned;    // on other NUMA nodes only
  DeviceIds no_affinity;  // without a NUMA node, or all when alignment does not apply
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
// The devices to ask the plugin to Allocate (empty: nothing to do); the caller adds them to
// the resource's devices in use.
absl::StatusOr<DeviceIds> DevicesToAllocate(const AllocationRequest& request);

}  // namespace rdmadp::testing::topology
