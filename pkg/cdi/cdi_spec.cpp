#include "pkg/cdi/cdi_spec.h"

#include <cstdio>

#include "absl/strings/ascii.h"
#include "pkg/text/cat.h"
#include "pkg/text/json.h"

namespace rdmadp::cdi {
namespace {

bool IsLetter(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)); }
bool IsAlnum(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)); }

std::string Sanitize(std::string_view in) {
  std::string out;
  for (char c : in) out += IsAlnum(c) || c == '_' || c == '-' || c == '.' ? c : '-';
  if (out.empty() || !IsLetter(out.front())) out.insert(out.begin(), 'r');
  while (!out.empty() && !IsAlnum(out.back())) out.pop_back();
  return out;
}

uint32_t Fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

}  // namespace

std::string VendorOrClassProblem(std::string_view name) {
  if (name.empty()) return "empty name";
  if (!IsLetter(name.front())) return "must start with a letter";
  if (!IsAlnum(name.back())) return "must end with a letter or digit";
  for (char c : name) {
    if (!IsAlnum(c) && c != '_' && c != '-' && c != '.') return Cat("invalid character '", c, "'");
  }
  return "";
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
  return Cat(Sanitize(resource.resource_prefix), "/", Sanitize(resource.resource_name));
}

std::string SpecFileName(const config::ResourceConfig& resource) {
  return Cat("k8s-rdma-shared-dp_", resource.resource_prefix, "_", resource.resource_name, ".json");
}

std::string AnnotationKey(const config::ResourceConfig& resource) {
  std::string name = Cat("rdmadp_", resource.resource_name);
  if (name.size() > 63) {
    char hash[10];
    std::snprintf(hash, sizeof(hash), "_%08x", Fnv1a(resource.FullName()));
    name = name.substr(0, 63 - 9) + hash;
  }
  return Cat(kAnnotationPrefix, name);
}

std::string SpecJson(const pool::PoolSnapshot& snapshot) {
  std::string out = Cat("{\n  \"cdiVersion\": \"", kCdiVersion, "\",\n  \"kind\": ");
  AppendJsonString(out, Kind(snapshot.resource()));
  out += ",\n  \"devices\": [";
  bool first_device = true;
  for (const auto& fn : snapshot.hcas()) {
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
