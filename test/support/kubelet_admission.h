// A container's admission as the kubelet does it for device-plugin resources, on the
// Topology Manager's container scope: every hint provider's hints for the container
// (devicemanager GetTopologyHints; the CPU and memory managers as with their default policy
// "none", which give none), the policy's merge and its verdict (topologymanager Admit:
// refused with TopologyAffinityError), then each resource's devices (devicemanager
// devicesToAllocate, asking the plugin's GetPreferredAllocation when its options offer it)
// and the plugin's Allocate. The rules are the port in topology_manager.h; the devices come
// from the KubeletSimulator's view of each plugin (its latest ListAndWatch, its options),
// or from a static resource: a GPU-like plugin given by its device list, allocated without
// a call (what its Allocate answers is not under test).
//
// Threads: one test thread; the simulator's own calls are thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/api/deviceplugin.pb.h"
#include "test/support/kubelet_sim.h"
#include "test/support/topology_manager.h"

namespace rdmadp::testing {

struct AdmittedContainer {
  bool admitted = false;
  std::string reason;           // "TopologyAffinityError" when refused
  topology::TopologyHint hint;  // the merged hint the devices were chosen by
  std::map<std::string, std::vector<std::string>> devices;            // by resource: the IDs given
  std::map<std::string, v1beta1::ContainerAllocateResponse> answers;  // plugin resources
  int preferred_calls = 0;  // GetPreferredAllocation calls made for it
};

class KubeletAdmission {
 public:
  KubeletAdmission(KubeletSimulator& kubelet, topology::Policy policy, std::vector<int> numa_nodes)
      : kubelet_(kubelet), policy_(policy), numa_nodes_(std::move(numa_nodes)) {}

  void AddStaticResource(const std::string& name, topology::Devices devices) {
    static_[name] = std::move(devices);
  }
  // Admits one container asking for `limits` (resource -> count); an error is a failure of
  // the allocation itself (a plugin's RPC), as the kubelet's UnexpectedAdmissionError.
  absl::StatusOr<AdmittedContainer> Admit(const std::map<std::string, int>& limits);
  // Devices given to containers so far, by resource.
  const std::map<std::string, topology::DeviceIds>& in_use() const { return in_use_; }

 private:
  std::map<std::string, topology::ResourceState> Resources(const SimState& state) const;

  KubeletSimulator& kubelet_;
  const topology::Policy policy_;
  const std::vector<int> numa_nodes_;
  std::map<std::string, topology::Devices> static_;
  std::map<std::string, topology::DeviceIds> in_use_;
};

}  // namespace rdmadp::testing
