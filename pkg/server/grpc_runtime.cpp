#include "pkg/server/grpc_runtime.h"

#include <absl/synchronization/mutex.h>

#include <cstdlib>

#include "pkg/server/quiet_event_engine.h"

namespace rdmadp::server {

bool PrepareGrpcRuntime() {
  // Our only client channel (to the kubelet) carries Register calls with deadlines, whose own
  // waits poll the connection; the 5-second safety-net poll is about 40 of an idle minute's
  // 160 wake-ups. gRPC reads the variable once, when it initialises.
  ::setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "0", /*overwrite=*/0);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return UseQuietEventEngine();
}

}  // namespace rdmadp::server
