#include "pkg/pool/pod_env.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <utility>

#include "pkg/sysfs/sysfs_parse.h"
#include "pkg/text/cat.h"
#include "pkg/text/json.h"

namespace rdmadp::pool {
namespace {

constexpr std::string_view kDevDir = "/dev/infiniband/";

// The SR-IOV plugin's "rdma" section: a path per char-device kind, and the RDMA device.
std::string RdmaSection(const sysfs::PciFunction& fn) {
  std::string out = "{";
  auto field = [&](std::string_view key, std::string_view value) {
    Append(out, out.size() > 1 ? ", " : "", JsonString(key), ": ", JsonString(value));
  };
  // One path per kind, as readers of the SR-IOV format expect: a multiport HCA's umad and
  // issm of its first port (char_devices are in port order; "ports" lists every port).
  using sysfs::CharDevKind;
  for (const auto& kind_key :
       {std::pair{CharDevKind::kUverbs, "uverbs"}, std::pair{CharDevKind::kUmad, "umad"},
        std::pair{CharDevKind::kIssm, "issm"}}) {
    // Not a structured binding: C++20 lets a lambda capture one, but clang 14's front end
    // (clang-tidy's) refuses it.
    const CharDevKind kind = kind_key.first;
    const char* key = kind_key.second;
    auto it = std::find_if(fn.char_devices.begin(), fn.char_devices.end(),
                           [&](const std::string& d) { return sysfs::ClassifyCharDev(d) == kind; });
    if (it != fn.char_devices.end()) field(key, Cat(kDevDir, *it));
  }
  field("rdma_cm", Cat(kDevDir, "rdma_cm"));
  if (!fn.rdma_devices.empty()) field("rdma_dev", fn.rdma_devices[0].name);
  return out + "}";
}

// Lowercase letters and digits joined by single '-'s: what upper-casing and '-' -> '_'
// turns into a part that reads back as this name only.
bool PlainName(std::string_view name) {
  char prev = '-';  // so that a leading '-' is refused
  for (char c : name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (c != '-' || prev == '-')) return false;
    prev = c;
  }
  return !name.empty() && prev != '-';
}

// One part of a ClaimPciDeviceEnvName (pod_env.h has the rule and why it cannot clash).
std::string ClaimEnvPart(std::string_view name, bool request) {
  const bool info = name == "info" || name.ends_with("-info");
  std::string out;
  if (PlainName(name) && !(request && info)) {
    for (char c : name) {
      out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return out;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  // Appended, not assigned: GCC 12 reports an impossible overlap for `out = "x"` once this
  // is inlined (bug 105329, a -Wrestrict false positive that -Werror would make fatal).
  out.push_back('x');
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    out += kHex[u >> 4];
    out += kHex[u & 0xf];
  }
  return out;
}

}  // namespace

std::string ClaimPciDeviceEnvName(std::string_view claim, std::string_view request) {
  return Cat("PCIDEVICE__", ClaimEnvPart(claim, false), "__", ClaimEnvPart(request, true));
}

std::string PortsJson(const sysfs::PciFunction& fn) {
  std::string out = "[";
  for (const auto& dev : fn.rdma_devices) {
    for (const auto& port : dev.ports) {
      Append(out, out.size() > 1 ? ", " : "", "{\"rdmaDevice\": ", JsonString(dev.name),
             ", \"port\": ", port.number,
             ", \"state\": ", JsonString(sysfs::PortStateName(port.state)));
      if (port.traffic_class >= 0) Append(out, ", \"trafficClass\": ", port.traffic_class);
      if (port.roce_v2_ipv4_gid >= 0) Append(out, ", \"roceV2GidIndex\": ", port.roce_v2_ipv4_gid);
      out += "}";
    }
  }
  return out + "]";
}

std::string PciDeviceEnvName(std::string_view full_resource_name) {
  std::string out = "PCIDEVICE_";
  for (char c : full_resource_name) {
    out += std::isalnum(static_cast<unsigned char>(c)) != 0
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
               : '_';
  }
  return out;
}

std::map<std::string, std::string> HintEnv(const std::vector<sysfs::PciFunction>& functions,
                                           const std::vector<config::EnvHint>& hints) {
  std::string ports;
  for (const auto& fn : functions) {
    for (const auto& port : UsablePorts(fn)) Append(ports, ports.empty() ? "" : ",", port);
  }
  std::map<std::string, std::string> env;
  if (ports.empty()) return env;
  for (config::EnvHint hint : hints) {
    if (hint == config::EnvHint::kNccl) env["NCCL_IB_HCA"] = Cat("=", ports);
    if (hint == config::EnvHint::kUcx) env["UCX_NET_DEVICES"] = ports;
  }
  return env;
}

namespace {

// One RoCE setting over the usable ports: the configured number, or the one value every
// usable port has (`of` reads it, -1 for none); else nullopt and `why` says what was found.
std::optional<int> RoceSetting(const std::vector<sysfs::PciFunction>& functions,
                               const config::RoceValue& wanted, int (*of)(const sysfs::Port&),
                               std::string_view what, std::string& why) {
  if (!wanted.automatic) return wanted.value;
  std::map<int, std::vector<std::string>> ports_by_value;  // -1: none
  for (const auto& fn : functions) {
    for (const auto& dev : fn.rdma_devices) {
      for (const auto& port : dev.ports) {
        if (!IsUsablePort(port)) continue;
        ports_by_value[of(port)].push_back(Cat(dev.name, ":", port.number));
      }
    }
  }
  if (ports_by_value.size() == 1 && ports_by_value.begin()->first >= 0) {
    return ports_by_value.begin()->first;
  }
  if (ports_by_value.empty()) {
    why = Cat("no usable port to read ", what, " from");
    return std::nullopt;
  }
  std::string found;
  for (const auto& [value, ports] : ports_by_value) {
    Append(found, found.empty() ? "" : "; ", Join(ports, ", "), ": ",
           value < 0 ? std::string("none") : std::to_string(value));
  }
  why = Cat(ports_by_value.size() == 1 ? "no usable port has " : "the usable ports differ in ",
            what, " (", found, ")");
  return std::nullopt;
}

}  // namespace

std::map<std::string, std::string> RoceEnv(const std::vector<sysfs::PciFunction>& functions,
                                           const config::ResourceConfig& resource,
                                           std::vector<std::string>* not_set) {
  std::map<std::string, std::string> env;
  const auto& hints = resource.env_hints;
  auto hinted = [&](config::EnvHint h) {
    return std::find(hints.begin(), hints.end(), h) != hints.end();
  };
  struct Setting {
    const std::optional<config::RoceValue>& wanted;
    int (*of)(const sysfs::Port&);
    std::string_view what;
    std::string_view nccl;
    std::string_view ucx;
  };
  const Setting settings[] = {
      {resource.traffic_class, [](const sysfs::Port& p) { return p.traffic_class; },
       "a traffic class (tc/<port>/traffic_class)", "NCCL_IB_TC", "UCX_IB_TRAFFIC_CLASS"},
      {resource.gid_index, [](const sysfs::Port& p) { return p.roce_v2_ipv4_gid; },
       "a RoCE v2 GID with an IPv4 address of its netdev", "NCCL_IB_GID_INDEX", "UCX_IB_GID_INDEX"},
  };
  for (const Setting& s : settings) {
    if (!s.wanted || hints.empty()) continue;
    std::string why;
    const std::optional<int> value = RoceSetting(functions, *s.wanted, s.of, s.what, why);
    std::vector<std::string_view> names;
    if (hinted(config::EnvHint::kNccl)) names.push_back(s.nccl);
    if (hinted(config::EnvHint::kUcx)) names.push_back(s.ucx);
    if (value) {
      for (auto name : names) env[std::string(name)] = std::to_string(*value);
    } else if (not_set != nullptr) {
      not_set->push_back(Cat(resource.FullName(), ": ", Join(names, " and "),
                             names.size() == 1 ? " is" : " are",
                             " not in the pods' environment: ", why));
    }
  }
  return env;
}

std::string_view RdmaLinkLayer(std::string_view link_type) {
  // The kernel's words (sysfs infiniband/<dev>/ports/<n>/link_layer), which ibv_devinfo and
  // rdma-core print; link_type is the netdev's ARPHRD name the selectors use.
  if (link_type == "infiniband") return "InfiniBand";
  if (link_type == "ether") return "Ethernet";
  return link_type;
}

std::string DeviceInfoJson(const std::vector<sysfs::PciFunction>& functions) {
  std::string info = "{";
  for (const auto& fn : functions) {
    Append(info, info.size() > 1 ? ", " : "", JsonString(fn.address), ": {",
           "\"generic\": {\"deviceID\": ", JsonString(fn.address), "}, ",
           "\"rdma\": ", RdmaSection(fn), ", ",
           "\"ibdev\": ", JsonString(fn.rdma_devices.empty() ? "" : fn.rdma_devices[0].name),
           ", \"netdev\": ", JsonString(fn.if_name), ", \"numaNode\": ", fn.numa_node,
           ", \"pcieRoot\": ", JsonString(fn.pcie_root),
           ", \"linkLayer\": ", JsonString(RdmaLinkLayer(fn.link_type)),
           ", \"ports\": ", PortsJson(fn),
           ", \"usable\": ", UnusableReason(fn).empty() ? "true" : "false", "}");
  }
  return info + "}";
}

std::map<std::string, std::string> PodEnv(const PoolModel& model, std::string* info_left_out) {
  if (info_left_out != nullptr) info_left_out->clear();
  if (model.hcas.empty()) return {};
  std::vector<sysfs::PciFunction> functions;
  std::string addresses;
  for (const auto& hca : model.hcas) {  // by PCI address (SelectPool keeps the scan's order)
    functions.push_back(hca.function);
    Append(addresses, addresses.empty() ? "" : ",", hca.function.address);
  }
  const std::string name = PciDeviceEnvName(model.resource.FullName());
  std::map<std::string, std::string> env = HintEnv(functions, model.resource.env_hints);
  if (!model.resource.pci_device_env) return env;  // `pciDeviceEnv: false`: the hints only
  env[name] = addresses;
  std::string info = DeviceInfoJson(functions);
  if (info.size() <= kMaxInfoBytes) {
    env[name + "_INFO"] = std::move(info);
  } else if (info_left_out != nullptr) {
    *info_left_out =
        Cat(model.resource.FullName(), ": ", name,
            "_INFO is left out of the pods' environment: its JSON for ", model.hcas.size(),
            " HCA(s) is ", info.size(), " bytes, over the ", kMaxInfoBytes,
            "-byte limit (a process refuses an environment string over 128 KiB); ", name,
            " still lists every HCA");
  }
  return env;
}

}  // namespace rdmadp::pool
