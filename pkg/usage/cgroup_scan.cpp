#include "pkg/usage/cgroup_scan.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "pkg/fd/files.h"
#include "pkg/text/cat.h"

namespace rdmadp::usage {
namespace {

constexpr size_t kMaxFile = 64 * size_t{1024};

// The subdirectories of `dir` (child cgroups), sorted; cgroupfs reports d_type, another
// file system may not (then lstat decides).
std::vector<std::string> ChildDirs(const std::string& dir, std::string& problem) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    problem = Cat("cannot list ", dir, ": ", std::strerror(errno));
    return out;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = ::lstat(Cat(dir, "/", name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

struct Walk {
  const std::string& root;
  size_t max_containers;
  size_t dirs = 0;
  bool containers_capped = false;
  CgroupScan scan;

  void Visit(const std::string& rel, int depth) {
    if (depth > kMaxScanDepth) {
      scan.problems.push_back(
          Cat(root, "/", rel, ": deeper than ", kMaxScanDepth, " levels, not walked"));
      return;
    }
    if (++dirs > kMaxScanDirs) return;  // said once, by the caller
    const std::string abs = rel.empty() ? root : Cat(root, "/", rel);
    if (!rel.empty()) {
      if (std::optional<ContainerCgroup> c = ContainerOfCgroup(rel)) {
        if (scan.containers.size() == max_containers) {
          containers_capped = true;
          return;
        }
        Read(abs, std::move(*c));
        return;  // what is below is the container's
      }
    }
    std::string problem;
    for (const std::string& child : ChildDirs(abs, problem)) {
      Visit(rel.empty() ? child : Cat(rel, "/", child), depth + 1);
    }
    if (!problem.empty()) scan.problems.push_back(std::move(problem));
  }

  void Read(const std::string& abs, ContainerCgroup c) {
    ContainerRdma r{.container = std::move(c), .counts = std::nullopt, .problem = {}};
    const std::string file = Cat(abs, "/rdma.current");
    std::optional<std::string> text = fd::ReadFile(file, kMaxFile + 1);
    if (!text) {
      r.problem = errno == ENOENT ? "no rdma.current (the rdma controller is not enabled down "
                                    "to this cgroup)"
                                  : Cat("cannot read ", file, ": ", std::strerror(errno));
    } else if (text->size() > kMaxFile) {
      r.problem = Cat(file, " is over ", kMaxFile, " bytes");
    } else if (auto counts = ParseRdmaCgroupFile(*text); !counts.ok()) {
      r.problem = Cat(file, ": ", std::string(counts.status().message()));
    } else {
      r.counts = std::move(*counts);
    }
    scan.containers.push_back(std::move(r));
  }
};

}  // namespace

CgroupScan ScanContainerCgroups(const std::string& cgroup_root, size_t max_containers) {
  Walk walk{.root = cgroup_root,
            .max_containers = max_containers,
            .dirs = 0,
            .containers_capped = false,
            .scan = {}};
  walk.Visit("", 0);
  if (walk.dirs > kMaxScanDirs) {
    walk.scan.problems.push_back(
        Cat(cgroup_root, ": more than ", kMaxScanDirs, " cgroups; the rest not walked"));
  }
  if (walk.containers_capped) {
    walk.scan.problems.push_back(
        Cat("more than ", max_containers, " containers' cgroups; the rest left out"));
  }
  return std::move(walk.scan);
}

}  // namespace rdmadp::usage
