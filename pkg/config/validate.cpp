// Semantic checks: at least the Go plugin's rules (reference §2.3), plus the kubelet's
// resource-name rules, an rdmaHcaMax bound, and selector values that can never match.
#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "pkg/config/k8s_names.h"
#include "pkg/config/link_types.h"
#include "pkg/config/raw_config.h"
#include "pkg/text/cat.h"

namespace rdmadp::config {
namespace {

// Linux dev_valid_name(): 1..15 bytes, not "." or "..", no '/', ':' or whitespace.
std::string IfNameProblem(std::string_view v) {
  if (v.empty()) return "is empty";
  if (v.size() > 15) return Cat("is ", v.size(), " characters; Linux allows 15");
  if (v == "." || v == "..") return "is not a usable name";
  for (char c : v) {
    if (c == '/' || c == ':' || absl::ascii_isspace(static_cast<unsigned char>(c))) {
      return Cat("contains '", std::string(1, c), "', which no interface name can");
    }
  }
  return "";
}

// The variable a device-plugin entry's containers get its PCI addresses in, by
// pool::PciDeviceEnvName's rule (pool/pod_env.h; config cannot depend on pool): the full
// resource name upper-cased, every character but a letter or digit made '_'.
std::string PciDeviceEnvName(std::string_view full_resource_name) {
  std::string out = "PCIDEVICE_";
  for (char c : full_resource_name) {
    const auto u = static_cast<unsigned char>(c);
    out += absl::ascii_isalnum(u) ? absl::ascii_toupper(u) : '_';
  }
  return out;
}

// "<domain>:bb:dd.f" in hex, as sysfs names PCI functions (bus/pci/devices): a domain of 4
// to 8 digits (Intel VMD puts devices in domains like 10000). Only what the kernel can
// write is an address (pci_setup_device: "%04x:%02x:%02x.%d"), since a selector is compared
// with sysfs's names as text: a domain past 4 digits has no leading 0 ("00000:3b:00.0"
// matches nothing), a device is 5 bits (00 to 1f) and a function 3 (0 to 7).
bool IsFullPciAddress(std::string_view a) {
  if (a.size() < 12 || a.size() > 16) return false;
  const size_t d = a.size() - 8;  // the domain's digits
  if (a[d] != ':' || a[d + 3] != ':' || a[d + 6] != '.') return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i == d || i == d + 3 || i == d + 6) continue;
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(a[i]))) return false;
  }
  if (d > 4 && a[0] == '0') return false;
  return a[d + 4] <= '1' && a.back() <= '7';
}

std::string DriverProblem(std::string_view v) {
  if (v.empty()) return "is empty";
  for (char c : v) {
    if (c == '/' || absl::ascii_isspace(static_cast<unsigned char>(c))) {
      return Cat("contains '", std::string(1, c), "', which no driver name can");
    }
  }
  return "";
}

void ValidateSelectors(const Selectors& in, const std::string& path, Selectors& out, Findings& f) {
  auto pci = [&](const std::vector<std::string>& values, std::string_view key,
                 std::vector<std::string>& dst) {
    for (size_t i = 0; i < values.size(); ++i) {
      std::string id = NormalizePciId(values[i]);
      if (id.empty()) {
        f.Error(Cat(path, ".", key, "[", i, "]"),
                Cat("\"", values[i], "\" is not a 4-digit hex PCI ID (like \"15b3\")"));
      } else {
        dst.push_back(std::move(id));
      }
    }
  };
  pci(in.vendors, "vendors", out.vendors);
  pci(in.device_ids, "deviceIDs", out.device_ids);
  for (size_t i = 0; i < in.drivers.size(); ++i) {
    if (auto p = DriverProblem(in.drivers[i]); !p.empty()) {
      f.Error(Cat(path, ".drivers[", i, "]"), Cat("\"", in.drivers[i], "\" ", p));
    }
  }
  out.drivers = in.drivers;
  for (size_t i = 0; i < in.if_names.size(); ++i) {
    if (auto p = IfNameProblem(in.if_names[i]); !p.empty()) {
      f.Error(Cat(path, ".ifNames[", i, "]"), Cat("\"", in.if_names[i], "\" ", p));
    }
  }
  out.if_names = in.if_names;
  for (size_t i = 0; i < in.link_types.size(); ++i) {
    if (!IsKnownLinkType(in.link_types[i])) {
      std::string hint = in.link_types[i] == "ethernet" || in.link_types[i] == "eth"
                             ? " (Ethernet is \"ether\")"
                             : " (use \"ether\", \"infiniband\", ...)";
      f.Error(Cat(path, ".linkTypes[", i, "]"),
              Cat("\"", in.link_types[i], "\" is not a link type", hint));
    }
  }
  out.link_types = in.link_types;
  for (size_t i = 0; i < in.pci_addresses.size(); ++i) {
    std::string address = absl::AsciiStrToLower(in.pci_addresses[i]);
    if (!IsFullPciAddress(address)) {
      f.Error(Cat(path, ".pciAddresses[", i, "]"),
              Cat("\"", Echo(in.pci_addresses[i]),
                  "\" is not a PCI address with its domain (like \"0000:3b:00.0\")"));
    } else {
      out.pci_addresses.push_back(std::move(address));
    }
  }
}

