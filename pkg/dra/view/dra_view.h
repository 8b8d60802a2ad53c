// Everything the DRA front end serves, derived from the pool models in one pure step and
// then shared read-only: the slices to publish, the devices Prepare may hand out with
// their CDI device IDs, their health for the kubelet's health stream, and one CDI spec per
// HCA (written before any slice names the HCA, so a Prepare never returns an ID that no
// spec resolves).
//
// One HCA is published once: an HCA selected by two DRA resources belongs to the first
// (config order); the later one leaves it out, and `problems` says so.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/dra/slices/resource_slices.h"
#include "pkg/dra/slices/slice_reconciler.h"
#include "pkg/pool/pool_model.h"

namespace rdmadp::dra {

struct DraDevice {
  std::string pool;
  std::string name;
  std::vector<std::string> cdi_ids;  // "<driver>/hca=<hca device name>", one per HCA
  bool healthy = true;
  std::string health_message;  // why not, "" when healthy
  // What a container given this device is told (claim_metadata.h): its HCAs (shared by the
  // pool's devices: a slots pool has up to 1024), its published attributes, and the env
  // hints its entry asks for.
  using Functions = std::shared_ptr<const std::vector<sysfs::PciFunction>>;
  Functions functions = std::make_shared<const std::vector<sysfs::PciFunction>>();
  nlohmann::json attributes = nlohmann::json::object();
  std::vector<config::EnvHint> hints;
  // The entry's full resource name ("rdma/hca_shared_devices_a"): a claim the scheduler made
  // for that extended resource (KEP-5004) names its env after it, as the device plugin does.
  std::string resource;
  bool pci_device_env = true;  // the entry's `pciDeviceEnv`: PCIDEVICE_* and _INFO
};

struct HcaSpec {
  std::string file_name;  // "k8s-rdma-shared-dp_dra_<hca device name>.json"
  std::string json;
};

// A pool published in another model than its config says, because the API server cannot
// honour that one (ResolveModel).
struct ModelFallback {
  std::string resource;  // "rdma/hca_shared_devices_a"
  DeviceModel configured;
  DeviceModel published;
  bool operator==(const ModelFallback&) const = default;
};

// What a claim may name in a pool whatever model published it: a claim allocated from
// slices of another model (before a restart, or an upgrade that changed what the API server
// keeps) or one Prepare sees before the first capability probe has answered (an "auto" pool
// is then not published yet). The names say which HCAs: "pool" and "slot-N" every HCA of
// the pool, "hca-<address>" its own. Not published, so without attributes.
struct PoolAliases {
  DraDevice whole;                           // "pool", and "slot-N" for N < slots
  std::map<std::string, DraDevice> per_hca;  // by HcaDeviceName
  int64_t slots = 0;                         // min(rdmaHcaMax, kMaxSlotDevices)
};

struct DraView {
  std::string driver;
  std::vector<ModelFallback> fallbacks;
  std::vector<WantedPool> pools;
  std::map<std::pair<std::string, std::string>, DraDevice> devices;  // by (pool, device)
  std::map<std::string, PoolAliases> aliases;                        // by pool name
  std::vector<HcaSpec> cdi_specs;
  std::vector<std::string> problems;
};
using DraViewPtr = std::shared_ptr<const DraView>;

// `pools`: the DRA resources' pools, in config order. `ctx`: driver and node (model and
// generation are per pool / set by the publisher).
DraView BuildDraView(const std::vector<pool::PoolModel>& pools, const SliceContext& ctx);

// The device a claim's result names: the published one, else the alias of another model
// (PoolAliases); nullptr when the pool has no such device.
const DraDevice* FindPreparable(const DraView& view, const std::string& pool,
                                const std::string& device);

// The CDI kind of the driver's HCA devices: "<driver>/hca".
std::string HcaCdiKind(std::string_view driver);

}  // namespace rdmadp::dra
