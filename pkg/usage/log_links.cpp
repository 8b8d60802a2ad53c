#include "pkg/usage/log_links.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "pkg/fd/files.h"
#include "pkg/text/cat.h"
#include "pkg/text/split.h"

namespace rdmadp::usage {
namespace {

constexpr std::string_view kSuffix = ".log";
constexpr size_t kMaxName = 255;  // ext4's, which the kubelet cuts to
constexpr size_t kIdLength = 64;

bool IsLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool IsDigits(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A UID as the API shows it: a random one's 8-4-4-4-12 hex digits, a static pod's hash.
bool IsUid(std::string_view s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return c == '-' || IsLowerHex({&c, 1});
  });
}

absl::Status Bad(std::string_view name, std::string_view why) {
  return absl::InvalidArgumentError(Cat(name, ": ", why));
}

}  // namespace

std::string KubeletLogLinkName(std::string_view pod, std::string_view pod_namespace,
                               std::string_view container, std::string_view container_id) {
  std::string stem = Cat(pod, "_", pod_namespace, "_", container, "-", container_id);
  if (stem.size() > kMaxName - kSuffix.size()) stem.resize(kMaxName - kSuffix.size());
  return Cat(stem, kSuffix);
}

absl::StatusOr<ContainerNames> ParseKubeletLogLink(std::string_view name, std::string_view target) {
  // The target: .../<namespace>_<pod>_<uid>/<container>/<restart count>.log. Its directory
  // is the kubelet's --pod-logs-dir (/var/log/pods by default), so only the tail is read.
  std::vector<std::string_view> parts = Split(target, '/');
  if (parts.size() < 3 || !parts.back().ends_with(kSuffix)) {
    return Bad(name,
               Cat("link target \"", target, "\" is not <ns>_<pod>_<uid>/<container>/<n>.log"));
  }
  const std::string_view file = parts[parts.size() - 1];
  const std::string_view count = file.substr(0, file.size() - kSuffix.size());
  const std::string_view container = parts[parts.size() - 2];
  const std::vector<std::string_view> pod_dir = Split(parts[parts.size() - 3], '_');
  if (!IsDigits(count) || container.empty() || pod_dir.size() != 3 || pod_dir[0].empty() ||
      pod_dir[1].empty() || !IsUid(pod_dir[2])) {
    return Bad(name,
               Cat("link target \"", target, "\" is not <ns>_<pod>_<uid>/<container>/<n>.log"));
  }
  ContainerNames names{.pod_namespace = std::string(pod_dir[0]),
                       .pod = std::string(pod_dir[1]),
                       .pod_uid = std::string(pod_dir[2]),
                       .container = std::string(container),
                       .container_id = {},
                       .restart_count = std::stoi(std::string(count))};

  // The name: <pod>_<namespace>_<container>-<id>.log, the same names as the target's.
  if (!name.ends_with(kSuffix)) return Bad(name, "not a .log link");
  const std::string_view stem = name.substr(0, name.size() - kSuffix.size());
  const std::string prefix = Cat(names.pod, "_", names.pod_namespace, "_", names.container, "-");
  const bool cut = name.size() == kMaxName;
  if (!stem.starts_with(prefix)) {
    if (cut && std::string_view(prefix).starts_with(stem)) {
      return Bad(name, "cut to 255 bytes by the kubelet: the container ID is lost");
    }
    return Bad(name, Cat("does not name the pod and container of its target \"", target, "\""));
  }
  const std::string_view id = stem.substr(prefix.size());
  if (id.size() != kIdLength || !IsLowerHex(id)) {
    if (cut && id.size() < kIdLength && IsLowerHex(id)) {
      return Bad(name, "cut to 255 bytes by the kubelet: the container ID is lost");
    }
    return Bad(name, "container ID is not 64 hex digits");
  }
  names.container_id = std::string(id);
  return names;
}

LogLinkScan ScanKubeletLogLinks(const std::string& dir, size_t max_links) {
  LogLinkScan scan;
  std::optional<std::vector<std::string>> links = fd::ListLinks(dir);
  if (!links) {
    scan.problems.push_back(Cat("cannot list ", dir, ": ", std::strerror(errno)));
    scan.listed = false;
    return scan;
  }
  std::sort(links->begin(), links->end());
  if (links->size() > max_links) {
    scan.problems.push_back(Cat("more than ", max_links, " links in ", dir, "; the rest left out"));
    links->resize(max_links);
  }
  for (const std::string& link : *links) {
    const std::string path = Cat(dir, "/", link);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;  // gone, or replaced
    char target[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof(target));
    if (n < 0 && errno == ENOENT) continue;  // removed with its container since the listing
    if (n <= 0 || static_cast<size_t>(n) == sizeof(target)) {
      scan.problems.push_back(Cat("cannot read the link ", path, ": ",
                                  n < 0 ? std::strerror(errno) : "empty or too long"));
      continue;
    }
    absl::StatusOr<ContainerNames> names =
        ParseKubeletLogLink(link, std::string_view(target, static_cast<size_t>(n)));
    if (!names.ok()) {
      scan.problems.push_back(std::string(names.status().message()));
      continue;
    }
    const auto since_epoch =
        std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec);
    scan.containers.push_back(
        {std::move(*names),
         std::chrono::system_clock::time_point(
             std::chrono::duration_cast<std::chrono::system_clock::duration>(since_epoch))});
  }
  return scan;
}

}  // namespace rdmadp::usage