// Parses `value` as one of `names` (exact spelling; a case-insensitive match gets a hint).
template <typename Enum, size_t N>
std::optional<Enum> ReadEnum(const std::string& value, const std::string& path,
                             const std::array<std::pair<std::string_view, Enum>, N>& names,
                             Findings& f) {
  std::vector<std::string_view> spellings;
  for (const auto& [name, e] : names) {
    if (name == value) return e;
    spellings.push_back(name);
  }
  std::string hint;
  for (const auto& [name, e] : names) {
    if (absl::EqualsIgnoreCase(absl::string_view(name.data(), name.size()), value))
      hint = Cat(" (write \"", name, "\")");
  }
  f.Error(path, Cat("\"", value, "\" is not one of \"", Join(spellings, "\", \""), "\"", hint));
  return std::nullopt;
}

constexpr std::array<std::pair<std::string_view, Frontend>, 2> kFrontends{{
    {"devicePlugin", Frontend::kDevicePlugin},
    {"dra", Frontend::kDra},
}};
constexpr std::array<std::pair<std::string_view, DeviceModel>, 4> kDeviceModels{{
    {"auto", DeviceModel::kAuto},
    {"perHca", DeviceModel::kPerHca},
    {"perPool", DeviceModel::kPerPool},
    {"slots", DeviceModel::kSlots},
}};

constexpr std::array<std::pair<std::string_view, EnvHint>, 2> kEnvHints{{
    {"nccl", EnvHint::kNccl},
    {"ucx", EnvHint::kUcx},
}};

void ValidateEnvHints(const RawResource& r, ResourceConfig& rc, Findings& f) {
  for (size_t i = 0; i < r.env_hints.size(); ++i) {
    auto v = ReadEnum(r.env_hints[i], Cat(r.path, ".envHints[", i, "]"), kEnvHints, f);
    if (v && std::find(rc.env_hints.begin(), rc.env_hints.end(), *v) == rc.env_hints.end()) {
      rc.env_hints.push_back(*v);
    }
  }
  rc.skip_unusable = r.skip_unusable.value_or(false);
  rc.pci_device_env = r.pci_device_env.value_or(true);
  if (r.unused_grace_seconds) {
    if (*r.unused_grace_seconds < kMinUnusedGraceSeconds ||
        *r.unused_grace_seconds > kMaxUnusedGraceSeconds) {
      f.Error(r.path + ".unusedGraceSeconds",
              Cat("must be ", kMinUnusedGraceSeconds, "..", kMaxUnusedGraceSeconds,
                  " (seconds a container may hold the pool unused before it is said), got ",
                  *r.unused_grace_seconds));
    } else {
      rc.unused_grace_seconds = r.unused_grace_seconds;
    }
  }
}

