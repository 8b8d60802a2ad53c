// One resource's gRPC server on its own unix socket (a pkg/rpc UnixServer: published
// atomically, removed on destruction if it is still the file Start created, and nothing else
// is ever removed): v1beta1.DevicePlugin, and in watcher mode the plugin watcher's
// Registration service on the same socket.
//
// Threads: created and destroyed on the event-loop thread; Publish() and Resend() are called
// there too. The handlers run on the server's completion-queue thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "pkg/deviceplugin/device_plugin_service.h"
#include "pkg/deviceplugin/list_and_watch.h"
#include "pkg/pool/snapshot.h"
#include "pkg/rpc/plugin_watcher.h"
#include "pkg/rpc/unix_server.h"

namespace rdmadp::deviceplugin {

struct ResourceServerOptions {
  std::string socket_path;  // absolute
  // Also serve pluginregistration.Registration (watcher and auto modes).
  bool serve_watcher_registration = false;
  StreamHub::StreamEndFn on_stream_end;    // gRPC thread
  StreamHub::StreamOpenFn on_stream_open;  // gRPC thread
  rpc::WatcherHandlers::Hooks watcher;     // gRPC thread
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
  bool Publish(const pool::SnapshotPtr& snapshot) {
    return hub_.PublishIf(snapshot, AdvertisedChanged);
  }
  // Sends the current list to every open stream again (rpc::LatestValueHub::Resend).
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
  void ServeCalls(grpc::ServerCompletionQueue* cq);  // one call of every method in wait

  const ResourceServerOptions options_;
  StreamHub hub_;
  DevicePluginHandlers plugin_;
  std::unique_ptr<rpc::WatcherHandlers> watcher_;
  DevicePluginService plugin_service_;  // ListAndWatch raw (list_and_watch.h)
  std::unique_ptr<pluginregistration::Registration::AsyncService> watcher_service_;
  std::unique_ptr<rpc::UnixServer> rpc_;  // last: goes first, before what it serves
};

}  // namespace rdmadp::deviceplugin
