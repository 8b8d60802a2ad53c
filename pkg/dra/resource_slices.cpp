#include "pkg/dra/resource_slices.h"

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

json SharesCapacity(int64_t shares) {
  return {{"shares",
           {{"value", std::to_string(shares)},
            {"requestPolicy", {{"default", "1"}, {"validRange", {{"min", "1"}, {"step", "1"}}}}}}}};
}

json PortDownTaint(const SliceContext& ctx) {
  return {{"key", ctx.driver + "/port-down"}, {"effect", "NoSchedule"}};
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
        if (!hca.healthy) d["taints"] = json::array({PortDownTaint(ctx)});
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
      if (!pool.healthy()) d["taints"] = json::array({PortDownTaint(ctx)});
      devices.push_back(std::move(d));
      break;
    }
    case DeviceModel::kSlots: {
      const int64_t n = std::min(pool.shares(), kMaxSlotDevices);
      for (int64_t i = 0; i < n; ++i) {
        json d = {{"name", "slot-" + std::to_string(i)}, {"attributes", json::object()}};
        CommonAttributes(d["attributes"], pool);
        if (!pool.healthy()) d["taints"] = json::array({PortDownTaint(ctx)});
        devices.push_back(std::move(d));
      }
      break;
    }
  }
  return devices;
}

}  // namespace

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
