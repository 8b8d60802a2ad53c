// Per-container RDMA use: what one sample costs the daemon (pkg/observe/node_use.h:
// the kubelet's pod-resources List over its unix socket, the kubelet's links, the cgroup
// walk with every container's rdma.current, the join). A node of 100 containers holding our
// devices (issue 54's budget: <= 5 ms CPU per sample of 100), the same beside 100 that do
// not, and 1,000 beside 1,000 for the shape. The kubelet is test/support's fake on a real socket,
// in this process: its CPU is not the sample's, so the sample is timed on its own thread's CPU
// clock beside the wall clock. Baseline in the same run: the raw I/O floor (the same directories
// listed, links read and files read, no parsing, no join, no List).
#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "pkg/observe/node_use.h"
#include "pkg/usage/cgroup_scan.h"
#include "pkg/usage/log_links.h"
#include "pkg/usage/pod_resources.h"
#include "test/bench/bench_common.h"
#include "test/support/fake_pod_resources.h"
#include "test/support/node_use_tree.h"
#include "test/support/temp_dir.h"

using namespace rdmadp;
using namespace rdmadp::bench;

namespace {

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// The floor: every directory of the cgroup tree listed, every rdma.current read, every link
// read; nothing parsed.
size_t RawFloor(const std::string& cgroups, const std::string& links) {
  size_t bytes = 0;
  char buf[4096];
  std::vector<std::string> dirs = {cgroups};
  while (!dirs.empty()) {
    const std::string dir = dirs.back();
    dirs.pop_back();
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const std::string path = dir + "/" + e->d_name;
      if (e->d_type == DT_DIR) {
        dirs.push_back(path);
      } else if (std::string_view(e->d_name) == "rdma.current") {
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
          bytes += static_cast<size_t>(std::max<ssize_t>(0, read(fd, buf, sizeof(buf))));
          close(fd);
        }
      }
    }
    closedir(d);
  }
  if (DIR* d = opendir(links.c_str())) {
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      bytes += static_cast<size_t>(
          std::max<ssize_t>(0, readlink((links + "/" + e->d_name).c_str(), buf, sizeof(buf))));
    }
    closedir(d);
  }
  return bytes;
}

char IdOf(int i) { return "0123456789abcdef"[i % 16]; }

}  // namespace

