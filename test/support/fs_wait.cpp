#include "test/support/fs_wait.h"

#include <poll.h>
#include <sys/inotify.h>

#include "pkg/fd/unique_fd.h"

namespace rdmadp::testing {

bool WaitForFiles(const std::string& dir, const std::function<bool()>& pred,
                  std::chrono::milliseconds timeout) {
  UniqueFd fd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  ::inotify_add_watch(fd.Get(), dir.c_str(),
                      IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_TO | IN_CLOSE_WRITE);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (pred()) return true;  // checked after the watch exists: no event can be missed
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return pred();
    pollfd p{fd.Get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) > 0) {
      char buf[4096];
      while (::read(fd.Get(), buf, sizeof(buf)) > 0) {
      }
    }
  }
}

}  // namespace rdmadp::testing
