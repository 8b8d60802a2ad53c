#include "pkg/dra/view/dra_view.h"

#include <algorithm>
#include <set>

#include "pkg/cdi/cdi_spec.h"
#include "pkg/pool/snapshot.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {
namespace {

// `memlock`: the entry's, with the hook's path (cdi/cdi_spec.h MemlockHookJson); the hook
// is in the device's own edits, so a container given two HCAs runs it twice, to one value.
std::string HcaSpecJson(std::string_view kind, const sysfs::PciFunction& fn,
                        const std::optional<uint64_t>& memlock, const std::string& hook) {
  nlohmann::json nodes = nlohmann::json::array();
  std::vector<std::string> paths;
  for (const auto& name : fn.char_devices) paths.push_back(Cat(pool::kCharDevDir, name));
  paths.push_back(Cat(pool::kCharDevDir, "rdma_cm"));
  for (const auto& p : paths)
    nodes.push_back({{"path", p}, {"hostPath", p}, {"permissions", "rwm"}});
  nlohmann::json edits = {{"deviceNodes", nodes}};
  if (memlock && !hook.empty()) {
    edits["hooks"] =
        nlohmann::json::array({nlohmann::json::parse(cdi::MemlockHookJson(hook, *memlock))});
  }
  const nlohmann::json spec = {
      {"cdiVersion", "0.5.0"},
      {"kind", std::string(kind)},
      {"devices", nlohmann::json::array({{{"name", HcaDeviceName(fn.address)},
                                          {"containerEdits", std::move(edits)}}})}};
  return spec.dump(2) + "\n";
}

}  // namespace

std::string HcaCdiKind(std::string_view driver) { return Cat(driver, "/hca"); }

const DraDevice* FindPreparable(const DraView& view, const std::string& pool,
                                const std::string& device) {
  if (auto it = view.devices.find({pool, device}); it != view.devices.end()) return &it->second;
  auto aliases = view.aliases.find(pool);
  if (aliases == view.aliases.end()) return nullptr;
  const PoolAliases& a = aliases->second;
  if (device == "pool") return &a.whole;
  if (auto hca = a.per_hca.find(device); hca != a.per_hca.end()) return &hca->second;
  // Exactly the names RenderResourceSlices gives: "slot-7", never "slot-07" or "slot-+7".
  constexpr std::string_view kSlot = "slot-";
  if (device.starts_with(kSlot) &&
      pool::IsSlotId(std::string_view(device).substr(kSlot.size()), a.slots)) {
    return &a.whole;
  }
  return nullptr;
}

DraView BuildDraView(const std::vector<pool::PoolModel>& pools, const SliceContext& ctx) {
  DraView view;
  view.driver = ctx.driver;
  const std::string kind = HcaCdiKind(ctx.driver);
  std::map<std::string, std::string> owner;  // PCI address -> resource that publishes it
  for (pool::PoolModel pool : pools) {
    const DeviceModel configured = pool.resource.device_model;
    // "auto" before the API server has answered: the pool is published once it has; its
    // HCAs' CDI specs (the same in every model) are written already.
    const std::optional<DeviceModel> resolved = ResolveModel(configured, ctx.consumable_capacity);
    const bool known = resolved.has_value();
    const DeviceModel model = resolved.value_or(DeviceModel::kPerHca);
    if (known && configured != DeviceModel::kAuto && model != configured) {
      view.fallbacks.push_back({pool.resource.FullName(), configured, model});
    }
    std::vector<pool::PoolHca> kept;
    for (auto& hca : pool.hcas) {
      auto [it, inserted] = owner.emplace(hca.function.address, pool.resource.FullName());
      if (inserted) {
        kept.push_back(std::move(hca));
      } else {
        view.problems.push_back(Cat(pool.resource.FullName(), ": HCA ", it->first,
                                    " is already published by ", it->second,
                                    "; left out (one HCA is one DRA device: narrow the "
                                    "selectors so that the pools do not overlap)"));
      }
    }
    pool.hcas = std::move(kept);
    SliceContext c = ctx;
    c.model = model;
    const std::string pool_name = PoolName(c, pool.resource);
    std::vector<std::string> all_ids;
    for (const auto& hca : pool.hcas) {
      all_ids.push_back(Cat(kind, "=", HcaDeviceName(hca.function.address)));
      view.cdi_specs.push_back(
          {Cat("k8s-rdma-shared-dp_dra_", HcaDeviceName(hca.function.address), ".json"),
           HcaSpecJson(kind, hca.function, pool.resource.memlock, ctx.memlock_hook)});
    }
    // An empty pool still publishes (no slices: its old ones go) once the model is known.
    if (pool.hcas.empty()) {
      if (known) view.pools.push_back({pool_name, {}});
      continue;
    }
    // What each model's names stand for (PoolAliases); the published devices are these with
    // their names and the attributes their slices give them.
    PoolAliases& aliases = view.aliases[pool_name];
    aliases.slots = std::min(pool.shares(), kMaxSlotDevices);
    auto device = [&](std::string name, std::vector<std::string> ids, bool healthy,
                      std::string message, DraDevice::Functions functions) {
      return DraDevice{pool_name,
                       std::move(name),
                       std::move(ids),
                       healthy,
                       std::move(message),
                       std::move(functions),
                       nlohmann::json::object(),
                       pool.resource.env_hints,
                       pool.resource.FullName(),
                       pool.resource.pci_device_env};
    };
    auto all = std::make_shared<std::vector<sysfs::PciFunction>>();
    std::vector<std::string> reasons;
    for (const auto& hca : pool.hcas) {
      all->push_back(hca.function);
      if (!hca.healthy) reasons.push_back(hca.health_reason);
    }
    aliases.whole = device("pool", all_ids, pool.healthy(), Join(reasons, "; "), std::move(all));
    for (size_t i = 0; i < pool.hcas.size(); ++i) {
      std::string name = HcaDeviceName(pool.hcas[i].function.address);
      aliases.per_hca[name] =
          device(name, {all_ids[i]}, pool.hcas[i].healthy, pool.hcas[i].health_reason,
                 std::make_shared<const std::vector<sysfs::PciFunction>>(1, pool.hcas[i].function));
    }
    if (!known) continue;
    view.pools.push_back({pool_name, RenderResourceSlices(pool, c)});
    // The published attributes of each device, by name, for the metadata files.
    std::map<std::string, nlohmann::json> attributes;
    for (const auto& slice : view.pools.back().slices) {
      for (const auto& d : slice["spec"]["devices"]) {
        attributes[d["name"].get<std::string>()] = d.value("attributes", nlohmann::json::object());
      }
    }
    auto publish = [&](const std::string& name, const DraDevice& as) {
      DraDevice& d = view.devices[{pool_name, name}] = as;
      d.name = name;
      d.attributes = attributes[name];
    };
    switch (c.model) {
      case DeviceModel::kAuto:  // resolved above
      case DeviceModel::kPerHca:
        for (const auto& [name, d] : aliases.per_hca) publish(name, d);
        break;
      case DeviceModel::kPerPool:
        publish("pool", aliases.whole);
        break;
      case DeviceModel::kSlots:
        for (int64_t i = 0; i < aliases.slots; ++i) publish(Cat("slot-", i), aliases.whole);
        break;
    }
  }
  return view;
}

}  // namespace rdmadp::dra
