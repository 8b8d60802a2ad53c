#include "pkg/server/grpc_runtime.h"

#include <absl/synchronization/mutex.h>
#include <grpc/grpc.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/channel_arguments.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pkg/server/quiet_event_engine.h"
#include "pkg/server/quiet_timers.h"

namespace rdmadp::server {

bool PrepareGrpcRuntime() {
  // Our only client channel (to the kubelet) carries Register calls with deadlines, whose own
  // waits poll the connection; the 5-second safety-net poll is about 40 of an idle minute's
  // 160 wake-ups. gRPC reads the variable once, when it initialises.
  ::setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "0", /*overwrite=*/0);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // The operator's way back to gRPC's own schedule, should the quiet one ever misbehave.
  const char* timers = std::getenv("RDMADP_GRPC_TIMERS");
  const bool grpc_timers = timers != nullptr && std::strcmp(timers, "grpc") == 0;
  if (timers != nullptr && !grpc_timers && std::strcmp(timers, "quiet") != 0) {
    std::fprintf(stderr,
                 "warning: RDMADP_GRPC_TIMERS=%s is not 'grpc' or 'quiet'; using 'quiet' (gRPC's "
                 "timer thread sleeps until a timer is due)\n",
                 timers);
  }
  const bool quiet_timers = !grpc_timers && UseQuietTimers();
  return UseQuietEventEngine() && quiet_timers;
}

void DisableBandwidthProbing(grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
}

void DisableBandwidthProbing(grpc::ChannelArguments& args) {
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
}

}  // namespace rdmadp::server
