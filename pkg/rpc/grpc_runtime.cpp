#include "pkg/rpc/grpc_runtime.h"

#include <absl/synchronization/mutex.h>
#include <grpc/grpc.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/channel_arguments.h>

#include <cstdlib>

namespace rdmadp::rpc {

void PrepareGrpcRuntime() {
  // Our only client channel (to the kubelet) carries Register calls with deadlines, whose own
  // waits poll the connection; the 5-second safety-net poll is about 40 of an idle minute's
  // 160 wake-ups. gRPC reads the variable once, when it initialises.
  ::setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "0", /*overwrite=*/0);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

void DisableBandwidthProbing(grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
}

void DisableBandwidthProbing(grpc::ChannelArguments& args) {
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
}

}  // namespace rdmadp::rpc
