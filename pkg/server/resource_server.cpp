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

std::string HiddenPath(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." + path
                                    : Cat(path.substr(0, slash + 1), ".", path.substr(slash + 1));
}

}  // namespace

ResourceServer::ResourceServer(ResourceServerOptions options, pool::SnapshotPtr initial)
    : options_(std::move(options)),
      hub_(std::move(initial), options_.on_stream_end, options_.on_stream_open),
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
  // Our socket names are unique per instance, so files at these paths are ours from before.
  const std::string hidden = HiddenPath(options.socket_path);
  for (const std::string& path : {hidden, options.socket_path}) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return absl::PermissionDeniedError(
          Cat("cannot remove stale socket ", path, ": ", std::strerror(errno)));
    }
  }
  std::unique_ptr<ResourceServer> rs(new ResourceServer(std::move(options), std::move(initial)));
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort("unix:" + hidden, grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(&rs->plugin_);
  if (rs->options_.serve_watcher_registration) {
    rs->watcher_ = std::make_unique<WatcherRegistrationService>(
        rs->snapshot()->resource().FullName(), rs->options_.socket_path, rs->options_.watcher);
    builder.RegisterService(rs->watcher_.get());
  }
  rs->server_ = builder.BuildAndStart();
  if (!rs->server_ || bound == 0) {
    ::unlink(hidden.c_str());
    return absl::UnavailableError(
        Cat("cannot listen on ", hidden, ": check that ", dir, " is writable"));
  }
  // Listening already: the file appears under its real name only now.
  if (::rename(hidden.c_str(), rs->options_.socket_path.c_str()) != 0 ||
      ::lstat(rs->options_.socket_path.c_str(), &st) != 0) {
    const int err = errno;
    ::unlink(hidden.c_str());
    return absl::UnavailableError(
        Cat("cannot publish ", rs->options_.socket_path, ": ", std::strerror(err)));
  }
  rs->inode_ = st.st_ino;
  return rs;
}

ResourceServer::~ResourceServer() {
  if (server_) {
    hub_.EndAllStreams();
    // Streams were asked to finish; the deadline only bounds a kubelet that stopped reading.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    server_->Wait();
  }
  // Only our own file: a newer server may have published at the same path already.
  struct stat st {};
  if (inode_ != 0 && ::lstat(options_.socket_path.c_str(), &st) == 0 && st.st_ino == inode_) {
    ::unlink(options_.socket_path.c_str());
  }
}

}  // namespace rdmadp::server
