// The DRA rendering of a pool model: the resource.k8s.io/v1 ResourceSlice objects that
// publish one resource's HCAs for one node. Pure: values in, JSON objects out; the API
// client (to come) writes them. Within the API server's limits by construction: at most
// 64 devices per slice, 32 attributes and capacities per device, 64-character strings,
// DNS-label device names and a DNS-subdomain pool name.
//
// Device models (config `deviceModel`):
//  - perHca: one device per HCA, shared through consumable capacity (KEP-5075):
//    allowMultipleAllocations and a capacity `shares` of rdmaHcaMax, one share per claim
//    by default. The scheduler enforces the count; no virtual IDs.
//  - perPool: one shared device for the whole pool, the drop-in for pods that ask for the
//    extended resource (KEP-5004): a claim gets every HCA, as the device plugin's slot does.
//  - slots: rdmaHcaMax plain devices ("slot-0", ...), for clusters without consumable
//    capacity (1.34, 1.35), capped at kMaxSlotDevices.
// Port state is never an attribute (a flap would rewrite the slice): an HCA without an
// ACTIVE port carries a NoSchedule taint instead.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/config/k8s_names.h"
#include "pkg/pool/pool_model.h"

namespace rdmadp::dra {

// kube-apiserver allows 128 devices in a slice, but only 64 when any device in it has
// taints (ResourceSliceMaxDevicesWithTaintsOrConsumesCounters, checked by
// validateResourceSliceSpec in pkg/apis/resource/validation/validation.go, 1.35+). Any HCA
// can be tainted at any time (port down), so a pool is always cut at 64: a port going down
// then changes one device, never the slice count, and is never answered 422.
inline constexpr size_t kMaxDevicesPerSlice = 64;
inline constexpr size_t kMaxAttributesAndCapacities = 32;
inline constexpr size_t kMaxAttributeStringLength = 64;
inline constexpr int64_t kMaxSlotDevices = config::kMaxDraSlotDevices;
inline constexpr std::string_view kDefaultDriverName = "rdma.k8s-rdma-shared-dp.io";

using config::DeviceModel;

struct SliceContext {
  std::string driver{kDefaultDriverName};
  std::string node_name;
  int64_t generation = 1;                    // the pool's; bumped by the publisher on every change
  DeviceModel model = DeviceModel::kPerHca;  // RenderResourceSlices: never kAuto
  // Whether the API server keeps consumable capacity (DRAConsumableCapacity: on by default
  // from 1.36), as the publisher's probe found; nullopt while not known yet. BuildDraView
  // resolves each pool's model from it: "auto" is perHca where it is kept and slots where
  // not (left out while unknown); an explicit perHca or perPool where it is not kept falls
  // back to slots, since the server would drop allowMultipleAllocations and every device
  // would serve one claim: rdmaHcaMax shares would silently become one per HCA.
  std::optional<bool> consumable_capacity = true;
  // HCAs (PCI addresses) whose per-HCA CDI spec could not be written: tainted
  // <driver>/cdi-spec-unwritable, not <driver>/port-down (a taint key per cause).
  std::set<std::string> cdi_unwritable;
  // Where the memlock hook is installed on the host ("" = not installed): the per-HCA CDI
  // specs of an entry with `memlock` carry it (BuildDraView; cdi/cdi_spec.h MemlockHookJson).
  std::string memlock_hook{};
};

// The taint keys, one per cause of an unhealthy HCA.
std::string PortDownTaintKey(std::string_view driver);
std::string CdiUnwritableTaintKey(std::string_view driver);

// The model `configured` is published in on a server that does (not) keep consumable
// capacity (nullopt: not known); nullopt for "auto" while not known.
std::optional<DeviceModel> ResolveModel(DeviceModel configured,
                                        std::optional<bool> consumable_capacity);

using config::DnsLabel;  // pool and device names (pkg/config/k8s_names.h)
// The pool name of a resource on a node: "<node>/<resource name as a DNS label>".
std::string PoolName(const SliceContext& ctx, const config::ResourceConfig& resource);
// A DNS label for a PCI address: "0000:3b:00.1" -> "hca-0000-3b-00-1".
std::string HcaDeviceName(std::string_view pci_address);

// The consumable capacity `shares` of a device shared by `shares` claims: one share per
// claim by default, whole shares only; valid on every release (a one-share device too).
nlohmann::json SharesCapacity(int64_t shares);

// The slices of `pool` (none for an empty pool: the publisher deletes the resource's
// slices). Every slice names the pool and how many slices it has.
std::vector<nlohmann::json> RenderResourceSlices(const pool::PoolModel& pool,
                                                 const SliceContext& ctx);

}  // namespace rdmadp::dra