// `trafficClass`/`gidIndex`: "auto" or 0..255 (a traffic class and a GID index are 8 bits in
// verbs: ibv_global_route), only with envHints naming who gets them; on a DRA entry they are
// said to reach no container's environment (docs/pod-env.md: a CDI edit would replace the
// pod's own value).
void ValidateRoce(const RawResource& r, ResourceConfig& rc, Findings& f) {
  const std::pair<std::string_view, const std::optional<std::string>*> fields[] = {
      {"trafficClass", &r.traffic_class}, {"gidIndex", &r.gid_index}};
  for (const auto& [key, raw] : fields) {
    if (!raw->has_value()) continue;
    const std::string path = Cat(r.path, ".", key);
    const std::string& text = **raw;
    std::optional<RoceValue> value;
    if (text == "auto") {
      value = RoceValue{.automatic = true, .value = 0};
    } else if (!text.empty() && text.size() <= 3 &&
               std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
               std::stoi(text) <= 255) {
      value = RoceValue{.automatic = false, .value = std::stoi(text)};
    }
    if (!value) {
      f.Error(path, Cat("must be \"auto\" (read from the HCAs) or a number 0..255, got \"",
                        Echo(text), "\""));
      continue;
    }
    if (rc.env_hints.empty()) {
      f.Error(path,
              "sets no variable without envHints: add \"nccl\" and/or \"ucx\" to name "
              "the libraries that get it");
      continue;
    }
    if (rc.frontend == Frontend::kDra) {
      f.Warn(path,
             "reaches no container's environment on a DRA entry (a CDI edit would "
             "replace the pod's own value); pods read the HCAs' class and GID from "
             "PCIDEVICE_*_INFO instead");
    }
    (key == "trafficClass" ? rc.traffic_class : rc.gid_index) = value;
  }
}

void ValidateMemlock(const RawResource& r, ResourceConfig& rc, Findings& f) {
  if (r.memlock) {
    if (auto bytes = ParseMemlock(*r.memlock); bytes.ok() && *bytes < kMinMemlock) {
      // The hook never lowers a limit (a Ki/Gi slip used to lower 8 MiB to 64 KiB in every
      // container of the pool); a value it would ignore is most likely a slip.
      f.Error(r.path + ".memlock",
              Cat("\"", Echo(*r.memlock), "\" is ", *bytes,
                  " bytes, below the 8Mi container runtimes give by default: it would change "
                  "nothing (write at least \"8Mi\"; RDMA jobs usually want \"unlimited\" or "
                  "tens of Gi)"));
    } else if (bytes.ok()) {
      rc.memlock = *bytes;
    } else {
      f.Error(r.path + ".memlock",
              Cat("\"", Echo(*r.memlock), "\" ", std::string(bytes.status().message()),
                  " (write \"unlimited\" or a quantity such as \"64Gi\")"));
    }
  }
}

void ValidateFrontend(const RawResource& r, ResourceConfig& rc, Findings& f) {
  if (r.frontend) {
    const auto v = ReadEnum(*r.frontend, r.path + ".frontend", kFrontends, f);
    if (!v) return;  // which models it takes is not known
    rc.frontend = *v;
  }
  if (!r.device_model) return;
  const auto v = ReadEnum(*r.device_model, r.path + ".deviceModel", kDeviceModels, f);
  if (!v) return;
  rc.device_model = *v;
  if (rc.frontend == Frontend::kDevicePlugin && *v != DeviceModel::kSlots &&
      *v != DeviceModel::kPerHca) {
    // auto and perPool are DRA's: the kubelet's device-plugin API has no consumable capacity
    // to decide by, and a pool-wide device is what "slots" already is there.
    f.Error(r.path + ".deviceModel",
            Cat("\"", *r.device_model,
                "\" is for the DRA front end; a device-plugin entry takes \"slots\" (the "
                "default: every slot gives the whole pool) or \"perHca\" (each HCA its own "
                "devices)"));
  }
}

}  // namespace

