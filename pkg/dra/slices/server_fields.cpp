#include "pkg/dra/slices/server_fields.h"

#include "pkg/dra/slices/resource_slices.h"

namespace rdmadp::dra {
namespace {

// The fields the capability probe carries; its answer is the truth about them.
const FieldPaths kProbeFields = {"devices[].allowMultipleAllocations",
                                 "devices[].capacity.shares.requestPolicy", "devices[].taints"};

}  // namespace

nlohmann::json ProbeSlice(const std::string& driver, const std::string& node_name) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"generateName", "rdma-capability-probe-"}}},
          {"spec",
           {{"driver", driver},
            {"nodeName", node_name},
            {"pool", {{"name", "capability-probe"}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices",
             {{{"name", "probe"},
               {"allowMultipleAllocations", true},
               // As the real slices say it (two shares: a valid range with a step on every
               // release; one share with a step is refused on 1.36+).
               {"capacity", SharesCapacity(2)},
               {"taints", {{{"key", driver + "/probe"}, {"effect", "NoSchedule"}}}}}}}}}};
}

std::vector<std::string> ServerFields::Learned(const FieldPaths& dropped, TimePoint now) {
  for (const std::string& path : dropped) dropped_[path] = now;
  return Report(dropped);
}

std::vector<std::string> ServerFields::Probed(const FieldPaths& dropped, TimePoint now,
                                              TimePoint next) {
  next_probe_ = next;
  for (const std::string& path : kProbeFields) {
    if (dropped.count(path) != 0) {
      dropped_[path] = now;
    } else {
      dropped_.erase(path);
    }
  }
  return Report(dropped);
}

std::vector<std::string> ServerFields::Report(const FieldPaths& dropped) {
  std::vector<std::string> news;
  for (const std::string& path : dropped) {
    if (reported_.insert(path).second) news.push_back(path);
  }
  return news;
}

FieldPaths ServerFields::Active(TimePoint now) {
  FieldPaths active;
  for (auto it = dropped_.begin(); it != dropped_.end();) {
    // The probe's own fields are the probe's to refresh (hourly): expiring them here would
    // tell the front end a gate came on while only the probe was late (a slots fallback
    // never writes allowMultipleAllocations, so no answer would correct it).
    if (now - it->second >= kRecheckDropped && kProbeFields.count(it->first) == 0) {
      it = dropped_.erase(it);  // written once more: the answer tells again
    } else {
      active.insert(it->first);
      ++it;
    }
  }
  return active;
}

FieldPaths ServerFields::Believed() const {
  FieldPaths believed;
  for (const auto& [path, learnt] : dropped_) believed.insert(path);
  return believed;
}

std::optional<ServerCapabilities> ServerFields::ToTell() {
  ServerCapabilities caps;
  caps.consumable_capacity = dropped_.count("devices[].allowMultipleAllocations") == 0;
  caps.device_taints = dropped_.count("devices[].taints") == 0;
  if (told_ && *told_ == caps) return std::nullopt;
  told_ = caps;
  return caps;
}

}  // namespace rdmadp::dra
