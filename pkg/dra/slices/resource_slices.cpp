#include "pkg/dra/slices/resource_slices.h"

#include <algorithm>
#include <cctype>

namespace rdmadp::dra {
namespace {

using nlohmann::json;

json StringAttribute(std::string_view value) {
  return {{"string", std::string(value.substr(0, kMaxAttributeStringLength))}};
}

// What every model says about the resource.
void CommonAttributes(json& attrs, const pool::PoolModel& pool) {
  attrs["resourceName"] = StringAttribute(pool.resource.FullName());
}

// What a consumer can match on: the standard topology attributes (so a claim can pair an
// HCA with a GPU under the same PCIe root) and what the device plugin's selectors select.
void HcaAttributes(json& attrs, const sysfs::PciFunction& fn) {
  attrs["resource.kubernetes.io/pciBusID"] = StringAttribute(fn.address);
  if (!fn.pcie_root.empty())
    attrs["resource.kubernetes.io/pcieRoot"] = StringAttribute(fn.pcie_root);
  if (fn.numa_node >= 0) attrs["resource.kubernetes.io/numaNode"] = {{"int", fn.numa_node}};
  attrs["vendor"] = StringAttribute(fn.vendor);
  attrs["deviceID"] = StringAttribute(fn.device);
  if (!fn.driver.empty()) attrs["kernelDriver"] = StringAttribute(fn.driver);
  if (!fn.if_name.empty()) attrs["ifName"] = StringAttribute(fn.if_name);
  if (!fn.link_type.empty()) attrs["linkType"] = StringAttribute(fn.link_type);
  if (!fn.rdma_devices.empty()) attrs["rdmaDevice"] = StringAttribute(fn.rdma_devices[0].name);
}

}  // namespace

// kube-apiserver (validateRequestPolicyRange in pkg/apis/resource/validation/validation.go,
// 1.36+ where the field is kept) refuses a range whose min + step exceeds the capacity: a
// one-share device says {min: 1} alone (every request is then one share; nothing to step).
json SharesCapacity(int64_t shares) {
  json range = {{"min", "1"}};
  if (shares > 1) range["step"] = "1";
  return {{"shares",
           {{"value", std::to_string(shares)},
            {"requestPolicy", {{"default", "1"}, {"validRange", std::move(range)}}}}}};
}

namespace {

// The taints of a device that serves `hcas`: one per cause among its unhealthy HCAs (none
// when all are healthy), in a fixed order so that an unchanged pool renders unchanged.
json Taints(const SliceContext& ctx, const std::vector<const pool::PoolHca*>& hcas) {
  bool unwritable = false;
  bool down = false;
  for (const pool::PoolHca* hca : hcas) {
    if (hca->healthy) continue;
    if (ctx.cdi_unwritable.count(hca->function.address) != 0) {
      unwritable = true;
    } else {
      down = true;
    }
  }
  json taints = json::array();
  if (down) taints.push_back({{"key", PortDownTaintKey(ctx.driver)}, {"effect", "NoSchedule"}});
  if (unwritable) {
    taints.push_back({{"key", CdiUnwritableTaintKey(ctx.driver)}, {"effect", "NoSchedule"}});
  }
  return taints;
}

// The taints of a device that serves the whole pool: none while one HCA is usable (the
// pool is, as the device plugin's slots are); else one per cause among its HCAs.
json PoolTaints(const SliceContext& ctx, const pool::PoolModel& pool) {
  if (pool.healthy()) return json::array();
  std::vector<const pool::PoolHca*> all;
  for (const auto& hca : pool.hcas) all.push_back(&hca);
  return Taints(ctx, all);
}

std::vector<json> Devices(const pool::PoolModel& pool, const SliceContext& ctx) {
  std::vector<json> devices;
  switch (ctx.model) {
    case DeviceModel::kAuto:  // resolved by the caller (BuildDraView); perHca if not
    case DeviceModel::kPerHca:
      for (const auto& hca : pool.hcas) {
        json d = {{"name", HcaDeviceName(hca.function.address)},
                  {"allowMultipleAllocations", true},
                  {"attributes", json::object()},
                  {"capacity", SharesCapacity(pool.shares())}};
        CommonAttributes(d["attributes"], pool);
        HcaAttributes(d["attributes"], hca.function);
        if (json t = Taints(ctx, {&hca}); !t.empty()) d["taints"] = std::move(t);
        devices.push_back(std::move(d));
      }
      break;
    case DeviceModel::kPerPool: {
      json d = {{"name", "pool"},
                {"allowMultipleAllocations", true},
                {"attributes", json::object()},
                {"capacity", SharesCapacity(pool.shares())}};
      CommonAttributes(d["attributes"], pool);
      d["attributes"]["hcas"] = {{"int", static_cast<int64_t>(pool.hcas.size())}};
      const auto numa = pool.NumaNodes();
      if (numa.size() == 1) d["attributes"]["resource.kubernetes.io/numaNode"] = {{"int", numa[0]}};
      if (json t = PoolTaints(ctx, pool); !t.empty()) d["taints"] = std::move(t);
      devices.push_back(std::move(d));
      break;
    }
    case DeviceModel::kSlots: {
      const int64_t n = std::min(pool.shares(), kMaxSlotDevices);
      const json taints = PoolTaints(ctx, pool);
      for (int64_t i = 0; i < n; ++i) {
        json d = {{"name", "slot-" + std::to_string(i)}, {"attributes", json::object()}};
        CommonAttributes(d["attributes"], pool);
        if (!taints.empty()) d["taints"] = taints;
        devices.push_back(std::move(d));
      }
      break;
    }
  }
  return devices;
}

}  // namespace

std::string PortDownTaintKey(std::string_view driver) { return std::string(driver) + "/port-down"; }
std::string CdiUnwritableTaintKey(std::string_view driver) {
  return std::string(driver) + "/cdi-spec-unwritable";
}

std::optional<DeviceModel> ResolveModel(DeviceModel configured,
                                        std::optional<bool> consumable_capacity) {
  if (!consumable_capacity) {
    if (configured == DeviceModel::kAuto) return std::nullopt;
    return configured;  // written only once the server is known (the publisher waits)
  }
  if (*consumable_capacity) {
    return configured == DeviceModel::kAuto ? DeviceModel::kPerHca : configured;
  }
  return DeviceModel::kSlots;
}

std::string PoolName(const SliceContext& ctx, const config::ResourceConfig& resource) {
  return DnsLabel(ctx.node_name) + "/" + DnsLabel(resource.resource_name);
}

std::string HcaDeviceName(std::string_view pci_address) {
  return DnsLabel("hca-" + std::string(pci_address));
}

std::vector<json> RenderResourceSlices(const pool::PoolModel& pool, const SliceContext& ctx) {
  if (pool.hcas.empty()) return {};
  std::vector<json> devices = Devices(pool, ctx);
  const size_t count = (devices.size() + kMaxDevicesPerSlice - 1) / kMaxDevicesPerSlice;
  std::vector<json> slices;
  for (size_t s = 0; s < count; ++s) {
    json slice = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceSlice"},
        {"metadata",
         {{"generateName", DnsLabel(ctx.node_name + "-" + pool.resource.resource_name) + "-"}}},
        {"spec",
         {{"driver", ctx.driver},
          {"nodeName", ctx.node_name},
          {"pool",
           {{"name", PoolName(ctx, pool.resource)},
            {"generation", ctx.generation},
            {"resourceSliceCount", static_cast<int64_t>(count)}}},
          {"devices", json::array()}}}};
    const size_t begin = s * kMaxDevicesPerSlice;
    const size_t end = std::min(devices.size(), begin + kMaxDevicesPerSlice);
    for (size_t i = begin; i < end; ++i) slice["spec"]["devices"].push_back(std::move(devices[i]));
    slices.push_back(std::move(slice));
  }
  return slices;
}

}  // namespace rdmadp::dra
