// Socket naming and liveness. Names are unique per plugin instance, so an old and a new
// instance can serve side by side during a rolling update (docs/kubelet-versions.md).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace rdmadp::rpc {

// 8 random hex characters, fixed for the life of the process.
std::string NewInstanceId();

// `<resourceName>-<instance>.sock`.
std::string SocketFileName(const std::string& resource_name, const std::string& instance_id);

// True when something accepts connections on the unix socket at `path`. A socket file with
// no listener (ECONNREFUSED) belongs to a dead process. Never blocks (a full backlog counts
// as listening); nothing reaches the listener's handlers.
bool SocketHasListener(const std::string& path);

// Why `path` cannot be a kubelet socket at all ("" if it is a socket or does not exist):
// e.g. "<path> is a directory, not a unix socket".
std::string NotASocketProblem(const std::string& path);

// Publishing a socket atomically: bound and listening under a hidden name (".<file>",
// which the kubelet's plugin watcher ignores), then renamed into place, so a client that
// reacts to the file never meets ECONNREFUSED.
// `dir/.file` for `dir/file`.
std::string HiddenSocketPath(const std::string& path);
// Checks that the directory exists and removes our stale files at `path` and its hidden
// twin (names are unique per instance, so they are ours). One line naming the fix if not.
absl::Status PrepareSocketPath(const std::string& path);
// Makes the hidden socket owner-only (only the kubelet, as root, connects: under umask 000
// it would be world-writable) and renames it to `path`. Returns the published inode; on
// failure the hidden file is removed.
absl::StatusOr<ino_t> PublishSocket(const std::string& path);
// Removes `path` if it is still the file with `inode` (a newer server may own the path).
void RemoveOwnSocket(const std::string& path, ino_t inode);

// Says which instance a socket file name belongs to (its 8 hex characters), or nullopt when
// the name is not one of ours.
using InstanceOfFn = std::function<std::optional<std::string>(const std::string& file)>;
// Removes the sockets in `dir` (published, or still hidden) that are named like ours, belong
// to another instance and have nobody accepting on them: provably dead. Logs each one.
void RemoveDeadSockets(const std::string& dir, const std::string& own_instance,
                       const InstanceOfFn& instance_of);

}  // namespace rdmadp::rpc
