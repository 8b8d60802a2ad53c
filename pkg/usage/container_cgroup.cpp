#include "pkg/usage/container_cgroup.h"

#include <algorithm>

#include "pkg/text/cat.h"
#include "pkg/text/split.h"

namespace rdmadp::usage {
namespace {

constexpr std::string_view kPodPrefix = "pod";  // the kubelet's podCgroupNamePrefix
constexpr std::string_view kSlice = ".slice";
constexpr std::string_view kScope = ".scope";

// A path's components, without empty, "." and ".." ones (a cgroup namespace's prefix).
std::vector<std::string_view> Components(std::string_view path) {
  std::vector<std::string_view> out;
  for (std::string_view part : Split(path, '/')) {
    if (!part.empty() && part != "." && part != "..") out.push_back(part);
  }
  return out;
}

bool IsContainerId(std::string_view id) {
  return id.size() == 64 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The kubelet's IsPodCgroup: "pod" + UID, and a UID that does not itself contain "pod"
// (its split on the prefix must give two parts). A UID is what the API server generated
// (a UUID) or, for a static pod, a hash: letters, digits and dashes (underscores under
// systemd).
std::optional<std::string> UidOfPodComponent(std::string_view component, bool systemd) {
  if (!component.starts_with(kPodPrefix)) return std::nullopt;
  std::string uid(component.substr(kPodPrefix.size()));
  if (uid.empty() || uid.find(kPodPrefix) != std::string::npos) return std::nullopt;
  for (char& c : uid) {
    if (systemd && c == '_') c = '-';
    const bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) return std::nullopt;
  }
  return uid;
}

QosClass QosOfParent(std::string_view parent) {
  if (parent == "burstable") return QosClass::kBurstable;
  if (parent == "besteffort") return QosClass::kBestEffort;
  return QosClass::kGuaranteed;
}

// A pod's cgroup, as either driver names it; its UID and QoS class.
struct PodComponent {
  std::string uid;
  QosClass qos;
  CgroupDriver driver;
};
std::optional<PodComponent> PodOf(const std::vector<std::string_view>& parts, size_t i) {
  const std::string_view c = parts[i];
  if (c.ends_with(kSlice)) {  // kubepods-burstable-pod<uid>.slice
    const std::vector<std::string_view> names = Split(c.substr(0, c.size() - kSlice.size()), '-');
    auto uid = UidOfPodComponent(names.back(), /*systemd=*/true);
    if (!uid || names.size() < 2) return std::nullopt;  // a pod slice has the pods' root above
    return PodComponent{*uid, QosOfParent(names[names.size() - 2]), CgroupDriver::kSystemd};
  }
  auto uid = UidOfPodComponent(c, /*systemd=*/false);
  if (!uid || i == 0) return std::nullopt;
  return PodComponent{*uid, QosOfParent(parts[i - 1]), CgroupDriver::kCgroupfs};
}

// A container's cgroup inside a pod's: its ID, or nullopt (CRI-O's conmon, anything else).
std::optional<std::string> ContainerIdOf(std::string_view c, CgroupDriver driver) {
  if (driver == CgroupDriver::kSystemd) {
    if (!c.ends_with(kScope)) return std::nullopt;
    c.remove_suffix(kScope.size());
    for (std::string_view prefix : {"cri-containerd-", "crio-", "docker-"}) {
      if (c.starts_with(prefix) && IsContainerId(c.substr(prefix.size()))) {
        return std::string(c.substr(prefix.size()));
      }
    }
    return std::nullopt;
  }
  if (c.starts_with("crio-")) c.remove_prefix(5);
  return IsContainerId(c) ? std::optional<std::string>(c) : std::nullopt;
}

}  // namespace

std::string_view QosClassName(QosClass qos) {
  switch (qos) {
    case QosClass::kGuaranteed:
      return "Guaranteed";
    case QosClass::kBurstable:
      return "Burstable";
    case QosClass::kBestEffort:
      return "BestEffort";
  }
  return "Unknown";
}

std::optional<ContainerCgroup> ContainerOfCgroup(std::string_view path) {
  const std::vector<std::string_view> parts = Components(path);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::optional<PodComponent> pod = PodOf(parts, i);
    if (!pod) continue;
    std::optional<std::string> id = ContainerIdOf(parts[i + 1], pod->driver);
    if (!id) continue;
    std::vector<std::string_view> own(parts.begin(), parts.begin() + static_cast<long>(i) + 2);
    return ContainerCgroup{.pod_uid = pod->uid,
                           .container_id = std::move(*id),
                           .qos = pod->qos,
                           .driver = pod->driver,
                           .path = Join(own, "/")};
  }
  return std::nullopt;
}

std::string KubeletCgroupPath(const std::vector<std::string>& name, CgroupDriver driver) {
  std::vector<std::string> parts;
  for (const std::string& part : name) {
    if (part.empty()) continue;
    parts.push_back(part);
  }
  if (parts.empty()) return "/";
  if (driver == CgroupDriver::kCgroupfs) return Cat("/", Join(parts, "/"));
  // ToSystemd: each component's '-' escaped as '_', joined by '-', then expanded into one
  // slice per prefix (systemd's ExpandSlice).
  std::string out;
  std::string prefix;
  for (std::string part : parts) {
    std::replace(part.begin(), part.end(), '-', '_');
    prefix = prefix.empty() ? part : Cat(prefix, "-", part);
    Append(out, "/", prefix, kSlice);
  }
  return out;
}

std::vector<std::string> PodCgroupName(std::vector<std::string> pods_root, QosClass qos,
                                       std::string_view pod_uid) {
  if (qos == QosClass::kBurstable) pods_root.emplace_back("burstable");
  if (qos == QosClass::kBestEffort) pods_root.emplace_back("besteffort");
  pods_root.push_back(Cat(kPodPrefix, pod_uid));
  return pods_root;
}

}  // namespace rdmadp::usage
