#include "pkg/dra/prepare/claim_metadata.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <set>

#include "pkg/cdi/spec_files.h"
#include "pkg/config/k8s_names.h"
#include "pkg/fd/files.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/kube/json_read.h"
#include "pkg/log/log.h"
#include "pkg/pool/pod_env.h"
#include "pkg/text/cat.h"
#include "pkg/text/json.h"

namespace rdmadp::dra {
namespace {

using nlohmann::json;

// The annotation the ResourceClaim controller puts on a claim it makes from a template
// (k8s.io/api/resource/v1 PodResourceClaimAnnotation).
constexpr char kPodClaimNameAnnotation[] = "resource.kubernetes.io/pod-claim-name";
// The annotation kube-scheduler puts on the claim it makes for a pod's extended-resource
// requests (k8s.io/api/resource/v1 ExtendedResourceClaimAnnotation; its one valid value is
// "true"; pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go).
constexpr char kExtendedResourceClaimAnnotation[] =
    "resource.kubernetes.io/extended-resource-claim";
constexpr char kMetadataSubDir[] = "dra-device-metadata";
constexpr char kMetadataFile[] = "metadata.json";
// How many directory levels RemoveAt enters below the one it removes. We write two (the
// claim's and its requests'); a deeper tree was planted, and is removed all the same, but
// recursion (an open descriptor a level) stays bounded.
constexpr int kMaxRemoveDepth = 32;
// A metadata file of the layout before UID keying is read to find its UID; ours are a few
// KiB.
constexpr size_t kMaxLegacyFileBytes = 1 << 20;

// Kubernetes UIDs are 36-character UUIDs. 64 keeps the longest spec file name we make
// (a driver name, at most 63 characters for Kubernetes, "_metadata_", UID, '_', a
// 63-character request, ".json", and the temp file's 8 more) within NAME_MAX.
std::string UidProblem(std::string_view uid) {
  if (uid.empty() || uid.size() > 64) return "must be 1 to 64 characters";
  for (char c : uid) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') {
      return Cat("invalid character '", c, "'");
    }
  }
  return "";
}

std::string ClaimDir(const MetadataDirs& dirs, std::string_view uid) {
  return Cat(dirs.data_dir, "/", kMetadataSubDir, "/", uid);
}

std::string SpecName(const MetadataDirs& dirs, std::string_view uid, std::string_view request) {
  return Cat(dirs.driver, "_metadata_", uid, "_", request, ".json");
}

// parent/name as a directory, never through a symlink at `name`. Fails with ELOOP or
// ENOTDIR (the kernel says either for a symlink) when something else is there.
int OpenDirAt(int parent, const std::string& name) {
  return ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

bool NotADirectory(int err) { return err == ELOOP || err == ENOTDIR; }

// The names in the open directory `dir` other than "." and ".."; empty when unreadable.
std::vector<std::string> Names(int dir) {
  std::vector<std::string> names;
  const int own = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);  // closedir closes it, not `dir`
  if (own < 0) return names;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(own), ::closedir);
  if (!d) {
    ::close(own);
    return names;
  }
  ::rewinddir(d.get());
  while (const dirent* e = ::readdir(d.get())) {
    const std::string_view entry = e->d_name;
    if (entry != "." && entry != "..") names.emplace_back(entry);
  }
  return names;
}

void AddFailure(std::string& failed, const std::string& path, std::string_view why) {
  Append(failed, failed.empty() ? "" : "; ", path, ": ", why);
}

// Removes parent/name as itself: a symlink, file or anything else that is not a directory
// is unlinked (never followed); a directory is emptied the same way, then removed. Nothing
// there is fine. `path` names it in `failed`.
void RemoveAt(int parent, const std::string& name, const std::string& path, int depth,
              std::string& failed) {
  UniqueFd dir(OpenDirAt(parent, name));
  if (!dir.Valid()) {
    const int err = errno;
    if (err == ENOENT) return;
    if (!NotADirectory(err)) return AddFailure(failed, path, std::strerror(err));
    if (::unlinkat(parent, name.c_str(), 0) != 0 && errno != ENOENT) {
      AddFailure(failed, path, std::strerror(errno));
    }
    return;
  }
  if (depth <= 0) {
    return AddFailure(failed, path, "nested deeper than the plugin writes; not removed");
  }
  for (const auto& entry : Names(dir.Get())) {
    RemoveAt(dir.Get(), entry, Cat(path, "/", entry), depth - 1, failed);
  }
  if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    AddFailure(failed, path, std::strerror(errno));
  }
}

