// The process_* figures, from /proc/self. Read on the event loop at scrape time.
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>

#include "pkg/fd/files.h"
#include "pkg/metrics/prometheus.h"

namespace rdmadp::metrics {

ProcessView ReadProcess(double start_time_seconds) {
  ProcessView p;
  p.start_time_seconds = start_time_seconds;
  long pages = 0;
  long resident = 0;
  if (auto statm = fd::ReadFile("/proc/self/statm", 256)) {  // "size resident shared ..."
    const char* end = statm->data() + statm->size();
    auto size = std::from_chars(statm->data(), end, pages);
    if (size.ec == std::errc() && size.ptr < end &&
        std::from_chars(size.ptr + 1, end, resident).ec == std::errc()) {
      p.resident_memory_bytes =
          static_cast<double>(resident) * static_cast<double>(::getpagesize());
    }
  }
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0) {
    auto secs = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    p.cpu_seconds = secs(usage.ru_utime) + secs(usage.ru_stime);
  }
  const struct mallinfo2 heap = ::mallinfo2();
  p.heap_in_use_bytes = static_cast<double>(heap.uordblks + heap.hblkhd);
  p.heap_free_bytes = static_cast<double>(heap.fordblks);
  p.open_fds = static_cast<double>(fd::ListDir("/proc/self/fd").size());
  return p;
}

}  // namespace rdmadp::metrics
