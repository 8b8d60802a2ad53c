#include "pkg/cdi/cdi_spec.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "pkg/text/cat.h"
#include "pkg/text/json.h"

namespace rdmadp::cdi {
namespace {

bool IsLetter(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)); }
bool IsAlnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

uint32_t Fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

std::string NameProblem(std::string_view name, bool vendor) {
  if (name.size() < 2) {
    return "must be at least 2 characters: every released CDI library (up to v1.1.0) panics on "
           "a one-character name, and with it every CDI request on the node";
  }
  if (!IsLetter(name.front())) return "must start with a letter";
  if (!IsAlnum(name.back())) return "must end with a letter or digit";
  for (char c : name) {
    if (!IsAlnum(c) && c != '_' && c != '-' && !(vendor && c == '.')) {
      return Cat("invalid character '", c, "'");
    }
  }
  return "";
}

}  // namespace

std::string VendorProblem(std::string_view name) { return NameProblem(name, true); }
std::string ClassProblem(std::string_view name) { return NameProblem(name, false); }

std::vector<std::string> KindProblems(const config::Config& config,
                                      const std::vector<size_t>& indices) {
  std::vector<std::string> out;
  for (size_t i = 0; i < config.resources.size(); ++i) {
    const auto& rc = config.resources[i];
    const size_t index = i < indices.size() ? indices[i] : i;
    if (auto p = VendorProblem(rc.resource_prefix); !p.empty()) {
      out.push_back(Cat("config: configList[", index, "].resourcePrefix: \"", rc.resource_prefix,
                        "\" cannot be a CDI vendor (--use-cdi): ", p));
    }
    if (auto p = ClassProblem(rc.resource_name); !p.empty()) {
      out.push_back(Cat("config: configList[", index, "].resourceName: \"", rc.resource_name,
                        "\" cannot be a CDI class (--use-cdi): ", p));
    }
  }
  return out;
}

std::string DeviceNameProblem(std::string_view name) {
  if (name.empty()) return "empty name";
  if (!IsAlnum(name.front()) || !IsAlnum(name.back())) {
    return "must start and end with a letter or digit";
  }
  for (char c : name) {
    if (!IsAlnum(c) && c != '_' && c != '-' && c != '.' && c != ':') {
      return Cat("invalid character '", c, "'");
    }
  }
  return "";
}

std::string Kind(const config::ResourceConfig& resource) {
  return Cat(resource.resource_prefix, "/", resource.resource_name);
}

std::string SpecFileName(const config::ResourceConfig& resource) {
  return Cat("k8s-rdma-shared-dp_", resource.resource_prefix, "_", resource.resource_name, ".json");
}

std::string AnnotationKey(const config::ResourceConfig& resource) {
  std::string name = Cat("rdmadp_", resource.resource_prefix, "_", resource.resource_name);
  if (name.size() > 63) {
    char hash[10];
    std::snprintf(hash, sizeof(hash), "_%08x", Fnv1a(resource.FullName()));
    name = name.substr(0, 63 - 9) + hash;
  }
  return Cat(kAnnotationPrefix, name);
}

std::string MemlockHookJson(std::string_view hook_path, uint64_t bytes) {
  std::string out = "{\"hookName\": \"createRuntime\", \"path\": ";
  AppendJsonString(out, hook_path);
  out += ", \"args\": [\"rdmadp-memlock-hook\", ";
  AppendJsonString(out, config::MemlockArg(bytes));
  return out + "]}";
}

std::string SpecJson(const pool::PoolSnapshot& snapshot, std::string_view memlock_hook) {
  std::string out = Cat("{\n  \"cdiVersion\": \"", kCdiVersion, "\",\n  \"kind\": ");
  AppendJsonString(out, Kind(snapshot.resource()));
  // The pool's env (pool/pod_env.h) for every container that gets any of its devices,
  // sorted by name: the variables the Allocate answer carries but those where the pod's own
  // value must win (allocate_only_env: a CDI edit replaces it); and its memlock hook.
  // perHca: none, as a container gets some of the pool's HCAs, which only its Allocate
  // answer knows (and carries).
  const auto& envs = snapshot.container_response().envs();
  const auto& memlock = snapshot.resource().memlock;
  const bool hook = memlock.has_value() && !memlock_hook.empty();
  std::vector<std::string> lines;
  for (const auto& [name, value] : envs) {
    if (!snapshot.allocate_only_env().contains(name) && !snapshot.per_hca()) {
      lines.push_back(Cat(name, "=", value));
    }
  }
  if (!lines.empty() || hook) {
    std::sort(lines.begin(), lines.end());
    out += ",\n  \"containerEdits\": {";
    if (!lines.empty()) out += "\"env\": [";
    for (size_t i = 0; i < lines.size(); ++i) {
      out += i == 0 ? "\n    " : ",\n    ";
      AppendJsonString(out, lines[i]);
    }
    if (!lines.empty()) out += "\n  ]";
    if (hook)
      Append(out, lines.empty() ? "" : ", ", "\"hooks\": [",
             MemlockHookJson(memlock_hook, *memlock), "]");
    out += "}";
  }
  out += ",\n  \"devices\": [";
  bool first_device = true;
  for (const auto& hca : snapshot.hcas()) {
    const sysfs::PciFunction& fn = hca.function;
    out += first_device ? "\n" : ",\n";
    first_device = false;
    out += "    {\n      \"name\": ";
    AppendJsonString(out, fn.address);
    out += ",\n      \"containerEdits\": {\n        \"deviceNodes\": [";
    std::vector<std::string> nodes;
    for (const auto& name : fn.char_devices) nodes.push_back(Cat(pool::kCharDevDir, name));
    nodes.push_back(Cat(pool::kCharDevDir, "rdma_cm"));
    for (size_t i = 0; i < nodes.size(); ++i) {
      out += i == 0 ? "\n" : ",\n";
      out += "          {\"path\": ";
      AppendJsonString(out, nodes[i]);
      out += ", \"hostPath\": ";
      AppendJsonString(out, nodes[i]);
      out += ", \"permissions\": \"rwm\"}";
    }
    out += "\n        ]\n      }\n    }";
  }
  out += first_device ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace rdmadp::cdi
