// Facts both front ends read when they hand an event to a registration state machine
// (pkg/lifecycle): which kubelet.sock file exists now, and the wall-clock stamp a gRPC
// handler puts on a call. Functions of the file system and the clock: any thread.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <ctime>
#include <string>

#include "pkg/lifecycle/registration_fsm.h"

namespace rdmadp::frontend {

// CLOCK_REALTIME in ns, as the kernel stamps kubelet.sock's ctime: a gRPC handler stamps its
// call with it, so the state machine can tell which kubelet incarnation made the call.
inline int64_t WallNowNs() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

// Which kubelet.sock file is at `path` now (inode 0: none).
inline lifecycle::SocketId SocketIdOf(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  return {.inode = static_cast<uint64_t>(st.st_ino),
          .ctime_ns = st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec};
}

}  // namespace rdmadp::frontend
