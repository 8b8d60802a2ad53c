// Which pod and container a container ID is, from the links the kubelet keeps in
// /var/log/containers (docs/observability.md, "Which container"). The pod-resources API
// names a container by namespace, pod and container name; its cgroup names it by pod UID
// and container ID; these links carry both, and reading them needs only their names.
//
// The kubelet (pkg/kubelet/kuberuntime/legacy.go: legacyLogSymlink, logSymlink; made in
// kuberuntime_container.go startContainer once the container has started, removed with the
// container) makes one link per container:
//
//   /var/log/containers/<pod>_<namespace>_<container>-<container ID>.log
//     -> <pod logs dir>/<namespace>_<pod>_<pod UID>/<container>/<restart count>.log
//
// The link's name is cut to 255 bytes (ext4's limit) and can lose the container ID when the
// three names together pass 184 bytes: such a container is said, never guessed. Neither a
// pod or namespace name (DNS subdomain, label) nor a container name (DNS label) nor a UID
// holds '_', so the parts split exactly. Pure parsing, and one directory read (any thread).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rdmadp::usage {

struct ContainerNames {
  std::string pod_namespace;
  std::string pod;
  std::string pod_uid;
  std::string container;
  std::string container_id;  // 64 lower-case hex digits, as the cgroup names it
  int restart_count = 0;
  bool operator==(const ContainerNames&) const = default;
};

// The kubelet's link name for these names: pod_namespace_container-id.log, cut to 255.
std::string KubeletLogLinkName(std::string_view pod, std::string_view pod_namespace,
                               std::string_view container, std::string_view container_id);

// The names a link says: `name` its file name, `target` what it points to. An error names
// what did not match (a name cut short: "cut to 255 bytes", a target not in the kubelet's
// form, the two disagreeing).
absl::StatusOr<ContainerNames> ParseKubeletLogLink(std::string_view name, std::string_view target);

struct LinkedContainer {
  ContainerNames names;
  // When the kubelet made the link: just after the container started.
  std::chrono::system_clock::time_point started;
};

struct LogLinkScan {
  std::vector<LinkedContainer> containers;  // by link name
  std::vector<std::string> problems;        // one line per link not understood, and caps
  bool listed = true;                       // false: the directory itself could not be read
};

// Every link in `dir` (the host's /var/log/containers, mounted read-only: only the names
// and link texts are read, never a log). At most `max_links` links are looked at (and so at
// most that many problems said); files that are not links (a runtime writing logs there
// itself) are passed over, and so is a link removed while it is read.
LogLinkScan ScanKubeletLogLinks(const std::string& dir, size_t max_links);

}  // namespace rdmadp::usage