// Opens parent/name as a directory, made (0755) when missing. Anything else there (a
// symlink, a file) is removed as itself first: a link planted in our tree never takes a
// write elsewhere, and a stray file never blocks every later Prepare.
absl::Status MakeDirAt(int parent, const std::string& name, const std::string& path,
                       UniqueFd& out) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (::mkdirat(parent, name.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(Cat("cannot create ", path, ": ", std::strerror(errno)));
    }
    out.Reset(OpenDirAt(parent, name));
    if (out.Valid()) return absl::OkStatus();
    const int err = errno;
    if (attempt > 0 || !NotADirectory(err)) {
      return absl::InternalError(Cat("cannot open directory ", path, ": ", std::strerror(err)));
    }
    if (::unlinkat(parent, name.c_str(), 0) != 0 && errno != ENOENT) {
      return absl::InternalError(
          Cat("cannot remove ", path, ", which is not a directory: ", std::strerror(errno)));
    }
  }
  return absl::InternalError(Cat("cannot open directory ", path));
}

// Replaces dir/name with `content` atomically: a new temp file of our own (O_EXCL, so
// nothing planted under its name is written through, nor another instance's during a rolling
// update), then renameat, which replaces a symlink at `name` rather than following it. A
// directory at `name` is removed as itself first. Not fsynced: every Prepare (a replay after
// a crash or reboot too) writes it again. `path` names dir/name in errors.
absl::Status WriteFileAt(int dir, const std::string& name, const std::string& content,
                         const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp;
  UniqueFd file;
  for (int attempt = 0; attempt < 16 && !file.Valid(); ++attempt) {
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    tmp =
        Cat(".", name, ".", ::getpid(), "-", static_cast<int64_t>(now), "-", counter.fetch_add(1));
    file.Reset(
        ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!file.Valid() && errno != EEXIST) break;
  }
  if (!file.Valid()) {
    return absl::UnavailableError(
        Cat(path, ": cannot create a temp file beside it: ", std::strerror(errno)));
  }
  ::fchmod(file.Get(), 0644);  // whatever the umask: runtimes and containers read it
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(file.Get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::unlinkat(dir, tmp.c_str(), 0);
      return absl::UnavailableError(Cat(path, ": write failed: ", std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  file.Reset();
  int renamed = ::renameat(dir, tmp.c_str(), dir, name.c_str());
  if (renamed != 0 && (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST)) {
    // A directory where the file belongs: removed as itself, then the rename again.
    std::string failed;
    RemoveAt(dir, name, path, kMaxRemoveDepth, failed);
    if (!failed.empty()) {
      ::unlinkat(dir, tmp.c_str(), 0);
      return absl::UnavailableError(Cat(path, " is a directory, and removing it failed: ", failed));
    }
    renamed = ::renameat(dir, tmp.c_str(), dir, name.c_str());
  }
  if (renamed != 0) {
    const int err = errno;
    ::unlinkat(dir, tmp.c_str(), 0);
    return absl::UnavailableError(Cat(path, ": rename failed: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

// At most `max` bytes of the open file `fd`; nullopt when it cannot be read or is larger.
std::optional<std::string> ReadAll(int fd, size_t max) {
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max) return std::nullopt;
  }
}

// The layout before UID keying put a claim's files in <namespace>_<name>. Such a directory
// is removed only when it holds metadata and every request's file names `uid`: a claim
// re-created under the same name and prepared by the old version keeps its files.
void RemoveLegacyDir(int metadata_dir, const std::string& metadata_path, const std::string& legacy,
                     const std::string& uid, std::string& failed) {
  UniqueFd dir(OpenDirAt(metadata_dir, legacy));
  if (!dir.Valid()) return;  // none, or not a directory: nothing of this claim to judge
  const auto requests = Names(dir.Get());
  for (const auto& request : requests) {
    UniqueFd request_dir(OpenDirAt(dir.Get(), request));
    if (!request_dir.Valid()) return;
    // O_NONBLOCK: a FIFO planted under the file's name must not hold the worker.
    UniqueFd file(
        ::openat(request_dir.Get(), kMetadataFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (!file.Valid() || ::fstat(file.Get(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    const auto text = ReadAll(file.Get(), kMaxLegacyFileBytes);
    if (!text) return;
    const json doc = json::parse(*text, nullptr, false);
    if (kube::Str(kube::Obj(doc, "metadata"), "uid") != uid) return;
  }
  if (requests.empty()) return;
  RemoveAt(metadata_dir, legacy, Cat(metadata_path, "/", legacy), kMaxRemoveDepth, failed);
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

// The one resource the request's devices belong to ("" when they are of several: a class
// of ours selects one entry's devices, so only a hand-made class gives that).
std::string ResourceOf(const std::vector<PreparedDevice>& devices) {
  std::string resource;
  for (const auto& d : devices) {
    if (d.published == nullptr) continue;
    if (!resource.empty() && d.published->resource != resource) return "";
    resource = d.published->resource;
  }
  return resource;
}

std::string RequestEnvName(const ClaimRef& claim, std::string_view request,
                           const std::vector<PreparedDevice>& request_devices) {
  if (claim.extended_resource) {
    if (const std::string resource = ResourceOf(request_devices); !resource.empty()) {
      return pool::PciDeviceEnvName(resource);
    }
  }
  const bool templated = claim.pod_claim_name && !claim.pod_claim_name->empty();
  return pool::ClaimPciDeviceEnvName(templated ? *claim.pod_claim_name : claim.name, request);
}

}  // namespace

absl::StatusOr<ClaimRef> ReadClaimRef(const json& claim) {
  const auto& meta = kube::Obj(claim, "metadata");
  ClaimRef ref{kube::Str(meta, "namespace"), kube::Str(meta, "name"), kube::Str(meta, "uid"),
               std::nullopt, false};
  const auto& annotations = kube::Obj(meta, "annotations");
  if (annotations.is_object() && annotations.contains(kPodClaimNameAnnotation)) {
    ref.pod_claim_name = kube::Str(annotations, kPodClaimNameAnnotation);
  }
  ref.extended_resource =
      annotations.is_object() && kube::Str(annotations, kExtendedResourceClaimAnnotation) == "true";
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
                                              const std::vector<PreparedDevice>& claim_devices,
                                              std::string* info_left_out) {
  if (info_left_out != nullptr) info_left_out->clear();
  std::map<std::string, std::string> env;
  // A scheduler-made claim has one request per container and resource, and a container gets
  // only its own requests' devices: its hints are its request's, as the device plugin's
  // Allocate gives each container its pool's. A claim the pod names is one unit.
  const auto& hinted = claim.extended_resource ? request_devices : claim_devices;
  for (config::EnvHint hint : {config::EnvHint::kNccl, config::EnvHint::kUcx}) {
    env.merge(pool::HintEnv(Functions(hinted, hint), {hint}));
  }
  const auto functions = Functions(request_devices);
  if (functions.empty()) return env;
  // `pciDeviceEnv: false` on the request's entry (one resource per request): the hints only.
  const bool pci_device_env =
      std::all_of(request_devices.begin(), request_devices.end(), [](const PreparedDevice& d) {
        return d.published == nullptr || d.published->pci_device_env;
      });
  if (!pci_device_env) return env;
  const std::string name = RequestEnvName(claim, request, request_devices);
  std::string addresses;
  for (const auto& fn : functions) Append(addresses, addresses.empty() ? "" : ",", fn.address);
  env[name] = addresses;
  std::string info = pool::DeviceInfoJson(functions);
  if (info.size() <= pool::kMaxInfoBytes) {
    env[name + "_INFO"] = std::move(info);
  } else if (info_left_out != nullptr) {
    *info_left_out = Cat("ResourceClaim ", claim.namespace_, "/", QuotedExcerpt(claim.name),
                         " request ", QuotedExcerpt(request), ": ", name,
                         "_INFO is left out of the containers' environment: its JSON for ",
                         functions.size(), " HCA(s) is ", info.size(), " bytes, over the ",
                         pool::kMaxInfoBytes, "-byte limit; ", name, " still lists every HCA");
  }
  return env;
}

absl::Status WriteClaimMetadata(const MetadataDirs& dirs, const ClaimRef& claim,
                                std::vector<PreparedDevice>& devices) {
  const auto requests = ByRequest(devices);
  if (requests.empty()) return absl::OkStatus();
  if (devices.size() > kMaxAllocationResults) {
    return absl::InvalidArgumentError(
        Cat("ResourceClaim ", claim.namespace_, "/", claim.name, " has ", devices.size(),
            " results for this driver; the API server stores at most ", kMaxAllocationResults));
  }
  // Every name below becomes a path component: all are checked before anything is made.
  if (auto p = UidProblem(claim.uid); !p.empty()) {
    return absl::InvalidArgumentError(Cat("ResourceClaim metadata.uid: ", p));
  }
  for (const auto& entry : requests) {
    if (auto p = config::DnsLabelProblem(entry.first); !p.empty()) {
      return absl::InvalidArgumentError(Cat("request name \"", entry.first, "\": ", p));
    }
  }
  // The data directory is the plugin's own (configured, and may be reached through a
  // symlink on some hosts); below it nothing is followed.
  UniqueFd data(::open(dirs.data_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!data.Valid()) {
    return absl::InternalError(Cat("cannot open ", dirs.data_dir, ": ", std::strerror(errno)));
  }
  const std::string claim_path = ClaimDir(dirs, claim.uid);
  UniqueFd metadata_dir;
  UniqueFd claim_dir;
  if (auto s = MakeDirAt(data.Get(), kMetadataSubDir, Cat(dirs.data_dir, "/", kMetadataSubDir),
                         metadata_dir);
      !s.ok()) {
    return s;
  }
  if (auto s = MakeDirAt(metadata_dir.Get(), claim.uid, claim_path, claim_dir); !s.ok()) {
    return s;
  }
  for (const auto& [request, request_devices] : requests) {
    const std::string request_path = Cat(claim_path, "/", request);
    UniqueFd request_dir;
    if (auto s = MakeDirAt(claim_dir.Get(), request, request_path, request_dir); !s.ok()) {
      return s;
    }
    const std::string file_path = Cat(request_path, "/", kMetadataFile);
    if (auto s = WriteFileAt(
            request_dir.Get(), kMetadataFile,
            MetadataFile(claim, dirs.driver, request_devices.front().request_ref, request_devices),
            file_path);
        !s.ok()) {
      return s;
    }
    json env = json::array();
    std::string info_left_out;
    for (const auto& [k, v] :
         RequestEnv(claim, request, request_devices, devices, &info_left_out)) {
      env.push_back(Cat(k, "=", v));
    }
    // As the device plugin says it (H10 at 050f44e: a DRA Prepare dropped it without a line).
    if (!info_left_out.empty())
      log::Warn(info_left_out, {.resource = dirs.driver, .hca = {}, .event = "dra"});
    const std::string device_name = Cat(claim.uid, "_", request);
    json edits = {
        {"mounts",
         json::array({{{"hostPath", file_path},
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
  if (!UidProblem(uid).empty()) return absl::OkStatus();  // never written: no such directory
  std::string failed;
  const std::string metadata_path = Cat(dirs.data_dir, "/", kMetadataSubDir);
  UniqueFd data(::open(dirs.data_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  int err = data.Valid() ? 0 : errno;
  UniqueFd metadata_dir;
  if (data.Valid()) {
    metadata_dir.Reset(OpenDirAt(data.Get(), kMetadataSubDir));
    err = metadata_dir.Valid() ? 0 : errno;
  }
  if (metadata_dir.Valid()) {
    // The directory of this UID only: a claim re-created under the same name has another.
    RemoveAt(metadata_dir.Get(), uid, ClaimDir(dirs, uid), kMaxRemoveDepth, failed);
    if (config::DnsSubdomainProblem(namespace_).empty() &&
        config::DnsSubdomainProblem(name).empty()) {
      RemoveLegacyDir(metadata_dir.Get(), metadata_path, Cat(namespace_, "_", name), uid, failed);
    }
  } else if (err != ENOENT && !NotADirectory(err)) {
    // Missing, or not a directory of ours (Prepare replaces that): nothing of this claim
    // can be there. Anything else may hide its files.
    AddFailure(failed, metadata_path, std::strerror(err));
  }
  // The specs of this UID: "_" ends the UID (a UID has none), so another UID's never match.
  const std::string prefix = Cat(dirs.driver, "_metadata_", uid, "_");
  UniqueFd cdi_dir(::open(dirs.cdi_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (cdi_dir.Valid()) {
    for (const auto& file : Names(cdi_dir.Get())) {
      if (file.starts_with(prefix) && file.ends_with(".json")) {
        RemoveAt(cdi_dir.Get(), file, Cat(dirs.cdi_dir, "/", file), kMaxRemoveDepth, failed);
      }
    }
  }
  if (failed.empty()) return absl::OkStatus();
  return absl::InternalError(Cat("cannot remove the device metadata of ResourceClaim ", namespace_,
                                 "/", name, ": ", failed));
}

std::vector<PreparedClaimRef> ListPreparedClaims(const MetadataDirs& dirs, size_t max) {
  std::vector<PreparedClaimRef> out;
  const std::string root = Cat(dirs.data_dir, "/", kMetadataSubDir);
  for (const std::string& uid : fd::ListDir(root)) {
    if (out.size() >= max) break;
    for (const std::string& request : fd::ListDir(Cat(root, "/", uid))) {
      const auto text = fd::ReadFile(Cat(root, "/", uid, "/", request, "/metadata.json"), 1 << 20);
      if (!text) continue;
      const json doc = json::parse(*text, nullptr, false);
      const json& meta = kube::Obj(doc, "metadata");
      if (kube::Str(meta, "uid") != uid) continue;
      out.push_back({kube::Str(meta, "namespace"), kube::Str(meta, "name"), uid});
      break;
    }
  }
  return out;
}

}  // namespace rdmadp::dra
