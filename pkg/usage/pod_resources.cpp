#include "pkg/usage/pod_resources.h"

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "pkg/api/podresources.grpc.pb.h"
#include "pkg/text/cat.h"

namespace rdmadp::usage {
namespace {

ContainerAllocations OursIn(const v1::PodResources& pod, const v1::ContainerResources& c,
                            const Ours& ours) {
  ContainerAllocations out{.pod_namespace = pod.namespace_(),
                           .pod = pod.name(),
                           .container = c.name(),
                           .device_ids = {},
                           .dra_devices = {}};
  for (const v1::ContainerDevices& d : c.devices()) {
    if (!ours.resources.contains(d.resource_name())) continue;
    auto& ids = out.device_ids[d.resource_name()];
    ids.insert(ids.end(), d.device_ids().begin(), d.device_ids().end());
  }
  if (ours.dra_driver.empty()) return out;
  for (const v1::DynamicResource& r : c.dynamic_resources()) {
    for (const v1::ClaimResource& cr : r.claim_resources()) {
      if (cr.driver_name() != ours.dra_driver) continue;
      out.dra_devices.push_back({.claim_namespace = r.claim_namespace(),
                                 .claim_name = r.claim_name(),
                                 .pool = cr.pool_name(),
                                 .device = cr.device_name()});
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<PodResourcesList> ListOurAllocations(const std::string& socket,
                                                    std::chrono::milliseconds timeout,
                                                    const Ours& ours, size_t max_containers) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxPodResourcesBytes);
  auto channel =
      grpc::CreateCustomChannel("unix://" + socket, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub->List(&context, v1::ListPodResourcesRequest(), &response);
  if (!status.ok()) {
    return absl::UnavailableError(Cat("pod-resources List on ", socket, ": ",
                                      status.error_message(), " (code ",
                                      static_cast<int>(status.error_code()), ")"));
  }
  PodResourcesList list;
  size_t left_out = 0;
  for (const v1::PodResources& pod : response.pod_resources()) {
    for (const v1::ContainerResources& c : pod.containers()) {
      ContainerAllocations held = OursIn(pod, c, ours);
      if (held.device_ids.empty() && held.dra_devices.empty()) continue;
      if (list.containers.size() == max_containers) {
        ++left_out;
        continue;
      }
      list.containers.push_back(std::move(held));
    }
  }
  if (left_out > 0) {
    list.problems.push_back(
        Cat("more than ", max_containers, " containers hold our devices; ", left_out, " left out"));
  }
  return list;
}

}  // namespace rdmadp::usage
