#include "pkg/server/resource_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/status/status.h"
#include "pkg/text/cat.h"

namespace rdmadp::server {
namespace {

std::string DirName(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

ResourceServer::ResourceServer(ResourceServerOptions options, pool::SnapshotPtr initial)
    : options_(std::move(options)),
      hub_(std::move(initial), options_.on_stream_end),
      plugin_(&hub_) {}

absl::StatusOr<std::unique_ptr<ResourceServer>> ResourceServer::Start(ResourceServerOptions options,
                                                                      pool::SnapshotPtr initial) {
  const std::string dir = DirName(options.socket_path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(Cat("socket directory ", dir,
                                             " does not exist (is the kubelet running, and is "
                                             "--kubelet-root-dir right?)"));
  }
  // Our socket names are unique per instance, so a file at this path is ours from before.
  if (::unlink(options.socket_path.c_str()) != 0 && errno != ENOENT) {
    return absl::PermissionDeniedError(
        Cat("cannot remove stale socket ", options.socket_path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<ResourceServer> rs(new ResourceServer(std::move(options), std::move(initial)));
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort("unix:" + rs->options_.socket_path, grpc::InsecureServerCredentials(),
                           &bound);
  builder.RegisterService(&rs->plugin_);
  if (rs->options_.serve_watcher_registration) {
    rs->watcher_ = std::make_unique<WatcherRegistrationService>(
        rs->snapshot()->resource().FullName(), rs->options_.socket_path, rs->options_.watcher);
    builder.RegisterService(rs->watcher_.get());
  }
  rs->server_ = builder.BuildAndStart();
  if (!rs->server_ || bound == 0) {
    return absl::UnavailableError(
        Cat("cannot listen on ", rs->options_.socket_path, ": check that ", dir, " is writable"));
  }
  return rs;
}

ResourceServer::~ResourceServer() {
  if (server_) {
    hub_.EndAllStreams();
    // Streams were asked to finish; the deadline only bounds a kubelet that stopped reading.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    server_->Wait();
  }
  ::unlink(options_.socket_path.c_str());
}

}  // namespace rdmadp::server
