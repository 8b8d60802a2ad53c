#include "pkg/dra/status/claim_status.h"

#include <ctime>
#include <set>

#include "pkg/dra/slices/slice_writer.h"
#include "pkg/kube/json_read.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {
namespace {

// "mlx5_0 (0000:10:00.0, netdev ib0, RoCE v2 GID index 3)".
std::string DescribeHca(const sysfs::PciFunction& fn) {
  std::vector<std::string> ibdevs;
  int gid = -1;
  for (const auto& d : fn.rdma_devices) {
    ibdevs.push_back(d.name);
    for (const auto& p : d.ports) {
      if (gid < 0) gid = p.roce_v2_ipv4_gid;
    }
  }
  std::string what = Cat(Join(ibdevs, "+"), " (", fn.address);
  if (!fn.if_name.empty()) Append(what, ", netdev ", fn.if_name);
  if (gid >= 0) Append(what, ", RoCE v2 GID index ", gid);
  return what + ")";
}

std::string CappedMessage(std::string text) {
  if (text.size() <= kMaxConditionMessage) return text;
  text.resize(kMaxConditionMessage - 3);
  return text + "...";
}

nlohmann::json Condition(bool ready, std::string_view reason, std::string message) {
  return {{"type", std::string(kReadyCondition)},
          {"status", ready ? "True" : "False"},
          {"reason", std::string(reason)},
          {"message", CappedMessage(std::move(message))}};
}

// networkData of a device of one HCA with a netdev; null otherwise.
nlohmann::json NetworkData(const DraDevice& device, const InterfaceAddresses& addresses) {
  if (device.functions->size() != 1) return nullptr;
  const sysfs::PciFunction& fn = device.functions->front();
  if (fn.if_name.empty()) return nullptr;
  nlohmann::json data = {{"interfaceName", fn.if_name}};
  if (auto it = addresses.find(fn.if_name); it != addresses.end() && !it->second.empty()) {
    std::vector<std::string> ips(it->second.begin(), it->second.end());
    std::sort(ips.begin(), ips.end());
    ips.erase(std::unique(ips.begin(), ips.end()), ips.end());
    if (ips.size() > kMaxNetworkIps) ips.resize(kMaxNetworkIps);
    data["ips"] = ips;
  }
  if (!fn.hardware_address.empty()) data["hardwareAddress"] = fn.hardware_address;
  return data;
}

nlohmann::json KeyOf(const nlohmann::json& entry) {
  return {kube::Str(entry, "pool"), kube::Str(entry, "device"), kube::Str(entry, "shareID")};
}

// `j` without any condition's lastTransitionTime.
nlohmann::json WithoutTimes(nlohmann::json j) {
  if (!j.is_array()) return j;
  for (auto& e : j) {
    if (!e.is_object() || !e.contains("conditions") || !e["conditions"].is_array()) continue;
    for (auto& c : e["conditions"]) {
      if (c.is_object()) c.erase("lastTransitionTime");
    }
  }
  return j;
}

}  // namespace

nlohmann::json DeviceStatusEntries(const PreparedClaim& claim, const DraView& view,
                                   const InterfaceAddresses& addresses) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& d : claim.devices) {
    nlohmann::json e = {{"driver", view.driver}, {"pool", d.pool}, {"device", d.device}};
    if (!d.share_id.empty()) e["shareID"] = d.share_id;
    const DraDevice* device = FindPreparable(view, d.pool, d.device);
    if (device == nullptr) {
      e["conditions"] = {Condition(false, "NotPublished",
                                   "this device is no longer published on its node (its HCA "
                                   "is gone or no entry selects it)")};
    } else {
      std::vector<std::string> hcas;
      for (const auto& fn : *device->functions) hcas.push_back(DescribeHca(fn));
      const std::string which = Cat(hcas.size() == 1 ? "HCA " : "HCAs ", Join(hcas, ", "));
      e["conditions"] = {
          device->healthy
              ? Condition(true, "Prepared", Cat("prepared: ", which))
              : Condition(false, "Unhealthy", Cat(device->health_message, " (", which, ")"))};
      if (auto data = NetworkData(*device, addresses); !data.is_null()) e["networkData"] = data;
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

void StampTransitions(nlohmann::json& entries, const nlohmann::json& previous,
                      std::string_view now) {
  for (auto& e : entries) {
    const nlohmann::json* before = nullptr;
    if (previous.is_array()) {
      for (const auto& p : previous) {
        if (p.is_object() && KeyOf(p) == KeyOf(e)) before = &p;
      }
    }
    for (auto& c : e["conditions"]) {
      std::string when(now);
      const nlohmann::json* old = before != nullptr ? kube::Arr(*before, "conditions") : nullptr;
      for (const auto& o : old != nullptr ? *old : nlohmann::json::array()) {
        if (kube::Str(o, "type") == kube::Str(c, "type") &&
            kube::Str(o, "status") == kube::Str(c, "status") &&
            !kube::Str(o, "lastTransitionTime").empty()) {
          when = kube::Str(o, "lastTransitionTime");
        }
      }
      c["lastTransitionTime"] = when;
    }
  }
}

bool SameReport(const nlohmann::json& a, const nlohmann::json& b) {
  return WithoutTimes(a) == WithoutTimes(b);
}

nlohmann::json ClaimStatusApply(const PreparedClaim& claim, const nlohmann::json& entries) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", claim.name}, {"namespace", claim.namespace_}, {"uid", claim.uid}}},
          {"status", {{"devices", entries}}}};
}

std::string ClaimStatusPath(const PreparedClaim& claim, std::string_view driver) {
  return Cat("/apis/resource.k8s.io/v1/namespaces/", claim.namespace_, "/resourceclaims/",
             claim.name, "/status?fieldManager=", PercentEncode(driver), "&force=true");
}

nlohmann::json ReportedEntries(const nlohmann::json& claim, std::string_view driver,
                               const std::vector<PreparedClaim::Device>& devices) {
  std::set<nlohmann::json> wanted;
  for (const auto& d : devices) wanted.insert(nlohmann::json{d.pool, d.device, d.share_id});
  nlohmann::json out = nlohmann::json::array();
  const nlohmann::json* entries = kube::Arr(kube::Obj(claim, "status"), "devices");
  if (entries == nullptr) return out;
  for (const auto& e : *entries) {
    if (e.is_object() && kube::Str(e, "driver") == driver && wanted.count(KeyOf(e)) != 0) {
      out.push_back(e);
    }
  }
  return out;
}

std::string RfcTime(std::chrono::system_clock::time_point t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace rdmadp::dra
