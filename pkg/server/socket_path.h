// Socket naming and liveness. Names are unique per plugin instance, so an old and a new
// instance can serve side by side during a rolling update (kubelet-contract.md §13).
#pragma once

#include <string>

namespace rdmadp::server {

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

}  // namespace rdmadp::server
