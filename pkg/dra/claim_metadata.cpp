#include "pkg/dra/claim_metadata.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "pkg/cdi/spec_files.h"
#include "pkg/config/k8s_names.h"
#include "pkg/fd/files.h"
#include "pkg/kube/json_read.h"
#include "pkg/pool/pod_env.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {
namespace {

using nlohmann::json;

// The annotation the ResourceClaim controller puts on a claim it makes from a template
// (k8s.io/api/resource/v1 PodResourceClaimAnnotation).
constexpr char kPodClaimNameAnnotation[] = "resource.kubernetes.io/pod-claim-name";
constexpr char kMetadataSubDir[] = "dra-device-metadata";

std::string UidProblem(std::string_view uid) {
  if (uid.empty() || uid.size() > 128) return "must be 1 to 128 characters";
  for (char c : uid) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') {
      return Cat("invalid character '", c, "'");
    }
  }
  return "";
}

std::string ClaimDir(const MetadataDirs& dirs, std::string_view ns, std::string_view name) {
  return Cat(dirs.data_dir, "/", kMetadataSubDir, "/", ns, "_", name);
}

std::string SpecName(const MetadataDirs& dirs, std::string_view uid, std::string_view request) {
  return Cat(dirs.driver, "_metadata_", uid, "_", request, ".json");
}

absl::Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return absl::OkStatus();
  return absl::InternalError(Cat("cannot create ", path, ": ", std::strerror(errno)));
}

// Each request's devices, in the order of the claim's results; requests in first-seen order.
std::vector<std::pair<std::string, std::vector<PreparedDevice>>> ByRequest(
    const std::vector<PreparedDevice>& devices) {
  std::vector<std::pair<std::string, std::vector<PreparedDevice>>> out;
  for (const auto& d : devices) {
    const std::string& request = d.request_names.empty() ? d.request_ref : d.request_names[0];
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == request; });
    if (it == out.end()) it = out.insert(out.end(), {request, {}});
    it->second.push_back(d);
  }
  return out;
}

