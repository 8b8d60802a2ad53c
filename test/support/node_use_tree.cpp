#include "test/support/node_use_tree.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace rdmadp::testing {

namespace fs = std::filesystem;

NodeUseTree::NodeUseTree(std::string root) : root_(std::move(root)) {
  fs::create_directories(cgroup_root());
  fs::create_directories(links_dir());
}

std::string NodeUseTree::Uid(char id) {
  return std::string("0000000") + id + "-0000-0000-0000-000000000000";
}

std::string NodeUseTree::CgroupDir(const std::string& id, const std::string& uid) const {
  std::string slice_uid = uid;
  std::replace(slice_uid.begin(), slice_uid.end(), '-', '_');
  return cgroup_root() + "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
         slice_uid + ".slice/cri-containerd-" + id + ".scope";
}

void NodeUseTree::Container(const std::string& pod_namespace, const std::string& pod,
                            const std::string& container, char id, std::chrono::seconds age,
                            const std::optional<std::string>& rdma) {
  ContainerWithId(pod_namespace, pod, container, std::string(64, id), Uid(id), age, rdma);
}

void NodeUseTree::ContainerWithId(const std::string& pod_namespace, const std::string& pod,
                                  const std::string& container, const std::string& id,
                                  const std::string& uid, std::chrono::seconds age,
                                  const std::optional<std::string>& rdma) {
  const std::string dir = CgroupDir(id, uid);
  fs::create_directories(dir);
  if (rdma) std::ofstream(dir + "/rdma.current") << *rdma;
  const std::string link =
      links_dir() + "/" + pod + "_" + pod_namespace + "_" + container + "-" + id + ".log";
  fs::create_symlink(
      "/var/log/pods/" + pod_namespace + "_" + pod + "_" + uid + "/" + container + "/0.log", link);
  const auto made = std::chrono::system_clock::now() - age;
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(made.time_since_epoch());
  const timespec times[2] = {{secs.count(), 0}, {secs.count(), 0}};
  if (::utimensat(AT_FDCWD, link.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
    throw std::runtime_error("utimensat " + link);
  }
}

void NodeUseTree::SetRdma(char id, const std::string& rdma) {
  std::ofstream(CgroupDir(id) + "/rdma.current") << rdma;
}

void NodeUseTree::Remove(char id) {
  fs::remove_all(CgroupDir(id));
  for (const auto& entry : fs::directory_iterator(links_dir())) {
    if (entry.path().filename().string().find(std::string(64, id)) != std::string::npos) {
      fs::remove(entry.path());
    }
  }
}

}  // namespace rdmadp::testing
