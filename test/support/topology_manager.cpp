// The kubelet's Topology Manager merge and device manager choice, ported from Kubernetes 1.34
// (topology_manager.h). Each function's comment names the upstream file and function it
// mirrors; "topologymanager/" and "devicemanager/" are pkg/kubelet/cm/'s.
#include "test/support/topology_manager.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <ostream>
#include <string>
#include <utility>

namespace rdmadp::testing::topology {
namespace {

constexpr int kMaskBits = 64;
// devicemanager/manager.go nodeWithoutTopology: the NUMA node of devices without one.
constexpr int kNodeWithoutTopology = -1;

bool TmBitInRange(int bit) { return bit >= 0 && bit < kMaskBits; }

BitMask TmBit(int bit) { return BitMask{1} << static_cast<unsigned>(bit); }

// bitmask.go NewBitMask with its error dropped, as its callers in policy.go, numa_info.go and
// IterateBitMasks do; a bit out of range is left out (upstream would hold a nil mask).
BitMask TmMaskOf(const std::vector<int>& bits) {
  BitMask mask = 0;
  for (int bit : bits) {
    if (TmBitInRange(bit)) mask |= TmBit(bit);
  }
  return mask;
}

// A merged hint's affinity is never nil upstream; a nil one counts as no node here.
int TmAffinityCount(const TopologyHint& hint) { return Count(hint.numa_affinity.value_or(0)); }

DeviceIds TmDifference(const DeviceIds& a, const DeviceIds& b) {
  DeviceIds out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

DeviceIds TmUnion(const DeviceIds& a, const DeviceIds& b) {
  DeviceIds out = a;
  out.insert(b.begin(), b.end());
  return out;
}

DeviceIds TmIntersection(const DeviceIds& a, const DeviceIds& b) {
  DeviceIds out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

// bitmask.go IterateBitMasks' inner iterate: `accum` extended by the bits from `from` on,
// each set of `size` bits passed to `callback`.
void TmIterateSubsets(const std::vector<int>& bits, size_t from, size_t size,
                      std::vector<int>& accum, const std::function<void(BitMask)>& callback) {
  if (accum.size() == size) {
    callback(TmMaskOf(accum));
    return;
  }
  for (size_t i = from; i < bits.size(); ++i) {
    accum.push_back(bits[i]);
    TmIterateSubsets(bits, i + 1, size, accum, callback);
    accum.pop_back();
  }
}

// topologymanager/numa_info.go NUMADistances indexing, d[from][to].
uint64_t TmDistance(const NumaDistances& distances, int from, int to) {
  const auto row = distances.find(from);
  if (row == distances.end() || to < 0 || static_cast<size_t>(to) >= row->second.size()) return 0;
  return row->second[static_cast<size_t>(to)];
}

// topologymanager/policy.go mergePermutation: the AND of the permutation's affinities (a nil
// one is any node), preferred only when every hint is preferred and all non-nil affinities
// are equal.
TopologyHint TmMergePermutation(BitMask default_affinity,
                                const std::vector<TopologyHint>& permutation) {
  bool preferred = true;
  std::vector<BitMask> affinities;
  for (const TopologyHint& hint : permutation) {
    if (hint.numa_affinity) {
      affinities.push_back(*hint.numa_affinity);
      if (*hint.numa_affinity != affinities.front()) preferred = false;
    }
    if (!hint.preferred) preferred = false;
  }
  return TopologyHint{And(default_affinity, affinities), preferred};
}

// topologymanager/policy.go iterateAllProviderTopologyHints: every choice of one hint from
// each list, the lists' order kept.
void TmIteratePermutations(const HintLists& lists, size_t index, std::vector<TopologyHint>& accum,
                           const std::function<void(const std::vector<TopologyHint>&)>& callback) {
  if (index == lists.size()) {
    callback(accum);
    return;
  }
  for (const TopologyHint& hint : lists[index]) {
    accum.push_back(hint);
    TmIteratePermutations(lists, index + 1, accum, callback);
    accum.pop_back();
  }
}

// topologymanager/policy.go narrowestHint: the narrowest non-nil affinity of a list, if any.
const TopologyHint* TmNarrowestHint(const std::vector<TopologyHint>& hints) {
  const TopologyHint* narrowest = nullptr;
  for (const TopologyHint& hint : hints) {
    if (!hint.numa_affinity) continue;
    if (narrowest == nullptr || IsNarrowerThan(*hint.numa_affinity, *narrowest->numa_affinity)) {
      narrowest = &hint;
    }
  }
  return narrowest;
}

// topologymanager/policy.go NewHintMerger's compareNumaAffinityMasks: the current hint when
// the masks are equal, else the closer (prefer-closest-numa-nodes, never for
// single-numa-node) or the narrower one.
const TopologyHint* TmCompareNumaAffinityMasks(const HintMerger& merger,
                                               const TopologyHint* current,
                                               const TopologyHint* candidate) {
  const BitMask current_mask = current->numa_affinity.value_or(0);
  const BitMask candidate_mask = candidate->numa_affinity.value_or(0);
  if (candidate_mask == current_mask) return current;
  const bool closest = merger.policy != Policy::kSingleNumaNode && merger.opts.prefer_closest_numa;
  const BitMask best = closest ? Closest(merger.numa.distances, current_mask, candidate_mask)
                               : Narrowest(current_mask, candidate_mask);
  return best == current_mask ? current : candidate;
}

// topologymanager/policy.go HintMerger.compare, when neither hint is preferred: keep as close
// as possible to (but not above) bestNonPreferredAffinityCount, upstream's cases 1 to 3cc.
const TopologyHint* TmCompareNonPreferred(const HintMerger& merger, const TopologyHint* current,
                                          const TopologyHint* candidate) {
  const int best = merger.best_non_preferred_affinity_count;
  const int current_count = TmAffinityCount(*current);
  const int candidate_count = TmAffinityCount(*candidate);
  if (current_count > best) return TmCompareNumaAffinityMasks(merger, current, candidate);
  if (current_count == best) {
    if (candidate_count != best) return current;
    return TmCompareNumaAffinityMasks(merger, current, candidate);
  }
  if (candidate_count > best) return current;
  if (candidate_count == best) return candidate;
  if (candidate_count > current_count) return candidate;
  if (candidate_count < current_count) return current;
  return TmCompareNumaAffinityMasks(merger, current, candidate);
}

const Device* TmFindDevice(const Devices& all, const std::string& id) {
  const auto it = all.find(id);
  return it == all.end() ? nullptr : &it->second;
}

// devicemanager/topology_hints.go getNUMANodeIds: none for a nil Topology (also an unknown
// device: Go reads the zero Device).
std::vector<int> TmNumaNodeIds(const Device* device) {
  if (device == nullptr || !device->numa_nodes) return {};
  return *device->numa_nodes;
}

// devicemanager/topology_hints.go generateDeviceTopologyHints, first step: how many of all
// the resource's devices (healthy or not) the mask reaches.
int TmDevicesInMask(const Devices& all, BitMask mask) {
  int count = 0;
  for (const auto& entry : all) {
    if (AnySet(mask, TmNumaNodeIds(&entry.second))) ++count;
  }
  return count;
}

// devicemanager/topology_hints.go generateDeviceTopologyHints, then: the reusable devices (a
// reusable device with a Topology outside the mask disregards the mask: nullopt) and the
// available ones the mask reaches.
std::optional<int> TmMatchingDevices(const Devices& all, BitMask mask, const DeviceIds& available,
                                     const DeviceIds& reusable) {
  int matching = 0;
  for (const std::string& id : reusable) {
    const Device* device = TmFindDevice(all, id);
    if (device == nullptr || !device->numa_nodes) continue;
    if (!AnySet(mask, *device->numa_nodes)) return std::nullopt;
    ++matching;
  }
  for (const std::string& id : available) {
    if (AnySet(mask, TmNumaNodeIds(TmFindDevice(all, id)))) ++matching;
  }
  return matching;
}

DeviceIds TmLookup(const std::map<std::string, DeviceIds>& by_resource,
                   const std::string& resource) {
  const auto it = by_resource.find(resource);
  return it == by_resource.end() ? DeviceIds{} : it->second;
}

// devicemanager/topology_hints.go GetTopologyHints, the loop's body for one device-plugin
// resource the container asks `requested` of.
std::optional<std::vector<TopologyHint>> TmResourceHints(const std::vector<int>& numa_nodes,
                                                         const ResourceState& state,
                                                         const DeviceIds& allocated,
                                                         const DeviceIds& reusable, int requested) {
  // No device with a NUMA node: no preference.
  if (!DeviceHasTopologyAlignment(state.devices)) return std::nullopt;
  // Already allocated to the container (a kubelet restart): the same hints again, or none
  // possible when the request changed.
  if (!allocated.empty()) {
    if (static_cast<int>(allocated.size()) != requested) return std::vector<TopologyHint>{};
    return GenerateDeviceTopologyHints(numa_nodes, state.devices, allocated, DeviceIds{},
                                       requested);
  }
  const DeviceIds available = TmDifference(state.healthy, state.in_use);
  if (static_cast<int>(TmUnion(available, reusable).size()) < requested) {
    return std::vector<TopologyHint>{};
  }
  return GenerateDeviceTopologyHints(numa_nodes, state.devices, available, reusable, requested);
}

// devicemanager/manager.go filterByAffinity's map of NUMA node -> its available devices, a
// device without a NUMA node on kNodeWithoutTopology.
std::map<int, DeviceIds> TmDevicesPerNode(const Devices& all, const DeviceIds& available) {
  std::map<int, DeviceIds> per_node;
  for (const std::string& id : available) {
    const Device* device = TmFindDevice(all, id);
    if (device == nullptr || !device->numa_nodes || device->numa_nodes->empty()) {
      per_node[kNodeWithoutTopology].insert(id);
      continue;
    }
    for (int node : *device->numa_nodes) per_node[node].insert(id);
  }
  return per_node;
}

// devicemanager/manager.go filterByAffinity's sort: the affinity's nodes, then the others,
// then kNodeWithoutTopology; by device count (fewest first) within each. Upstream's sort is
// unstable over a map's keys; here ties keep ascending node IDs.
std::vector<int> TmSortedNodes(const std::map<int, DeviceIds>& per_node, BitMask affinity) {
  std::vector<int> nodes;
  for (const auto& entry : per_node) nodes.push_back(entry.first);
  const auto rank = [&per_node, affinity](int node) {
    const int group = IsSet(affinity, node) ? 0 : (node == kNodeWithoutTopology ? 2 : 1);
    return std::make_pair(group, per_node.at(node).size());
  };
  std::stable_sort(nodes.begin(), nodes.end(), [&rank](int a, int b) { return rank(a) < rank(b); });
  return nodes;
}

// devicemanager/manager.go devicesToAllocate's allocateRemainingFrom and the state it
// updates: the devices taken, the resource's devices in use (m.allocatedDevices) and how many
// are still needed.
class TmAllocation {
 public:
  TmAllocation(int still_needed, DeviceIds resource_in_use)
      : needed_(still_needed), in_use_(std::move(resource_in_use)) {}

  // Takes devices of `devices` not taken yet (in ID order) until none is needed: true then.
  bool TakeFrom(const DeviceIds& devices) {
    for (const std::string& id : TmDifference(devices, taken_)) {
      in_use_.insert(id);
      taken_.insert(id);
      if (--needed_ == 0) return true;
    }
    return false;
  }
  int needed() const { return needed_; }
  const DeviceIds& taken() const { return taken_; }
  const DeviceIds& in_use() const { return in_use_; }

 private:
  int needed_;
  DeviceIds in_use_;
  DeviceIds taken_;
};

// devicemanager/manager.go devicesToAllocate, its checks before any choice: what the container
// already holds, the resource's registration and health. The number still needed. (The skip
// for a container found running while the kubelet's sources are not all ready is not ported:
// it reads the runtime's state.)
absl::StatusOr<int> TmNeededAfterChecks(const AllocationRequest& req) {
  int needed = req.required;
  if (req.container_devices) {
    const int held = static_cast<int>(req.container_devices->size());
    needed -= held;
    if (needed != 0) {
      return absl::FailedPreconditionError("container changed request for resource \"" +
                                           req.resource + "\" from " + std::to_string(held) +
                                           " to " + std::to_string(req.required));
    }
  }
  if (!req.healthy) {
    return absl::FailedPreconditionError("cannot allocate unregistered device " + req.resource);
  }
  if (req.healthy->empty()) {
    return absl::FailedPreconditionError(
        "no healthy devices present; cannot allocate unhealthy devices " + req.resource);
  }
  if (req.container_devices &&
      !std::includes(req.healthy->begin(), req.healthy->end(), req.container_devices->begin(),
                     req.container_devices->end())) {
    return absl::FailedPreconditionError(
        "previously allocated devices are no longer healthy; cannot allocate unhealthy "
        "devices " +
        req.resource);
  }
  return needed;
}

// devicemanager/manager.go callGetPreferredAllocationIfAvailable: the plugin's choice, none
// when it does not offer GetPreferredAllocation. (Its error for a resource without an
// endpoint is not ported: a request here always has its plugin.)
absl::StatusOr<DeviceIds> TmCallPreferred(const AllocationRequest& req, const DeviceIds& available,
                                          const DeviceIds& must_include) {
  if (!req.preferred) return DeviceIds{};
  const absl::StatusOr<std::vector<std::string>> ids =
      req.preferred(available, must_include, req.required);
  if (!ids.ok()) {
    return absl::Status(ids.status().code(),
                        "device plugin GetPreferredAllocation rpc failed with err: " +
                            std::string(ids.status().message()));
  }
  return DeviceIds(ids->begin(), ids->end());
}

absl::Status TmShortfall(const AllocationRequest& req, const TmAllocation& allocation) {
  return absl::InternalError("unexpectedly allocated less resources than required. Requested: " +
                             std::to_string(req.required) +
                             ", Got: " + std::to_string(req.required - allocation.needed()));
}

// devicemanager/manager.go devicesToAllocate when the aligned devices are more than needed:
// the plugin chooses among them (and what is taken already), then any aligned ones.
absl::StatusOr<DeviceIds> TmAllocateAligned(const AllocationRequest& req, const DeviceIds& aligned,
                                            TmAllocation& allocation) {
  const absl::StatusOr<DeviceIds> preferred =
      TmCallPreferred(req, TmUnion(aligned, allocation.taken()), allocation.taken());
  if (!preferred.ok()) return preferred.status();
  if (allocation.TakeFrom(TmIntersection(*preferred, aligned)) || allocation.TakeFrom(aligned)) {
    return allocation.taken();
  }
  return TmShortfall(req, allocation);
}

// devicemanager/manager.go devicesToAllocate otherwise: every aligned device first (the
// alignment the Topology Manager promised), then the plugin's choice among the available,
// then unaligned devices, then those without a NUMA node.
absl::StatusOr<DeviceIds> TmAllocateBeyondAligned(const AllocationRequest& req,
                                                  const DeviceIds& available,
                                                  const AffinityFiltered& filtered,
                                                  TmAllocation& allocation) {
  if (allocation.TakeFrom(filtered.aligned)) return allocation.taken();
  const absl::StatusOr<DeviceIds> preferred =
      TmCallPreferred(req, TmUnion(available, allocation.taken()), allocation.taken());
  if (!preferred.ok()) return preferred.status();
  if (allocation.TakeFrom(TmIntersection(*preferred, available)) ||
      allocation.TakeFrom(filtered.unaligned) || allocation.TakeFrom(filtered.no_affinity)) {
    return allocation.taken();
  }
  return TmShortfall(req, allocation);
}

}  // namespace

// topologymanager/bitmask/bitmask.go NewBitMask.
absl::StatusOr<BitMask> NewBitMask(const std::vector<int>& bits) { return AddBits(0, bits); }

// topologymanager/bitmask/bitmask.go bitMask.Add: the mask is written only when every bit is
// in range.
absl::StatusOr<BitMask> AddBits(BitMask mask, const std::vector<int>& bits) {
  for (int bit : bits) {
    if (!TmBitInRange(bit)) return absl::InvalidArgumentError("bit number must be in range 0-63");
    mask |= TmBit(bit);
  }
  return mask;
}

// topologymanager/bitmask/bitmask.go And (the package function).
BitMask And(BitMask first, const std::vector<BitMask>& masks) {
  for (BitMask mask : masks) first &= mask;
  return first;
}

// topologymanager/bitmask/bitmask.go bitMask.Count.
int Count(BitMask mask) { return std::popcount(mask); }

// topologymanager/bitmask/bitmask.go bitMask.IsSet: a bit out of range is never set.
bool IsSet(BitMask mask, int bit) { return TmBitInRange(bit) && (mask & TmBit(bit)) != 0; }

// topologymanager/bitmask/bitmask.go bitMask.AnySet.
bool AnySet(BitMask mask, const std::vector<int>& bits) {
  return std::any_of(bits.begin(), bits.end(), [mask](int bit) { return IsSet(mask, bit); });
}

// topologymanager/bitmask/bitmask.go bitMask.IsNarrowerThan: fewer bits, or as many and the
// lower-numbered ones.
bool IsNarrowerThan(BitMask mask, BitMask other) {
  if (Count(mask) == Count(other)) return IsLessThan(mask, other);
  return Count(mask) < Count(other);
}

// topologymanager/bitmask/bitmask.go bitMask.IsLessThan.
bool IsLessThan(BitMask mask, BitMask other) { return mask < other; }

// topologymanager/bitmask/bitmask.go bitMask.GetBits: ascending.
std::vector<int> GetBits(BitMask mask) {
  std::vector<int> bits;
  for (int bit = 0; bit < kMaskBits; ++bit) {
    if (IsSet(mask, bit)) bits.push_back(bit);
  }
  return bits;
}

// topologymanager/bitmask/bitmask.go IterateBitMasks.
void IterateBitMasks(const std::vector<int>& bits, const std::function<void(BitMask)>& callback) {
  std::vector<int> accum;
  for (size_t size = 1; size <= bits.size(); ++size) {
    TmIterateSubsets(bits, 0, size, accum, callback);
  }
}

// topologymanager/topology_manager.go TopologyHint.LessThan.
bool LessThan(const TopologyHint& hint, const TopologyHint& other) {
  if (hint.preferred != other.preferred) return hint.preferred;
  return IsNarrowerThan(hint.numa_affinity.value_or(0), other.numa_affinity.value_or(0));
}

void PrintTo(const TopologyHint& hint, std::ostream* os) {
  *os << "{nodes ";
  if (!hint.numa_affinity) {
    *os << "nil";
  } else {
    *os << "[";
    const char* separator = "";
    for (int bit : GetBits(*hint.numa_affinity)) {
      *os << separator << bit;
      separator = " ";
    }
    *os << "]";
  }
  *os << (hint.preferred ? ", preferred}" : ", not preferred}");
}

// topologymanager/numa_info.go NUMAInfo.DefaultAffinityMask: every NUMA node.
BitMask DefaultAffinityMask(const NumaInfo& numa) { return TmMaskOf(numa.nodes); }

// topologymanager/numa_info.go NUMADistances.CalculateAverageFor: the mean distance over every
// ordered pair of the mask's nodes (a node with itself included), 0 for an empty mask.
double CalculateAverageFor(const NumaDistances& distances, BitMask mask) {
  if (Count(mask) == 0) return 0;
  double count = 0;
  double sum = 0;
  const std::vector<int> bits = GetBits(mask);
  for (int from : bits) {
    for (int to : bits) {
      sum += static_cast<double>(TmDistance(distances, from, to));
      ++count;
    }
  }
  return sum / count;
}

// topologymanager/numa_info.go NUMAInfo.Narrowest.
BitMask Narrowest(BitMask m1, BitMask m2) { return IsNarrowerThan(m1, m2) ? m1 : m2; }

// topologymanager/numa_info.go NUMAInfo.Closest: the narrower of masks of different sizes;
// else the shorter average distance, the lower-numbered bits on a tie.
BitMask Closest(const NumaDistances& distances, BitMask m1, BitMask m2) {
  if (Count(m1) != Count(m2)) return Narrowest(m1, m2);
  const double m1_distance = CalculateAverageFor(distances, m1);
  const double m2_distance = CalculateAverageFor(distances, m2);
  if (m1_distance == m2_distance) return IsLessThan(m1, m2) ? m1 : m2;
  return m1_distance < m2_distance ? m1 : m2;
}

// topologymanager/policy_none.go, policy_best_effort.go, policy_restricted.go,
// policy_single_numa_node.go: each policy's Name.
std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kNone:
      return "none";
    case Policy::kBestEffort:
      return "best-effort";
    case Policy::kRestricted:
      return "restricted";
    case Policy::kSingleNumaNode:
      return "single-numa-node";
  }
  return "";
}

// topologymanager/topology_manager.go NewManager: a policy other than none refuses a machine
// with more NUMA nodes than max-allowable-numa-nodes (the enumeration of their combinations
// explodes).
absl::Status CheckNumaNodeCount(Policy policy, const NumaInfo& numa, const PolicyOptions& opts) {
  if (policy != Policy::kNone &&
      static_cast<int>(numa.nodes.size()) > opts.max_allowable_numa_nodes) {
    return absl::InvalidArgumentError("unsupported on machines with more than " +
                                      std::to_string(opts.max_allowable_numa_nodes) +
                                      " NUMA Nodes");
  }
  return absl::OkStatus();
}

// topologymanager/policy_*.go canAdmitPodResult: none and best-effort admit every pod;
// restricted and single-numa-node only with a preferred hint.
bool CanAdmitPodResult(Policy policy, const TopologyHint& hint) {
  switch (policy) {
    case Policy::kNone:
    case Policy::kBestEffort:
      return true;
    case Policy::kRestricted:
    case Policy::kSingleNumaNode:
      return hint.preferred;
  }
  return true;
}

// topologymanager/policy.go filterProvidersHints: one list per resource of each provider; a
// provider without hints, or a resource with a nil list, has no preference ({nil,
// preferred}); a resource with an empty list cannot be satisfied ({nil, not preferred}).
HintLists FilterProvidersHints(const std::vector<ProviderHints>& providers) {
  HintLists all;
  for (const ProviderHints& hints : providers) {
    if (hints.empty()) {
      all.push_back({TopologyHint{std::nullopt, true}});
      continue;
    }
    for (const auto& entry : hints) {
      if (!entry.second) {
        all.push_back({TopologyHint{std::nullopt, true}});
      } else if (entry.second->empty()) {
        all.push_back({TopologyHint{std::nullopt, false}});
      } else {
        all.push_back(*entry.second);
      }
    }
  }
  return all;
}

// topologymanager/policy_single_numa_node.go filterSingleNumaHints: of each list, the
// preferred hints that are nil or name exactly one NUMA node.
HintLists FilterSingleNumaHints(const HintLists& hints) {
  HintLists filtered;
  for (const std::vector<TopologyHint>& resource_hints : hints) {
    std::vector<TopologyHint> kept;
    for (const TopologyHint& hint : resource_hints) {
      if (!hint.numa_affinity && hint.preferred) kept.push_back(hint);
      if (hint.numa_affinity && Count(*hint.numa_affinity) == 1 && hint.preferred) {
        kept.push_back(hint);
      }
    }
    filtered.push_back(std::move(kept));
  }
  return filtered;
}

// topologymanager/policy.go maxOfMinAffinityCounts: the largest, over the lists, of the node
// count of the list's narrowest hint.
int MaxOfMinAffinityCounts(const HintLists& hints) {
  int max_of_min = 0;
  for (const std::vector<TopologyHint>& resource_hints : hints) {
    const TopologyHint* narrowest = TmNarrowestHint(resource_hints);
    if (narrowest != nullptr) max_of_min = std::max(max_of_min, TmAffinityCount(*narrowest));
  }
  return max_of_min;
}

// topologymanager/policy.go NewHintMerger.
HintMerger NewHintMerger(const NumaInfo& numa, const HintLists& hints, Policy policy,
                         const PolicyOptions& opts) {
  return HintMerger{numa, hints, MaxOfMinAffinityCounts(hints), policy, opts};
}

// topologymanager/policy.go HintMerger.compare: an empty candidate never wins; a preferred
// hint beats a non-preferred one; two preferred ones compare by mask; two non-preferred ones
// by TmCompareNonPreferred.
const TopologyHint* Compare(const HintMerger& merger, const TopologyHint* current,
                            const TopologyHint* candidate) {
  if (TmAffinityCount(*candidate) == 0) return current;
  if (current == nullptr) return candidate;
  if (!current->preferred && candidate->preferred) return candidate;
  if (current->preferred && !candidate->preferred) return current;
  if (current->preferred && candidate->preferred) {
    return TmCompareNumaAffinityMasks(merger, current, candidate);
  }
  return TmCompareNonPreferred(merger, current, candidate);
}

// topologymanager/policy.go HintMerger.Merge: the best merged permutation, or every NUMA
// node, not preferred, when none has a node.
TopologyHint MergeHints(const HintMerger& merger) {
  const BitMask default_affinity = DefaultAffinityMask(merger.numa);
  std::optional<TopologyHint> best;
  std::vector<TopologyHint> accum;
  TmIteratePermutations(merger.hints, 0, accum,
                        [&merger, &best, default_affinity](const std::vector<TopologyHint>& perm) {
                          const TopologyHint merged = TmMergePermutation(default_affinity, perm);
                          const TopologyHint* current = best ? &*best : nullptr;
                          if (Compare(merger, current, &merged) == &merged) best = merged;
                        });
  return best.value_or(TopologyHint{default_affinity, false});
}

// topologymanager/policy_none.go, policy_best_effort.go, policy_restricted.go and
// policy_single_numa_node.go Merge. none: an empty hint, admitted. single-numa-node merges
// only its filtered hints and reports a result of every node as nil.
std::pair<TopologyHint, bool> Merge(Policy policy, const NumaInfo& numa,
                                    const std::vector<ProviderHints>& providers,
                                    const PolicyOptions& opts) {
  if (policy == Policy::kNone) return {TopologyHint{}, CanAdmitPodResult(policy, TopologyHint{})};
  HintLists filtered = FilterProvidersHints(providers);
  if (policy == Policy::kSingleNumaNode) filtered = FilterSingleNumaHints(filtered);
  TopologyHint best = MergeHints(NewHintMerger(numa, filtered, policy, opts));
  if (policy == Policy::kSingleNumaNode && best.numa_affinity == DefaultAffinityMask(numa)) {
    best = TopologyHint{std::nullopt, best.preferred};
  }
  return {best, CanAdmitPodResult(policy, best)};
}

// devicemanager/topology_hints.go deviceHasTopologyAlignment: some device has a NUMA node.
bool DeviceHasTopologyAlignment(const Devices& devices) {
  return std::any_of(devices.begin(), devices.end(), [](const auto& entry) {
    return entry.second.numa_nodes && !entry.second.numa_nodes->empty();
  });
}

// devicemanager/topology_hints.go generateDeviceTopologyHints: a hint for each NUMA node
// combination whose available and reusable devices meet the request; preferred are those as
// narrow as the narrowest combination holding `request` of all the resource's devices.
std::vector<TopologyHint> GenerateDeviceTopologyHints(const std::vector<int>& numa_nodes,
                                                      const Devices& all,
                                                      const DeviceIds& available,
                                                      const DeviceIds& reusable, int request) {
  int min_affinity_size = static_cast<int>(numa_nodes.size());
  std::vector<TopologyHint> hints;
  IterateBitMasks(numa_nodes, [&](BitMask mask) {
    if (TmDevicesInMask(all, mask) >= request && Count(mask) < min_affinity_size) {
      min_affinity_size = Count(mask);
    }
    const std::optional<int> matching = TmMatchingDevices(all, mask, available, reusable);
    if (!matching || *matching < request) return;
    hints.push_back(TopologyHint{mask, false});
  });
  for (TopologyHint& hint : hints) {
    if (TmAffinityCount(hint) == min_affinity_size) hint.preferred = true;
  }
  return hints;
}

// devicemanager/topology_hints.go GetTopologyHints: for each of the container's limits that is
// a device-plugin resource. (The garbage collection of terminated pods' devices it starts
// with, UpdateAllocatedDevices, is the caller's: `resources` is the state after it.)
ProviderHints GetTopologyHints(const std::vector<int>& numa_nodes,
                               const std::map<std::string, ResourceState>& resources,
                               const ContainerState& container) {
  ProviderHints hints;
  for (const auto& limit : container.limits) {
    const auto state = resources.find(limit.first);
    if (state == resources.end()) continue;  // isDevicePluginResource
    hints[limit.first] =
        TmResourceHints(numa_nodes, state->second, TmLookup(container.allocated, limit.first),
                        TmLookup(container.reusable, limit.first), limit.second);
  }
  return hints;
}

// devicemanager/manager.go filterByAffinity: without alignment (no device with a NUMA node,
// or a nil affinity) every device is no_affinity; else each device goes by the first of its
// NUMA nodes in TmSortedNodes' order.
AffinityFiltered FilterByAffinity(const Devices& all, const DeviceIds& available,
                                  const TopologyHint& affinity) {
  AffinityFiltered filtered;
  if (!DeviceHasTopologyAlignment(all) || !affinity.numa_affinity) {
    filtered.no_affinity = available;
    return filtered;
  }
  const BitMask mask = *affinity.numa_affinity;
  const std::map<int, DeviceIds> per_node = TmDevicesPerNode(all, available);
  const std::vector<int> nodes = TmSortedNodes(per_node, mask);
  for (const std::string& id : available) {
    for (int node : nodes) {
      if (!per_node.at(node).contains(id)) continue;
      if (node == kNodeWithoutTopology) {
        filtered.no_affinity.insert(id);
      } else if (IsSet(mask, node)) {
        filtered.aligned.insert(id);
      } else {
        filtered.unaligned.insert(id);
      }
      break;
    }
  }
  return filtered;
}

// devicemanager/manager.go devicesToAllocate: after its checks, the reusable devices (an init
// container's), then the available ones, aligned to the Topology Manager's hint first.
absl::StatusOr<DeviceIds> DevicesToAllocate(const AllocationRequest& request) {
  const absl::StatusOr<int> needed = TmNeededAfterChecks(request);
  if (!needed.ok()) return needed.status();
  if (*needed == 0) return DeviceIds{};
  TmAllocation allocation(*needed, request.in_use);
  if (allocation.TakeFrom(request.reusable)) return allocation.taken();
  const DeviceIds available = TmDifference(*request.healthy, allocation.in_use());
  if (static_cast<int>(available.size()) < allocation.needed()) {
    return absl::ResourceExhaustedError("requested number of devices unavailable for " +
                                        request.resource +
                                        ". Requested: " + std::to_string(allocation.needed()) +
                                        ", Available: " + std::to_string(available.size()));
  }
  const AffinityFiltered filtered = FilterByAffinity(request.devices, available, request.affinity);
  if (allocation.needed() < static_cast<int>(filtered.aligned.size())) {
    return TmAllocateAligned(request, filtered.aligned, allocation);
  }
  return TmAllocateBeyondAligned(request, available, filtered, allocation);
}

}  // namespace rdmadp::testing::topology
