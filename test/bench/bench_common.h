// Shared by the benchmark programs: timing, percentiles, process figures, and result rows.
// Each row is one figure with its same-run baseline and target; rows are printed as they
// come and appended (tab-separated) to $BENCH_RESULTS for scripts/bench.sh's final table.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace rdmadp::bench {

using Clock = std::chrono::steady_clock;

inline double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Nearest-rank percentile of `v` (sorted copy), p in [0, 100].
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::max(1.0, std::ceil(p / 100.0 * v.size())));
  return v[std::min(rank, v.size()) - 1];
}
inline double Median(std::vector<double> v) { return Percentile(std::move(v), 50); }

struct ProcessFigures {
  long rss_kib = 0;
  long threads = 0;
  double cpu_seconds = 0;  // user + system
  // Time on a CPU summed over the live threads (schedstat, nanoseconds): idle minutes use
  // ~1 ms, below the 10 ms clock tick cpu_seconds counts in.
  double on_cpu_seconds = 0;
  long context_switches = 0;  // voluntary + involuntary, all threads: the wake-ups
};

ProcessFigures Figures(pid_t pid);

// Peak resident KiB of a process (VmHWM in /proc/<pid>/status); -1 when unreadable.
long PeakRssKib(pid_t pid);

// Resident KiB per mapped file, from /proc/<pid>/smaps: "[heap]", "[stack]" (the main
// thread's), "[anon: thread stacks]" (8 MiB anonymous mappings: the other threads' stacks)
// and "[anon]" for other anonymous memory (malloc's large blocks, gRPC's own mappings).
std::map<std::string, long> RssByMapping(pid_t pid);

// Context switches and on-CPU time so far, summed per thread name (/proc/<pid>/task/*/comm).
struct ThreadActivity {
  long context_switches = 0;
  double on_cpu_seconds = 0;
};
std::map<std::string, ThreadActivity> ActivityByThreadName(pid_t pid);
ThreadActivity ThreadActivityOf(pid_t pid, pid_t tid);  // one thread of pid

// One result row. `verdict` is "ok", "MISSED" or "info".
void Row(const std::string& benchmark, const std::string& metric, double value,
         const std::string& unit, const std::string& baseline, const std::string& target,
         const std::string& verdict);

inline std::string Fmt(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

inline std::string Verdict(bool met) { return met ? "ok" : "MISSED"; }

}  // namespace rdmadp::bench
