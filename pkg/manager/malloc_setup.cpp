#include "pkg/manager/malloc_setup.h"

#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace rdmadp::manager {

namespace {
constexpr std::string_view kTcacheCount = "glibc.malloc.tcache_count";
}  // namespace

std::optional<std::string> TunablesWithoutThreadCaches(const char* current) {
  const std::string_view tunables = current == nullptr ? "" : current;
  // A colon-separated list of name=value.
  for (size_t start = 0; start <= tunables.size();) {
    const size_t end = std::min(tunables.find(':', start), tunables.size());
    const std::string_view entry = tunables.substr(start, end - start);
    if (entry.substr(0, entry.find('=')) == kTcacheCount) return std::nullopt;
    start = end + 1;
  }
  std::string with(tunables);
  if (!with.empty()) with += ':';
  return with.append(kTcacheCount).append("=0");
}

void SetUpMalloc(char** argv) {
  if (const auto tunables = TunablesWithoutThreadCaches(std::getenv("GLIBC_TUNABLES"))) {
    ::setenv("GLIBC_TUNABLES", tunables->c_str(), 1);
    // The file itself, not /proc/self/exe: the process is named after what it executes
    // (ps, pgrep and /proc/<pid>/comm would show "exe").
    char self[PATH_MAX];
    const ssize_t length = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (length > 0) {
      self[length] = '\0';
      ::execv(self, argv);
    }
    std::fprintf(
        stderr,
        "warning: could not restart with GLIBC_TUNABLES=%s (exec of /proc/self/exe's file: %s); "
        "running with glibc's per-thread malloc caches, which grow the heap slowly: set "
        "that variable in the plugin's environment to avoid it\n",
        tunables->c_str(), std::strerror(errno));
  }
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) ::mallopt(M_ARENA_MAX, 1);
}

}  // namespace rdmadp::manager