std::vector<std::string> CrossEntryProblems(const Config& config,
                                            const std::vector<size_t>& indices) {
  Findings f;
  struct FirstUse {
    std::string path;
    Frontend frontend;
  };
  std::map<std::string, FirstUse> seen;  // resourceName -> its first entry
  // DRA entries: the DNS label of the name -> the entry's path and name. The pool and the
  // DeviceClass are named by it, so "rdma_A" and "rdma_a" would publish one pool from two
  // writers, each overwriting the other.
  std::map<std::string, std::pair<std::string, std::string>> dra_labels;
  // Device-plugin entries that serve: each PCIDEVICE_ variable they set (the address list and
  // its _INFO) -> the entry's path and full resource name. Two entries setting one variable
  // ("rdma/env_dp" and "rdma/ENV_DP"; "a-b/c" and "a/b_c"; "rdma/a" and "rdma/a_INFO") would
  // give a container holding both one value of the two, which the kubelet picks at random
  // (docs/pod-env.md).
  std::map<std::string, std::pair<std::string, std::string>> env_vars;
  for (size_t i = 0; i < config.resources.size(); ++i) {
    const ResourceConfig& rc = config.resources[i];
    const std::string path = Cat("configList[", i < indices.size() ? indices[i] : i, "]");
    const std::string& name = rc.resource_name;
    auto [it, inserted] = seen.emplace(name, FirstUse{path, rc.frontend});
    if (!inserted && it->second.frontend != rc.frontend) {
      // The kubelet would see the name twice: as a device plugin's extended resource and
      // as the DRA driver's (KEP-5004); each pod's request would go to one of them at random.
      f.Error(path + ".resourceName",
              Cat("\"", name, "\" is already served by the ", FrontendName(it->second.frontend),
                  " front end (", it->second.path,
                  "); a node serves a name through one front end: rename one of them"));
      continue;
    }
    if (!inserted) {
      f.Error(path + ".resourceName", Cat("\"", name, "\" already exists (", it->second.path, ")"));
      continue;
    }
    if (rc.frontend == Frontend::kDra) {
      const std::string label = DnsLabel(name);
      auto [other, fresh] = dra_labels.emplace(label, std::make_pair(path, name));
      if (!fresh) {
        f.Error(path + ".resourceName",
                Cat("\"", name, "\" and \"", other->second.second, "\" (", other->second.first,
                    ") both name DRA pool and DeviceClass \"", label,
                    "\" (names are lower-cased, '_' becomes '-', at most 63 characters): "
                    "rename one of them"));
      }
      continue;
    }
    if (!rc.pci_device_env) continue;  // sets no PCIDEVICE_ variable
    const std::string var = PciDeviceEnvName(rc.FullName());
    const std::string info = var + "_INFO";
    const auto taken = env_vars.count(var) != 0 ? env_vars.find(var) : env_vars.find(info);
    if (taken != env_vars.end()) {
      f.Error(path + ".resourceName",
              Cat("\"", Echo(name), "\" gives the same variable ", taken->first, " as ",
                  taken->second.first, " (", taken->second.second,
                  "); a container given both would get one of the two values: rename one of "
                  "them"));
    } else {
      env_vars.emplace(var, std::make_pair(path, rc.FullName()));
      env_vars.emplace(info, std::make_pair(path, rc.FullName()));
    }
  }
  return f.errors;
}

std::vector<std::string> TotalSlotProblems(const Config& config,
                                           const std::vector<size_t>& indices) {
  std::vector<std::string> problems;
  int64_t total = 0;
  for (size_t i = 0; i < config.resources.size(); ++i) {
    const int64_t slots = std::max<int64_t>(config.resources[i].rdma_hca_max, 0);
    if (total + slots <= kMaxTotalRdmaHcaMax) {
      total += slots;
      continue;
    }
    const size_t index = i < indices.size() ? indices[i] : i;
    problems.push_back(Cat("config: configList[", index, "].rdmaHcaMax: ", slots,
                           " slots would bring the entries before it from ", total, " to ",
                           total + slots, "; all entries together have at most ",
                           kMaxTotalRdmaHcaMax,
                           " (the plugin's memory grows with the slots: raise the DaemonSet's "
                           "memory limit before this bound)"));
  }
  return problems;
}

// Accepts "15b3", "15B3", "0x15b3"; returns "15b3", or "" when it is not a PCI ID.
std::string NormalizePciId(std::string_view v) {
  if (v.size() == 6 && (v.starts_with("0x") || v.starts_with("0X"))) v.remove_prefix(2);
  if (v.size() != 4) return "";
  std::string out;
  for (char c : v) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return "";
    out += absl::ascii_tolower(static_cast<unsigned char>(c));
  }
  return out;
}

