// Which pod and container a cgroup v2 directory belongs to, read from the names the kubelet
// and the container runtimes give their cgroups (docs/observability.md, "Which container"):
//
//   systemd driver   kubepods.slice/kubepods-burstable.slice/
//                      kubepods-burstable-pod<uid, '-' as '_'>.slice/cri-containerd-<id>.scope
//   cgroupfs driver  kubepods/burstable/pod<uid>/<id>
//
// The kubelet (pkg/kubelet/cm/cgroup_manager_linux.go: CgroupName, ToSystemd, ToCgroupfs;
// qos_container_manager_linux.go; pod_container_manager_linux.go: GetPodContainerName,
// IsPodCgroup) names a pod's cgroup "pod" + its UID, a direct child of its QoS class's
// cgroup: the root of the pods ("kubepods", below --cgroup-root) for Guaranteed,
// "burstable" or "besteffort" below it for the others. Under systemd every component is a
// slice whose name repeats its parents', joined by '-', each '-' inside a component
// written '_'. The runtime names the container's own cgroup inside the pod's: containerd
// "cri-containerd-<id>.scope" (systemd) or "<id>" (cgroupfs), CRI-O "crio-<id>.scope" or
// "crio-<id>", Docker (cri-dockerd) "docker-<id>.scope" or "<id>"; <id> is the container
// ID the CRI and the pod's status show, 64 hex digits. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmadp::usage {

enum class CgroupDriver { kSystemd, kCgroupfs };
enum class QosClass { kGuaranteed, kBurstable, kBestEffort };
std::string_view QosClassName(QosClass qos);  // as the API writes it: "Burstable"

struct ContainerCgroup {
  std::string pod_uid;       // as the API shows it, with its dashes
  std::string container_id;  // 64 lower-case hex digits
  QosClass qos = QosClass::kGuaranteed;
  CgroupDriver driver = CgroupDriver::kCgroupfs;
  // The container's own cgroup, the input up to it: what its processes run in, or below
  // (crun's "container" child, a systemd inside the container).
  std::string path;
  bool operator==(const ContainerCgroup&) const = default;
};

// The container whose cgroup `path` is (or is below), for a cgroup path relative to the
// cgroup root (or absolute; "/../.." prefixes of a cgroup namespace are skipped). nullopt
// for anything else: the pods' and QoS classes' cgroups, a pod's own, CRI-O's conmon
// cgroups ("crio-conmon-<id>"), system services. A pod sandbox's ("pause") cgroup has the
// form of a container's and is returned: no container status names its ID.
std::optional<ContainerCgroup> ContainerOfCgroup(std::string_view path);

// The kubelet's cgroup names (CgroupName: its components, e.g. {"kubepods", "burstable",
// "pod<uid>"}) as the two drivers write them, the kubelet's ToSystemd and ToCgroupfs:
// {"kubepods", "burstable"} -> "/kubepods.slice/kubepods-burstable.slice" and
// "/kubepods/burstable"; {} -> "/". Empty components are skipped.
std::string KubeletCgroupPath(const std::vector<std::string>& name, CgroupDriver driver);
// The kubelet's name for a pod's cgroup below the pods' root {"kubepods"} (or a
// --cgroup-root's components followed by "kubepods").
std::vector<std::string> PodCgroupName(std::vector<std::string> pods_root, QosClass qos,
                                       std::string_view pod_uid);

}  // namespace rdmadp::usage
