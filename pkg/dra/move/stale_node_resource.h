// The extended resource a device plugin left in a node's status, and the JSON patch that
// removes it (docs/migrating.md, "Moving a pool to DRA without touching a pod"). When a
// device plugin goes away the kubelet sets its resource's allocatable to 0 at once, keeps
// its capacity for 5 minutes, then reports 0/0 for good (pkg/kubelet/cm/devicemanager
// manager.go GetCapacity and the node status setter). kube-scheduler 1.34 counts any such
// entry as "served by a device plugin" (fit.go fitsRequest; kubernetes#133784 changed it to
// "allocatable above 0" from 1.35), so a pool moved to DRA is never served there until the
// entry is gone.
//
// Pure: the caller reads the Node and sends the patch (the `remove-stale-resources`
// command).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace rdmadp::dra {

enum class NodeResourceState {
  kAbsent,    // not in the node's status: nothing to do
  kServed,    // allocatable above 0: a device plugin serves it on this node
  kDraining,  // allocatable 0, capacity above 0: its plugin left under 5 minutes ago; the
              // kubelet would write a removed entry back
  kStale,     // 0/0 (or allocatable 0 and no capacity): removable
};

struct NodeResource {
  std::string name;  // "rdma/hca_shared_devices_a"
  NodeResourceState state = NodeResourceState::kAbsent;
  std::string capacity;     // as the node shows it ("" when absent)
  std::string allocatable;  // as the node shows it ("" when absent)
};

// `name`'s state in `node` (a v1 Node as the API server returns it).
NodeResource ReadNodeResource(const nlohmann::json& node, const std::string& name);

// Whether a Kubernetes quantity ("0", "0k", "+0.0", "0e3") is zero; false for anything that
// is not a quantity.
bool IsZeroQuantity(std::string_view quantity);

// "rdma~1hca_shared_devices_a": `name` as one JSON-pointer token (RFC 6901: '~' is "~0",
// '/' is "~1").
std::string JsonPointerToken(std::string_view name);

// The RFC 6902 patch of the node's status removing every kStale resource of `resources`:
// for each, a `test` of the values it was read with, then the removal of each entry that
// exists. Applied atomically, the tests make it fail, removing nothing, when the kubelet
// changed the entries meanwhile (a device plugin came back). Empty when none is kStale.
nlohmann::json RemoveStalePatch(const std::vector<NodeResource>& resources);

// One line for `r`: what it is and what the command does about it.
std::string DescribeNodeResource(const NodeResource& r, std::string_view node);

}  // namespace rdmadp::dra