absl::StatusOr<uint64_t> ParseMemlock(std::string_view text) {
  if (text == "unlimited") return kMemlockUnlimited;
  struct Suffix {
    std::string_view name;
    uint64_t base;
    int power;
  };
  constexpr Suffix kSuffixes[] = {{"Ki", 1024, 1}, {"Mi", 1024, 2}, {"Gi", 1024, 3},
                                  {"Ti", 1024, 4}, {"Pi", 1024, 5}, {"Ei", 1024, 6},
                                  {"k", 1000, 1},  {"M", 1000, 2},  {"G", 1000, 3},
                                  {"T", 1000, 4},  {"P", 1000, 5},  {"E", 1000, 6}};
  uint64_t multiplier = 1;
  // A decimal exponent ("1e9", "5E+10"), as a Kubernetes quantity allows: E alone is exa.
  int exponent = 0;
  if (const size_t e = text.find_first_of("eE");
      e != std::string_view::npos && e + 1 < text.size()) {
    std::string_view digits = text.substr(e + 1);
    if (digits.front() == '+') digits.remove_prefix(1);
    if (!digits.empty() && digits.size() <= 2 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      for (char c : digits) exponent = exponent * 10 + (c - '0');
      if (exponent > 18) return absl::InvalidArgumentError("is 2^63 bytes or more");
      text = text.substr(0, e);
      for (int i = 0; i < exponent; ++i) multiplier *= 10;
    }
  }
  for (const Suffix& s : kSuffixes) {
    if (exponent > 0) break;
    if (text.size() > s.name.size() && text.ends_with(s.name)) {
      text.remove_suffix(s.name.size());
      for (int i = 0; i < s.power; ++i) multiplier *= s.base;
      break;
    }
  }
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  auto digits = [](std::string_view d) {
    return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || !digits(whole) || !digits(fraction) ||
      (dot != std::string_view::npos && fraction.empty()) || fraction.size() > 18) {
    return absl::InvalidArgumentError("is not \"unlimited\" or a quantity");
  }
  // bytes = whole * multiplier + fraction * multiplier / 10^f, exactly, below 2^63. Each
  // product fits: whole <= 2^63 and fraction < 10^18 < 2^60, times at most 2^60.
  // A typedef: __extension__ (no -Wpedantic warning for __int128) takes no alias-declaration.
  __extension__ typedef unsigned __int128 u128;  // NOLINT(modernize-use-using)
  u128 scale = 1;
  for (size_t i = 0; i < fraction.size(); ++i) scale *= 10;
  u128 value = 0;
  for (char c : whole) {
    value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > (u128(1) << 63)) return absl::InvalidArgumentError("is 2^63 bytes or more");
  }
  u128 frac = 0;
  for (char c : fraction) frac = frac * 10 + static_cast<unsigned>(c - '0');
  const u128 frac_bytes = frac * multiplier;
  if (frac_bytes % scale != 0) return absl::InvalidArgumentError("is not a whole number of bytes");
  const u128 bytes = value * multiplier + frac_bytes / scale;
  if (bytes >= (u128(1) << 63)) return absl::InvalidArgumentError("is 2^63 bytes or more");
  if (bytes == 0) return absl::InvalidArgumentError("must be more than 0 bytes");
  return static_cast<uint64_t>(bytes);
}

std::string MemlockArg(uint64_t bytes) {
  return bytes == kMemlockUnlimited ? std::string("unlimited") : std::to_string(bytes);
}

std::string RoceValueText(const RoceValue& v) {
  return v.automatic ? std::string("auto") : std::to_string(v.value);
}

std::string_view EnvHintName(EnvHint h) {
  for (const auto& [name, e] : kEnvHints) {
    if (e == h) return name;
  }
  return "?";
}

std::string_view FrontendName(Frontend fe) {
  for (const auto& [name, e] : kFrontends) {
    if (e == fe) return name;
  }
  return "?";
}

std::string_view DeviceModelName(DeviceModel m) {
  for (const auto& [name, e] : kDeviceModels) {
    if (e == m) return name;
  }
  return "?";
}

