// One resource's gRPC server on its own unix socket. Owns the socket file: created on
// Start, removed on destruction if it is still the file Start created (and nothing else is
// ever removed).
//
// The socket is published atomically: bound and listening under a hidden name (".<file>",
// which the kubelet's plugin watcher ignores), then rename()d into place. A client that
// reacts to the file's appearance never meets ECONNREFUSED (and gRPC's 1 s back-off).
// Served with gRPC's completion-queue API on one thread per server that blocks while idle
// (see cq_call.h). Created and destroyed on the event-loop thread; Publish() is called
// there too.
#pragma once

#include <grpcpp/completion_queue.h>
#include <grpcpp/server.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "pkg/pool/snapshot.h"
#include "pkg/server/device_plugin_service.h"
#include "pkg/server/stream_hub.h"

namespace rdmadp::server {

struct ResourceServerOptions {
  std::string socket_path;  // absolute
  // Also serve pluginregistration.Registration (watcher and auto modes).
  bool serve_watcher_registration = false;
  StreamHub::StreamEndFn on_stream_end;    // gRPC thread
  StreamHub::StreamOpenFn on_stream_open;  // gRPC thread
  WatcherHandlers::Hooks watcher;          // gRPC thread
  std::function<void()> on_allocate;       // gRPC thread, after each Allocate answered
};

class ResourceServer {
 public:
  // Listens on options.socket_path (replacing a stale file of ours) and starts serving.
  static absl::StatusOr<std::unique_ptr<ResourceServer>> Start(ResourceServerOptions options,
                                                               pool::SnapshotPtr initial);
  // Ends every stream, stops the server within a short grace period, removes the socket.
  ~ResourceServer();

  ResourceServer(const ResourceServer&) = delete;
  ResourceServer& operator=(const ResourceServer&) = delete;

  // Swaps in a new snapshot; pushes it to open streams if the advertised content changed.
  bool Publish(pool::SnapshotPtr snapshot) { return hub_.Publish(std::move(snapshot)); }
  // Sends the current list to every open stream again (StreamHub::Resend).
  void Resend() { hub_.Resend(); }
  pool::SnapshotPtr snapshot() const { return hub_.Current(); }
  const std::string& socket_path() const { return options_.socket_path; }
  size_t open_streams() const { return hub_.open_streams(); }
  // Id of the latest stream opened (0: none yet). Its open event may still be on its way to
  // the event loop.
  uint64_t streams_opened() const { return hub_.streams_opened(); }
  uint64_t allocations() const { return plugin_.allocations(); }
  uint64_t allocate_rejections() const { return plugin_.rejections(); }

 private:
  ResourceServer(ResourceServerOptions options, pool::SnapshotPtr initial);
  void ServeCalls();  // puts one call of every method in wait

  const ResourceServerOptions options_;
  StreamHub hub_;
  DevicePluginHandlers plugin_;
  std::unique_ptr<WatcherHandlers> watcher_;
  DevicePluginService plugin_service_;  // ListAndWatch raw (stream_hub.h)
  std::unique_ptr<pluginregistration::Registration::AsyncService> watcher_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::unique_ptr<CqThread> cq_thread_;
  ino_t inode_ = 0;  // of the published socket file
};

}  // namespace rdmadp::server
