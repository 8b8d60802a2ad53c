#include "pkg/usage/cgroup_scan.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "pkg/fd/files.h"
#include "pkg/text/cat.h"

namespace rdmadp::usage {
namespace {

constexpr size_t kMaxFile = 64 * size_t{1024};

// One walk of the tree from its root, depth first, children in name order.
class Walk {
 public:
  Walk(const std::string& root, size_t max_containers)
      : root_(root), max_containers_(max_containers) {}

  CgroupScan Run() && {
    Visit("", 0);
    if (dirs_ > kMaxScanDirs) {
      scan_.problems.push_back(
          Cat(root_, ": more than ", kMaxScanDirs, " cgroups; the rest not walked"));
    }
    if (containers_capped_) {
      scan_.problems.push_back(
          Cat("more than ", max_containers_, " containers' cgroups; the rest left out"));
    }
    return std::move(scan_);
  }

 private:
  void Visit(const std::string& rel, int depth) {
    if (depth > kMaxScanDepth) {
      scan_.problems.push_back(
          Cat(root_, "/", rel, ": deeper than ", kMaxScanDepth, " levels, not walked"));
      return;
    }
    if (++dirs_ > kMaxScanDirs) return;  // said once, at the end
    const std::string abs = rel.empty() ? root_ : Cat(root_, "/", rel);
    if (!rel.empty()) {
      if (std::optional<ContainerCgroup> c = ContainerOfCgroup(rel)) {
        if (scan_.containers.size() == max_containers_) {
          containers_capped_ = true;
        } else {
          Read(abs, std::move(*c));
        }
        return;  // what is below is the container's
      }
    }
    std::optional<std::vector<std::string>> children = fd::ListSubdirs(abs);
    if (!children) {
      scan_.problems.push_back(Cat("cannot list ", abs, ": ", std::strerror(errno)));
      if (rel.empty()) scan_.listed = false;
      return;
    }
    std::sort(children->begin(), children->end());
    for (const std::string& child : *children) {
      Visit(rel.empty() ? child : Cat(rel, "/", child), depth + 1);
    }
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
    scan_.containers.push_back(std::move(r));
  }

  const std::string& root_;
  const size_t max_containers_;
  size_t dirs_ = 0;
  bool containers_capped_ = false;
  CgroupScan scan_;
};

}  // namespace

CgroupScan ScanContainerCgroups(const std::string& cgroup_root, size_t max_containers) {
  return Walk(cgroup_root, max_containers).Run();
}

}  // namespace rdmadp::usage