int main() {
  for (const auto& [holders, others] :
       {std::pair{100, 0}, std::pair{100, 100}, std::pair{1000, 1000}}) {
    testing::TempDir tmp;
    testing::NodeUseTree tree(tmp.path());
    auto kubelet = testing::FakePodResources::Start(tmp.path() + "/kubelet.sock", 34);
    if (!kubelet.ok()) return 1;
    // Container IDs must be 64 hex digits and distinct: each gets its own directory names
    // through a distinct pod, and an ID char cycles; the tree keys cgroups by ID, so the
    // containers are spread over 16 IDs times distinct pod UIDs by building the names here.
    std::vector<testing::FakePod> pods;
    for (int i = 0; i < holders + others; ++i) {
      const bool ours = i < holders;
      const std::string pod = "job-" + std::to_string(i);
      const std::string id = std::string(60, IdOf(i)) + [&] {
        char b[5];
        std::snprintf(b, sizeof(b), "%04x", i);
        return std::string(b);
      }();
      const std::string uid = "00000000-0000-0000-0000-" + [&] {
        char b[13];
        std::snprintf(b, sizeof(b), "%012x", i);
        return std::string(b);
      }();
      tree.ContainerWithId("team-a", pod, "main", id, uid, std::chrono::seconds(3600),
                           ours ? "mlx5_0 hca_handle=1 hca_object=40 \nmlx5_1 hca_handle=1 "
                                  "hca_object=0 \nmlx5_2 hca_handle=0 hca_object=0 \n"
                                : "mlx5_0 hca_handle=0 hca_object=0 \nmlx5_1 hca_handle=0 "
                                  "hca_object=0 \nmlx5_2 hca_handle=0 hca_object=0 \n");
      pods.push_back({.name = pod,
                      .pod_namespace = "team-a",
                      .uid = uid,
                      .containers = {testing::FakeContainer(
                          "main", ours ? std::vector<testing::FakeDevices>{{"rdma/hca", {"1"}}}
                                       : std::vector<testing::FakeDevices>{})},
                      .finished = false});
    }
    (*kubelet)->SetPods(std::move(pods));
    observe::OurDevices ours;
    ours.ours.resources = {"rdma/hca"};
    ours.hcas.by_resource = {{"rdma/hca", {"mlx5_0", "mlx5_1"}}};
    const observe::NodeUseSources sources{.pod_resources_socket = tmp.path() + "/kubelet.sock",
                                          .cgroup_root = tree.cgroup_root(),
                                          .container_logs_dir = tree.links_dir(),
                                          .sysfs_root = ""};
    usage::PodResourcesClient kubelet_client(sources.pod_resources_socket);
    // Warm: the first List connects; the daemon's later samples find the dentries cached.
    observe::NodeUse first =
        observe::ReadNodeUse(ours, sources, kubelet_client, std::chrono::system_clock::now());
    if (!first.list_ok || first.view.containers.size() != static_cast<size_t>(holders) ||
        !first.view.problems.empty()) {
      std::fprintf(stderr, "expected %d containers, got %zu (%zu problems)\n", holders,
                   first.view.containers.size(), first.view.problems.size());
      return 1;
    }
    for (const auto& c : first.view.containers) {
      if (c.sample.hca_objects != 40 || !c.missing.empty()) return 1;
    }
    const int runs = holders >= 1000 ? 11 : 51;
    std::vector<double> wall_ms, cpu_ms, floor_ms;
    for (int r = 0; r < runs; ++r) {
      auto f = Clock::now();
      RawFloor(tree.cgroup_root(), tree.links_dir());
      floor_ms.push_back(MsSince(f));
      const double cpu0 = ThreadCpuMs();
      auto t = Clock::now();
      observe::NodeUse use =
          observe::ReadNodeUse(ours, sources, kubelet_client, std::chrono::system_clock::now());
      wall_ms.push_back(MsSince(t));
      cpu_ms.push_back(ThreadCpuMs() - cpu0);
      if (use.view.containers.size() != static_cast<size_t>(holders)) return 1;
    }
    // Its parts, each on its own (the same reads ReadNodeUse makes).
    std::vector<double> list_ms, links_ms, cgroups_ms;
    for (int r = 0; r < runs; ++r) {
      double c0 = ThreadCpuMs();
      auto listed = kubelet_client.List(sources.list_timeout, ours.ours, sources.max_containers);
      list_ms.push_back(ThreadCpuMs() - c0);
      c0 = ThreadCpuMs();
      usage::ScanKubeletLogLinks(sources.container_logs_dir, sources.max_containers);
      links_ms.push_back(ThreadCpuMs() - c0);
      c0 = ThreadCpuMs();
      usage::ScanContainerCgroups(sources.cgroup_root, sources.max_containers);
      cgroups_ms.push_back(ThreadCpuMs() - c0);
      if (!listed.ok()) return 1;
    }
    const std::string tag = "rdma use sample, " + std::to_string(holders) + " + " +
                            std::to_string(others) + " containers";
    const bool budget = holders == 100 && others == 0;
    const double cpu = Median(cpu_ms);
    Row(tag, "sample CPU (its thread), median", cpu, "ms", "info", budget ? "<= 5 ms" : "info",
        budget ? Verdict(cpu <= 5) : "info");
    Row(tag, "sample wall, median", Median(wall_ms), "ms",
        Fmt(Median(floor_ms)) + " ms raw I/O floor", "info", "info");
    Row(tag, "of which the pod-resources List, CPU median", Median(list_ms), "ms", "info", "info",
        "info");
    Row(tag, "of which the kubelet's links, CPU median", Median(links_ms), "ms", "info", "info",
        "info");
    Row(tag, "of which the cgroup walk, CPU median", Median(cgroups_ms), "ms", "info", "info",
        "info");
    Row(tag, "sample wall, max", *std::max_element(wall_ms.begin(), wall_ms.end()), "ms", "info",
        "info", "info");
  }
  return 0;
}
