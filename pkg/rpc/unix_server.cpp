#include "pkg/rpc/unix_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <unistd.h>

#include <chrono>

#include "absl/status/status.h"
#include "pkg/rpc/grpc_runtime.h"
#include "pkg/rpc/socket_path.h"
#include "pkg/text/cat.h"

namespace rdmadp::rpc {

UnixServer::UnixServer(std::vector<std::string> paths)
    : paths_(std::move(paths)), inodes_(paths_.size(), 0) {}

absl::StatusOr<std::unique_ptr<UnixServer>> UnixServer::Start(UnixServerSpec spec) {
  for (const std::string& path : spec.socket_paths) {
    if (auto ready = PrepareSocketPath(path); !ready.ok()) return ready;
  }
  std::unique_ptr<UnixServer> s(new UnixServer(spec.socket_paths));
  grpc::ServerBuilder builder;
  DisableBandwidthProbing(builder);  // grpc_runtime.h: no probe timers to wake us later
  std::vector<int> bound(s->paths_.size(), 0);
  for (size_t i = 0; i < s->paths_.size(); ++i) {
    builder.AddListeningPort("unix:" + HiddenSocketPath(s->paths_[i]),
                             grpc::InsecureServerCredentials(), &bound[i]);
  }
  for (grpc::Service* service : spec.services) builder.RegisterService(service);
  s->cq_ = builder.AddCompletionQueue();
  s->server_ = builder.BuildAndStart();
  for (size_t i = 0; i < s->paths_.size(); ++i) {
    if (s->server_ && bound[i] != 0) continue;
    for (const std::string& path : s->paths_) ::unlink(HiddenSocketPath(path).c_str());
    return absl::UnavailableError(Cat("cannot listen on ", HiddenSocketPath(s->paths_[i]),
                                      ": check that its directory is writable"));
  }
  spec.serve_calls(s->cq_.get());
  s->cq_thread_ = std::make_unique<CqThread>(s->cq_.get());
  for (size_t i = 0; i < s->paths_.size(); ++i) {
    auto inode = PublishSocket(s->paths_[i]);
    if (!inode.ok()) return inode.status();
    s->inodes_[i] = *inode;
  }
  return s;
}

void UnixServer::Unpublish(size_t index) {
  RemoveOwnSocket(paths_.at(index), inodes_.at(index));
  inodes_.at(index) = 0;
}

UnixServer::~UnixServer() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  if (cq_) {
    QueueGate::Shutdown(cq_.get());
    if (cq_thread_) {
      cq_thread_.reset();  // joins once every call's last tag was delivered
    } else {
      void* tag = nullptr;
      bool ok = false;
      while (cq_->Next(&tag, &ok)) static_cast<Tag*>(tag)->on(ok);
    }
    QueueGate::Forget(cq_.get());
  }
  server_.reset();
  cq_.reset();
  for (size_t i = 0; i < paths_.size(); ++i) RemoveOwnSocket(paths_[i], inodes_[i]);
}

}  // namespace rdmadp::rpc
