// What the kubelet and containerd leave on a host for running containers, as the usage
// readers see it: each container's cgroup under the systemd driver
// (kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice/
// cri-containerd-<id>.scope, pkg/usage/container_cgroup.h) with its rdma.current, and the
// kubelet's link in /var/log/containers (pkg/usage/log_links.h) made `age` ago. Containers
// are named by one character: its ID is 64 of it, its pod's UID Uid(c).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace rdmadp::testing {

class NodeUseTree {
 public:
  explicit NodeUseTree(std::string root);  // makes root/cgroup and root/containers

  std::string cgroup_root() const { return root_ + "/cgroup"; }
  std::string links_dir() const { return root_ + "/containers"; }
  static std::string Uid(char id);

  // `rdma`: its rdma.current, or none (no rdma controller down to it).
  void Container(const std::string& pod_namespace, const std::string& pod,
                 const std::string& container, char id, std::chrono::seconds age,
                 const std::optional<std::string>& rdma);
  // The same with a full container ID and pod UID of the caller's (many containers).
  void ContainerWithId(const std::string& pod_namespace, const std::string& pod,
                       const std::string& container, const std::string& id, const std::string& uid,
                       std::chrono::seconds age, const std::optional<std::string>& rdma);
  void SetRdma(char id, const std::string& rdma);
  // The container went: its cgroup and its link.
  void Remove(char id);

 private:
  std::string CgroupDir(char id) const { return CgroupDir(std::string(64, id), Uid(id)); }
  std::string CgroupDir(const std::string& id, const std::string& uid) const;
  std::string root_;
};

}  // namespace rdmadp::testing
