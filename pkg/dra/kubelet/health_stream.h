// The kubelet's DRA resource-health streams (NodeWatchResources, v1alpha1 and v1, the
// versions the kubelet calls; their messages are identical on the wire):
// rpc::LatestValueStream (pkg/rpc/latest_value_stream.h) with the device list as the value.
// Each stream gets the full list when it opens and whenever the hub publishes (a change or
// a heartbeat); when writes back up, only the newest list is sent.
//
// Threads: the hub is thread-safe (Publish from the event loop; streams open and end on the
// server's completion-queue thread), as LatestValueHub says.
#pragma once

#include <grpcpp/completion_queue.h>

#include <memory>
#include <string>

#include "pkg/rpc/latest_value_stream.h"

namespace rdmadp::dra {

// A device list, serialised once (a v1 NodeWatchResourcesResponse).
using HealthPayload = std::shared_ptr<const std::string>;

// Open health streams at most: the kubelet holds one per driver connection. Any process
// that can reach the socket could open thousands (1,000 streams: +1,000 fds, +32 MiB); the
// oldest is ended when one more opens (the newest is the kubelet's current one).
inline constexpr size_t kMaxHealthStreams = 16;

using HealthHub = rpc::LatestValueHub<HealthPayload>;

inline HealthHub::Options HealthHubOptions() {
  HealthHub::Options options;
  options.max_streams = kMaxHealthStreams;
  return options;
}

// Puts one health stream of service version `Service` in wait (until the server shuts down).
template <class Service, class Request, class Response>
void ServeHealth(HealthHub* hub, Service* service, grpc::ServerCompletionQueue* cq) {
  rpc::LatestValueStream<HealthPayload, Request, Response>::Serve(
      hub,
      [service](auto* ctx, auto* request, auto* writer, auto* q, void* tag) {
        service->RequestNodeWatchResources(ctx, request, writer, q, q, tag);
      },
      [](const HealthPayload& list, Response* message) {
        message->ParseFromString(*list);  // same wire format in every version
      },
      cq);
}

}  // namespace rdmadp::dra
