// The process_* figures, from /proc/self. Read on the event loop at scrape time.
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "pkg/metrics/prometheus.h"

namespace rdmadp::metrics {

ProcessView ReadProcess(double start_time_seconds) {
  ProcessView p;
  p.start_time_seconds = start_time_seconds;
  long pages = 0;
  long resident = 0;
  if (std::ifstream statm("/proc/self/statm"); statm >> pages >> resident) {
    p.resident_memory_bytes = static_cast<double>(resident) * static_cast<double>(::getpagesize());
  }
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) == 0) {
    auto secs = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
    p.cpu_seconds = secs(usage.ru_utime) + secs(usage.ru_stime);
  }
  const struct mallinfo2 heap = ::mallinfo2();
  p.heap_in_use_bytes = static_cast<double>(heap.uordblks + heap.hblkhd);
  p.heap_free_bytes = static_cast<double>(heap.fordblks);
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++p.open_fds;
  }
  return p;
}

}  // namespace rdmadp::metrics