Config Validate(const RawConfig& raw, Findings& f) {
  Config config;
  if (raw.periodic_update_interval) {
    const int64_t v = *raw.periodic_update_interval;
    if (v < 0) {
      f.Error("periodicUpdateInterval", Cat("must be >= 0 seconds, got ", v));
    } else if (v > kMaxPeriodicUpdateIntervalSeconds) {
      f.Error("periodicUpdateInterval", Cat("must be <= ", kMaxPeriodicUpdateIntervalSeconds,
                                            " seconds (one year), got ", v));
    } else {
      config.periodic_update_interval_seconds = v;
    }
  }
  if (raw.resources.empty()) {
    f.Error("configList", "no resources configuration found; add at least one entry");
  }
  for (const RawResource& r : raw.resources) {
    ResourceConfig rc;
    const size_t errors_before = f.errors.size();
    const std::string name = r.resource_name.value_or("");
    if (!GoResourceNameOk(name)) {
      f.Error(r.path + ".resourceName",
              name.empty() ? std::string("is missing or empty")
                           : Cat("\"", Echo(name),
                                 "\" contains invalid characters (allowed: letters, "
                                 "digits and '_')"));
    }
    ValidateFrontend(r, rc, f);
    ValidateEnvHints(r, rc, f);
    ValidateRoce(r, rc, f);
    ValidateMemlock(r, rc, f);
    rc.resource_name = name;
    if (r.resource_prefix && !r.resource_prefix->empty()) {
      rc.resource_prefix = *r.resource_prefix;
      if (auto p = DnsSubdomainProblem(rc.resource_prefix); !p.empty()) {
        f.Error(r.path + ".resourcePrefix",
                Cat("\"", rc.resource_prefix, "\" is not a DNS subdomain: ", p));
      }
    }
    if (f.errors.size() == errors_before) {
      if (auto p = ExtendedResourceNameProblem(rc.FullName()); !p.empty()) {
        f.Error(r.path, Cat("the kubelet would reject resource name \"", rc.FullName(), "\": ", p));
      }
    }
    rc.rdma_hca_max = r.rdma_hca_max.value_or(0);
    if (!r.rdma_hca_max && r.rdma_hca_max_present) {
      // A value of the wrong type: its error is said already, not "is not set (0)" too.
    } else if (rc.rdma_hca_max == 0) {
      // Valid (the Go plugin takes it), but the pool then has nothing to give a pod.
      f.Warn(r.path + ".rdmaHcaMax",
             Cat(r.rdma_hca_max ? "is 0" : "is not set (0)",
                 ": no slot is advertised and no pod asking for this resource is ever "
                 "admitted; set the shares per HCA, e.g. 1000"));
    } else if (rc.rdma_hca_max < 0) {
      f.Error(r.path + ".rdmaHcaMax", Cat("must be >= 0, got ", rc.rdma_hca_max));
    } else if (rc.rdma_hca_max > kMaxRdmaHcaMax) {
      f.Error(r.path + ".rdmaHcaMax",
              Cat("must be <= ", kMaxRdmaHcaMax,
                  " (a larger ListAndWatch message exceeds the kubelet's 4 MiB limit), "
                  "got ",
                  rc.rdma_hca_max));
    }
    if (rc.frontend == Frontend::kDra && rc.device_model == DeviceModel::kSlots &&
        rc.rdma_hca_max > kMaxDraSlotDevices) {
      f.Error(r.path + ".rdmaHcaMax",
              Cat("must be <= ", kMaxDraSlotDevices,
                  " with deviceModel \"slots\" (one device "
                  "per slot in the ResourceSlices), got ",
                  rc.rdma_hca_max, "; use deviceModel \"perHca\" on Kubernetes 1.36+"));
    }
    if (rc.frontend == Frontend::kDra && rc.device_model == DeviceModel::kAuto &&
        rc.rdma_hca_max > kMaxDraSlotDevices) {
      f.Warn(r.path + ".rdmaHcaMax",
             Cat(rc.rdma_hca_max,
                 " shares: where the API server lacks consumable capacity "
                 "(1.34, 1.35 defaults), deviceModel \"auto\" publishes slots, "
                 "at most ",
                 kMaxDraSlotDevices));
    }
    if (r.selectors.Empty() && r.devices.empty()) {
      // "selectors" with nothing understood in it has its unknown keys named already.
      if (!r.selectors_given && r.selectors_present) {
        f.Error(r.path + ".selectors",
                "is empty, so it selects nothing; add vendors, deviceIDs, drivers, ifNames, "
                "linkTypes or pciAddresses");
      } else if (!r.selectors_given) {
        f.Error(r.path, "neither \"selectors\" nor \"devices\" is set; add \"selectors\"");
      }
    } else if (!r.selectors.Empty() && !r.devices.empty()) {
      f.Error(r.path,
              "cannot specify both \"selectors\" and \"devices\"; move \"devices\" "
              "into selectors.ifNames");
    } else if (!r.devices.empty()) {
      f.Warn(r.path + ".devices", "deprecated; use selectors.ifNames instead");
      for (size_t i = 0; i < r.devices.size(); ++i) {
        if (auto p = IfNameProblem(r.devices[i]); !p.empty()) {
          f.Error(Cat(r.path, ".devices[", i, "]"), Cat("\"", r.devices[i], "\" ", p));
        }
      }
      rc.selectors.if_names = r.devices;
    } else {
      ValidateSelectors(r.selectors, r.path + ".selectors", rc.selectors, f);
    }
    config.resources.push_back(std::move(rc));
  }
  return config;
}

}  // namespace rdmadp::config
