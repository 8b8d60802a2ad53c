#include "pkg/rpc/unix_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "absl/status/status.h"
#include "pkg/rpc/grpc_runtime.h"
#include "pkg/rpc/socket_path.h"
#include "pkg/text/cat.h"

namespace rdmadp::rpc {
namespace {

// Why gRPC could not listen, as far as we can tell: it says nothing itself beyond its own
// log lines. Descriptors first (the hardening round at eee2a98 saw 0 of 8 resources
// registered under `ulimit -n 32` with a message that blamed the directory).
std::string WhyNotListening(const std::string& socket) {
  struct rlimit lim {};
  const bool limited = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY;
  // A fresh socket first: when it fails for want of descriptors, nothing can count them.
  const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int probe_errno = errno;
  if (probe >= 0) ::close(probe);
  if (probe < 0 && (probe_errno == EMFILE || probe_errno == ENFILE)) {
    return Cat(": the process is out of file descriptors",
               limited ? Cat(" (at its limit of ", lim.rlim_cur, ")") : std::string(),
               ": raise the container's RLIMIT_NOFILE (ulimit -n)");
  }
  if (limited) {
    // gRPC needs a handful per server (listener, epoll, wakeup fds).
    size_t open = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
      ++open;
    }
    if (!ec && open + 8 >= lim.rlim_cur) {
      return Cat(": the process is nearly out of file descriptors (", open, " open, limit ",
                 lim.rlim_cur, "): raise the container's RLIMIT_NOFILE (ulimit -n)");
    }
  }
  const std::string dir = socket.substr(0, socket.rfind('/'));
  if (::access(dir.c_str(), W_OK) != 0) {
    return Cat(": its directory ", dir, " is not writable: ", std::strerror(errno));
  }
  return ": gRPC could not bind it (its own log lines say why)";
}

}  // namespace

UnixServer::UnixServer(std::vector<std::string> paths)
    : paths_(std::move(paths)), inodes_(paths_.size(), 0) {}

absl::StatusOr<std::unique_ptr<UnixServer>> UnixServer::Start(const UnixServerSpec& spec) {
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
    const std::string why = WhyNotListening(HiddenSocketPath(s->paths_[i]));
    for (const std::string& path : s->paths_) ::unlink(HiddenSocketPath(path).c_str());
    return absl::UnavailableError(Cat("cannot listen on ", HiddenSocketPath(s->paths_[i]), why));
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
