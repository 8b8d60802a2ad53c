// One gRPC server on one or more unix sockets, as both front ends need it: each socket is
// published atomically (bound and listening under a hidden name, then renamed into place,
// socket_path.h), in the order given, so that a client reacting to a file never meets
// ECONNREFUSED and the kubelet never learns of an endpoint that does not answer yet. Calls
// are served with the completion-queue API on one thread that blocks while idle
// (cq_call.h). Shutdown is ordered: the owner ends its streams, then the server gets a
// short grace period, the queue drains, and only the files this server published are
// removed (a newer server may own the path by then).
//
// Contract: the services passed in, and whatever `serve_calls` hands the queue, must
// outlive this object (declare it last in its owner). Created and destroyed on one thread
// (the event loop); Unpublish() on that thread too.
#pragma once

#include <grpcpp/completion_queue.h>
#include <grpcpp/server.h>
#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/rpc/cq_call.h"

namespace rdmadp::rpc {

struct UnixServerSpec {
  std::vector<std::string> socket_paths;  // absolute; published in this order
  std::vector<grpc::Service*> services;   // async services, registered on every socket
  // Puts one call of every method in wait on `cq`; runs once, before the queue's thread.
  std::function<void(grpc::ServerCompletionQueue* cq)> serve_calls;
};

class UnixServer {
 public:
  // Checks every socket's directory, replaces stale files of ours, listens and publishes.
  // One line naming the fix on failure (a missing or unwritable directory).
  static absl::StatusOr<std::unique_ptr<UnixServer>> Start(const UnixServerSpec& spec);
  // Shuts down within a short grace period (the owner ended its streams first: the grace
  // only bounds a peer that stopped reading), drains the queue, removes its socket files.
  ~UnixServer();
  UnixServer(const UnixServer&) = delete;
  UnixServer& operator=(const UnixServer&) = delete;

  // Removes socket `index` now, while the server still answers on the others (the DRA
  // driver withdraws its registration before it stops answering Prepare).
  void Unpublish(size_t index);
  const std::string& socket_path(size_t index) const { return paths_.at(index); }

 private:
  explicit UnixServer(std::vector<std::string> paths);

  const std::vector<std::string> paths_;
  std::vector<ino_t> inodes_;  // of each published file (0: not published, or removed)
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::unique_ptr<CqThread> cq_thread_;
};

}  // namespace rdmadp::rpc
