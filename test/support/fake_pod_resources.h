// The kubelet's pod-resources server (List, v1) on a real unix socket, written from
// pkg/kubelet/apis/podresources/server_v1.go (v1PodResourcesServer.List) and parameterised by
// the kubelet's minor release:
//  - which pods: from 1.34 the active ones only (KubeletPodResourcesListUseActivePods, on by
//    default there); before, every pod the kubelet knows, a finished one too;
//  - which containers, in this order: the restartable init containers (sidecars), then the
//    regular ones, each listed whether or not it holds a device; ordinary init containers
//    never;
//  - per container, the device plugin devices the device manager assigned (by pod UID and
//    container name) and, from 1.34 (KubeletPodResourcesDynamicResources, beta and on by
//    default; alpha and off from 1.27), the DRA claims' devices.
// Tests describe pods as the kubelet holds them; Pods() is thread-safe; calls() counts Lists.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/api/podresources.grpc.pb.h"

namespace rdmadp::testing {

struct FakeDevices {
  std::string resource;
  std::vector<std::string> ids;
};
struct FakeClaimDevice {
  std::string claim_namespace, claim_name, driver, pool, device;
};
struct FakeContainer {
  explicit FakeContainer(std::string container, std::vector<FakeDevices> devs = {},
                         std::vector<FakeClaimDevice> claim_devices = {})
      : name(std::move(container)), devices(std::move(devs)), claims(std::move(claim_devices)) {}
  FakeContainer&& Init() && {  // in spec.initContainers
    init = true;
    return std::move(*this);
  }
  FakeContainer&& Sidecar() && {  // an init container with restartPolicy Always
    init = restartable = true;
    return std::move(*this);
  }
  std::string name;
  std::vector<FakeDevices> devices;
  std::vector<FakeClaimDevice> claims;
  bool init = false;
  bool restartable = false;
};
struct FakePod {
  std::string name, pod_namespace, uid;
  std::vector<FakeContainer> containers;
  bool finished = false;  // Succeeded or Failed
};

class FakePodResources {
 public:
  static absl::StatusOr<std::unique_ptr<FakePodResources>> Start(const std::string& socket,
                                                                 int kubelet_minor);
  ~FakePodResources();

  void SetPods(std::vector<FakePod> pods);
  int calls() const { return calls_.load(); }

 private:
  class Service;
  FakePodResources(int minor);
  v1::ListPodResourcesResponse List();

  const int minor_;
  std::mutex mu_;
  std::vector<FakePod> pods_;  // guarded by mu_
  std::atomic<int> calls_{0};
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace rdmadp::testing
