#include "pkg/deviceplugin/list_and_watch.h"

#include <grpcpp/support/byte_buffer.h>

namespace rdmadp::deviceplugin {

bool AdvertisedChanged(const pool::SnapshotPtr& before, const pool::SnapshotPtr& after) {
  return before->advertised() != after->advertised();
}

void ServeListAndWatch(StreamHub* hub, DevicePluginService* service,
                       grpc::ServerCompletionQueue* cq) {
  rpc::LatestValueStream<pool::SnapshotPtr, grpc::ByteBuffer, grpc::ByteBuffer>::Serve(
      hub,
      [service](auto* ctx, auto* request, auto* writer, auto* q, void* tag) {
        service->RequestListAndWatch(ctx, request, writer, q, q, tag);
      },
      [](const pool::SnapshotPtr& snapshot, grpc::ByteBuffer* message) {
        const std::string& bytes = snapshot->list_response_bytes();
        grpc::Slice slice(bytes.data(), bytes.size());  // a copy: gRPC owns it from here
        *message = grpc::ByteBuffer(&slice, 1);
      },
      cq);
}

}  // namespace rdmadp::deviceplugin
