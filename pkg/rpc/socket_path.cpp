#include "pkg/rpc/socket_path.h"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "pkg/fd/files.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/log/log.h"
#include "pkg/text/cat.h"

namespace rdmadp::rpc {

std::string NewInstanceId() {
  unsigned char bytes[4] = {};
  if (::getrandom(bytes, sizeof(bytes), 0) != sizeof(bytes)) {
    const auto pid = static_cast<unsigned>(::getpid());
    std::memcpy(bytes, &pid, sizeof(bytes));
  }
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%02x%02x%02x%02x", bytes[0], bytes[1], bytes[2], bytes[3]);
  return hex;
}

std::string SocketFileName(const std::string& resource_name, const std::string& instance_id) {
  return Cat(resource_name, "-", instance_id, ".sock");
}

bool SocketHasListener(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking: a listener whose backlog is full (a stopped or hung kubelet) would block a
  // plain connect() for ever; it answers EAGAIN instead, and it does listen.
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.Valid()) return false;
  return ::connect(fd.Get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0 ||
         errno == EAGAIN;
}

std::string NotASocketProblem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISSOCK(st.st_mode)) return "";
  const char* what = S_ISDIR(st.st_mode)   ? "a directory"
                     : S_ISREG(st.st_mode) ? "a regular file"
                                           : "not a unix socket";
  return Cat(path, " is ", what,
             S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) ? ", not a unix socket" : "",
             " (is --kubelet-root-dir the kubelet's root directory?)");
}

std::string HiddenSocketPath(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." + path
                                    : Cat(path.substr(0, slash + 1), ".", path.substr(slash + 1));
}

absl::Status PrepareSocketPath(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(Cat("socket directory ", dir,
                                             " does not exist (is the kubelet running, and is "
                                             "--kubelet-root-dir right?)"));
  }
  for (const std::string& p : {HiddenSocketPath(path), path}) {
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) {
      const int err = errno;
      if (err == EACCES || err == EPERM || err == EROFS) {  // about the directory, not the file
        return absl::PermissionDeniedError(
            Cat("cannot create sockets in ", dir, ": ", std::strerror(err),
                " (run the plugin as root, as the DaemonSet does, or give it write access)"));
      }
      return absl::PermissionDeniedError(
          Cat("cannot remove stale socket ", p, ": ", std::strerror(err)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ino_t> PublishSocket(const std::string& path) {
  const std::string hidden = HiddenSocketPath(path);
  if (::chmod(hidden.c_str(), 0600) != 0) {
    const int err = errno;
    ::unlink(hidden.c_str());
    return absl::UnavailableError(Cat("cannot set the mode of ", hidden, ": ", std::strerror(err)));
  }
  struct stat st {};
  if (::rename(hidden.c_str(), path.c_str()) != 0 || ::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    ::unlink(hidden.c_str());
    return absl::UnavailableError(Cat("cannot publish ", path, ": ", std::strerror(err)));
  }
  return st.st_ino;
}

void RemoveOwnSocket(const std::string& path, ino_t inode) {
  struct stat st {};
  if (inode != 0 && ::lstat(path.c_str(), &st) == 0 && st.st_ino == inode) ::unlink(path.c_str());
}

void RemoveDeadSockets(const std::string& dir, const std::string& own_instance,
                       const InstanceOfFn& instance_of) {
  for (const std::string& name : fd::ListDir(dir)) {
    const std::string path = Cat(dir, "/", name);
    // A hidden name: not yet published by an instance that died.
    const std::optional<std::string> id =
        instance_of(name.starts_with(".") ? name.substr(1) : name);
    if (!id || *id == own_instance || id->size() != 8 ||
        id->find_first_not_of("0123456789abcdef") != std::string::npos) {
      continue;
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (SocketHasListener(path)) continue;
    if (::unlink(path.c_str()) == 0) {
      log::Info(Cat("removed stale socket ", path, " of a dead instance (nothing accepts on it)"));
    }
  }
}

}  // namespace rdmadp::rpc
