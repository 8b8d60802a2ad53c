// Which containers hold our devices, from the kubelet's pod-resources API (List, v1;
// pkg/api/podresources.proto): the device plugin's resources by name, and from 1.34 the DRA
// devices of our driver. The kubelet names pods and containers, never UIDs or container IDs:
// log_links.h joins the names to the cgroups. One blocking call within a timeout, for the
// sampler's thread (or a command); the answer is capped at kMaxPodResourcesBytes, and what it
// holds beyond `max_containers` is left out and said.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace rdmadp::usage {

// The kubelet's own client cap (pkg/kubelet/apis/podresources: DefaultMaxMsgSize).
inline constexpr int kMaxPodResourcesBytes = 16 * 1024 * 1024;

struct DraDevice {
  std::string claim_namespace;
  std::string claim_name;
  std::string pool;
  std::string device;
  bool operator==(const DraDevice&) const = default;
};

// One container that holds something of ours.
struct ContainerAllocations {
  std::string pod_namespace;
  std::string pod;
  std::string container;
  std::map<std::string, std::vector<std::string>> device_ids;  // by resource name
  std::vector<DraDevice> dra_devices;                          // of our driver
  bool operator==(const ContainerAllocations&) const = default;
};

struct Ours {
  std::set<std::string> resources;  // device plugin resource names, "rdma/hca_a"
  std::string dra_driver;           // "" for none
};

struct PodResourcesList {
  std::vector<ContainerAllocations> containers;  // in the kubelet's order
  std::vector<std::string> problems;
};

// The kubelet's <root>/pod-resources/kubelet.sock, one connection kept between Lists (a new
// one costs more than a List: the connect and HTTP/2's handshake); gRPC connects it again
// after a kubelet restart, within a second. One thread at a time.
class PodResourcesClient {
 public:
  // `max_answer_bytes`: the cap on one answer (tests prove the cap with a small one).
  explicit PodResourcesClient(std::string socket, int max_answer_bytes = kMaxPodResourcesBytes);
  ~PodResourcesClient();
  PodResourcesClient(const PodResourcesClient&) = delete;
  PodResourcesClient& operator=(const PodResourcesClient&) = delete;

  const std::string& socket() const { return socket_; }
  // An error is the call's (no kubelet, a timeout, an answer past the cap);
  // `max_containers` caps what is kept.
  absl::StatusOr<PodResourcesList> List(std::chrono::milliseconds timeout, const Ours& ours,
                                        size_t max_containers);

 private:
  struct Stub;
  std::string socket_;
  std::unique_ptr<Stub> stub_;
};

// One List on a connection of its own.
absl::StatusOr<PodResourcesList> ListOurAllocations(const std::string& socket,
                                                    std::chrono::milliseconds timeout,
                                                    const Ours& ours, size_t max_containers,
                                                    int max_answer_bytes = kMaxPodResourcesBytes);

}  // namespace rdmadp::usage
