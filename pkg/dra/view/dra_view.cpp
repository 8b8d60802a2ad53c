#include "pkg/dra/view/dra_view.h"

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
    if (!known) continue;
    view.pools.push_back({pool_name, RenderResourceSlices(pool, c)});
    std::vector<std::string> reasons;
    for (const auto& hca : pool.hcas) {
      if (!hca.healthy) reasons.push_back(hca.health_reason);
    }
    // The published attributes of each device, by name, for the metadata files.
    std::map<std::string, nlohmann::json> attributes;
    for (const auto& slice : view.pools.back().slices) {
      for (const auto& d : slice["spec"]["devices"]) {
        attributes[d["name"].get<std::string>()] = d.value("attributes", nlohmann::json::object());
      }
    }
    auto add = [&](const std::string& name, std::vector<std::string> ids, bool healthy,
                   std::string message, DraDevice::Functions functions) {
      nlohmann::json attrs = attributes[name];
      view.devices[{pool_name, name}] = {pool_name,
                                         name,
                                         std::move(ids),
                                         healthy,
                                         std::move(message),
                                         std::move(functions),
                                         std::move(attrs),
                                         pool.resource.env_hints,
                                         pool.resource.FullName(),
                                         pool.resource.pci_device_env};
    };
    auto all = std::make_shared<std::vector<sysfs::PciFunction>>();
    for (const auto& hca : pool.hcas) all->push_back(hca.function);
    const DraDevice::Functions all_functions = std::move(all);
    switch (c.model) {
      case DeviceModel::kAuto:  // resolved above
      case DeviceModel::kPerHca:
        for (size_t i = 0; i < pool.hcas.size(); ++i) {
          add(HcaDeviceName(pool.hcas[i].function.address), {all_ids[i]}, pool.hcas[i].healthy,
              pool.hcas[i].health_reason,
              std::make_shared<const std::vector<sysfs::PciFunction>>(1, pool.hcas[i].function));
        }
        break;
      case DeviceModel::kPerPool:
        if (!pool.hcas.empty()) {
          add("pool", all_ids, pool.healthy(), Join(reasons, "; "), all_functions);
        }
        break;
      case DeviceModel::kSlots:
        if (pool.hcas.empty()) break;
        for (int64_t i = 0; i < std::min(pool.shares(), kMaxSlotDevices); ++i) {
          add(Cat("slot-", i), all_ids, pool.healthy(), Join(reasons, "; "), all_functions);
        }
        break;
    }
  }
  return view;
}

}  // namespace rdmadp::dra