// The HCAs of `devices`, each once, in order.
std::vector<sysfs::PciFunction> Functions(const std::vector<PreparedDevice>& devices,
                                          std::optional<config::EnvHint> hinted = std::nullopt) {
  std::vector<sysfs::PciFunction> out;
  std::set<std::string> seen;
  for (const auto& d : devices) {
    if (d.published == nullptr) continue;
    const auto& hints = d.published->hints;
    if (hinted && std::find(hints.begin(), hints.end(), *hinted) == hints.end()) continue;
    for (const auto& fn : *d.published->functions) {
      if (seen.insert(fn.address).second) out.push_back(fn);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<ClaimRef> ReadClaimRef(const json& claim) {
  const auto& meta = kube::Obj(claim, "metadata");
  ClaimRef ref{kube::Str(meta, "namespace"), kube::Str(meta, "name"), kube::Str(meta, "uid"),
               std::nullopt};
  const auto& annotations = kube::Obj(meta, "annotations");
  if (annotations.is_object() && annotations.contains(kPodClaimNameAnnotation)) {
    ref.pod_claim_name = kube::Str(annotations, kPodClaimNameAnnotation);
  }
  // The first problem, naming its field.
  const std::pair<std::string, std::string> checks[] = {
      {"metadata.namespace", config::DnsSubdomainProblem(ref.namespace_)},
      {"metadata.name", config::DnsSubdomainProblem(ref.name)},
      {"metadata.uid", UidProblem(ref.uid)},
      {Cat("metadata.annotations[", kPodClaimNameAnnotation, "]"),
       ref.pod_claim_name ? config::DnsSubdomainProblem(*ref.pod_claim_name) : ""},
  };
  std::string problem;
  for (const auto& [field, p] : checks) {
    if (problem.empty() && !p.empty()) problem = Cat(field, ": ", p);
  }
  if (!problem.empty()) return absl::InvalidArgumentError(Cat("ResourceClaim ", problem));
  return ref;
}

std::string MetadataContainerPath(const ClaimRef& claim, std::string_view driver,
                                  std::string_view request) {
  const bool templated = claim.pod_claim_name && !claim.pod_claim_name->empty();
  return Cat(kMetadataContainerDir, templated ? "/resourceclaimtemplates/" : "/resourceclaims/",
             templated ? *claim.pod_claim_name : claim.name, "/", request, "/", driver,
             "-metadata.json");
}

std::string MetadataFile(const ClaimRef& claim, std::string_view driver,
                         std::string_view request_ref, const std::vector<PreparedDevice>& devices) {
  // k8s.io/dynamic-resource-allocation api/metadata/v1alpha1 DeviceMetadata, as
  // kubeletplugin/metadata.go buildDeviceMetadata fills it (generation 1 at Prepare).
  json out_devices = json::array();
  for (const auto& d : devices) {
    json device = {{"driver", std::string(driver)}, {"pool", d.pool}, {"name", d.device}};
    if (d.published != nullptr && !d.published->attributes.empty()) {
      device["attributes"] = d.published->attributes;
    }
    out_devices.push_back(std::move(device));
  }
  json doc = {{"kind", "DeviceMetadata"},
              {"apiVersion", "metadata.resource.k8s.io/v1alpha1"},
              {"metadata",
               {{"name", claim.name},
                {"namespace", claim.namespace_},
                {"uid", claim.uid},
                {"generation", 1}}}};
  if (claim.pod_claim_name) doc["podClaimName"] = *claim.pod_claim_name;
  doc["requests"] = json::array({{{"name", std::string(request_ref)}, {"devices", out_devices}}});
  return doc.dump(2) + "\n";
}

std::map<std::string, std::string> RequestEnv(const ClaimRef& claim, std::string_view request,
                                              const std::vector<PreparedDevice>& request_devices,
                                              const std::vector<PreparedDevice>& claim_devices) {
  std::map<std::string, std::string> env;
  for (config::EnvHint hint : {config::EnvHint::kNccl, config::EnvHint::kUcx}) {
    env.merge(pool::HintEnv(Functions(claim_devices, hint), {hint}));
  }
  const auto functions = Functions(request_devices);
  if (functions.empty()) return env;
  const std::string name = pool::PciDeviceEnvName(
      Cat(claim.pod_claim_name ? *claim.pod_claim_name : claim.name, "/", request));
  std::string addresses;
  for (const auto& fn : functions) Append(addresses, addresses.empty() ? "" : ",", fn.address);
  env[name] = addresses;
  std::string info = pool::DeviceInfoJson(functions);
  if (info.size() <= pool::kMaxInfoBytes) env[name + "_INFO"] = std::move(info);
  return env;
}

absl::Status WriteClaimMetadata(const MetadataDirs& dirs, const ClaimRef& claim,
                                std::vector<PreparedDevice>& devices) {
  const auto requests = ByRequest(devices);
  if (requests.empty()) return absl::OkStatus();
  const std::string claim_dir = ClaimDir(dirs, claim.namespace_, claim.name);
  for (const std::string& dir : {Cat(dirs.data_dir, "/", kMetadataSubDir), claim_dir}) {
    if (auto s = MakeDir(dir); !s.ok()) return s;
  }
  for (const auto& [request, request_devices] : requests) {
    if (auto p = config::DnsLabelProblem(request); !p.empty()) {
      return absl::InvalidArgumentError(Cat("request name \"", request, "\": ", p));
    }
    const std::string dir = Cat(claim_dir, "/", request);
    if (auto s = MakeDir(dir); !s.ok()) return s;
    // Not fsynced: every Prepare (a replay after a crash or reboot too) writes it again.
    if (auto s = cdi::WriteFileAtomically(
            dir, "metadata.json",
            MetadataFile(claim, dirs.driver, request_devices.front().request_ref, request_devices),
            /*durable=*/false);
        !s.ok()) {
      return s;
    }
    json env = json::array();
    for (const auto& [k, v] : RequestEnv(claim, request, request_devices, devices)) {
      env.push_back(Cat(k, "=", v));
    }
    const std::string device_name = Cat(claim.uid, "_", request);
    json edits = {
        {"mounts",
         json::array({{{"hostPath", Cat(dir, "/metadata.json")},
                       {"containerPath", MetadataContainerPath(claim, dirs.driver, request)},
                       {"options", {"ro", "bind"}}}})}};
    if (!env.empty()) edits["env"] = std::move(env);
    const json spec = {
        {"cdiVersion", "0.5.0"},
        {"kind", Cat(dirs.driver, "/metadata")},
        {"devices", json::array({{{"name", device_name}, {"containerEdits", edits}}})}};
    if (auto s = cdi::WriteFileAtomically(dirs.cdi_dir, SpecName(dirs, claim.uid, request),
                                          spec.dump(2) + "\n", /*durable=*/false);
        !s.ok()) {
      return s;
    }
    // The first device of the request carries it (the runtime applies it once).
    for (auto& d : devices) {
      if (!d.request_names.empty() && d.request_names[0] == request) {
        d.cdi_ids.push_back(Cat(dirs.driver, "/metadata=", device_name));
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status RemoveClaimMetadata(const MetadataDirs& dirs, const std::string& namespace_,
                                 const std::string& name, const std::string& uid) {
  if (!config::DnsSubdomainProblem(namespace_).empty() ||
      !config::DnsSubdomainProblem(name).empty() || !UidProblem(uid).empty()) {
    return absl::OkStatus();  // never written: Prepare refuses such names
  }
  std::string failed;
  auto remove = [&](const std::string& path, bool dir) {
    if ((dir ? ::rmdir(path.c_str()) : ::unlink(path.c_str())) != 0 && errno != ENOENT) {
      Append(failed, failed.empty() ? "" : "; ", path, ": ", std::strerror(errno));
    }
  };
  const std::string claim_dir = ClaimDir(dirs, namespace_, name);
  for (const auto& request : fd::ListDir(claim_dir)) {
    for (const auto& file : fd::ListDir(Cat(claim_dir, "/", request))) {
      remove(Cat(claim_dir, "/", request, "/", file), false);
    }
    remove(Cat(claim_dir, "/", request), true);
  }
  remove(claim_dir, true);
  const std::string prefix = Cat(dirs.driver, "_metadata_", uid, "_");
  for (const auto& file : fd::ListDir(dirs.cdi_dir)) {
    if (file.starts_with(prefix) && file.ends_with(".json")) {
      remove(Cat(dirs.cdi_dir, "/", file), false);
    }
  }
  if (failed.empty()) return absl::OkStatus();
  return absl::InternalError(Cat("cannot remove device metadata: ", failed));
}

}  // namespace rdmadp::dra
