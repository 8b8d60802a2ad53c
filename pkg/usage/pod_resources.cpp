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

struct PodResourcesClient::Stub {
  std::unique_ptr<v1::PodResourcesLister::Stub> grpc;
};

PodResourcesClient::PodResourcesClient(std::string socket, int max_answer_bytes)
    : socket_(std::move(socket)), stub_(std::make_unique<Stub>()) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_answer_bytes);
  // The peer is local: after a kubelet restart, connect again within a second, not gRPC's
  // default back-off of up to two minutes.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  stub_->grpc = v1::PodResourcesLister::NewStub(
      grpc::CreateCustomChannel("unix://" + socket_, grpc::InsecureChannelCredentials(), args));
}

PodResourcesClient::~PodResourcesClient() = default;

absl::StatusOr<PodResourcesList> ListOurAllocations(const std::string& socket,
                                                    std::chrono::milliseconds timeout,
                                                    const Ours& ours, size_t max_containers,
                                                    int max_answer_bytes) {
  return PodResourcesClient(socket, max_answer_bytes).List(timeout, ours, max_containers);
}

absl::StatusOr<PodResourcesList> PodResourcesClient::List(std::chrono::milliseconds timeout,
                                                          const Ours& ours, size_t max_containers) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub_->grpc->List(&context, v1::ListPodResourcesRequest(), &response);
  if (!status.ok()) {
    return absl::UnavailableError(Cat("pod-resources List on ", socket_, ": ",
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
