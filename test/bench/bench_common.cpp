#include "test/bench/bench_common.h"

#include <dirent.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace rdmadp::bench {

ProcessFigures Figures(pid_t pid) {
  ProcessFigures f;
  const std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream status(proc + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) f.rss_kib = std::stol(line.substr(6));
    if (line.rfind("Threads:", 0) == 0) f.threads = std::stol(line.substr(8));
  }
  std::ifstream stat(proc + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  // Fields after the command name (which may contain spaces) start after ") ".
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::string field;
  unsigned long utime = 0, stime = 0;
  for (int i = 3; rest >> field; ++i) {
    if (i == 14) utime = std::stoul(field);
    if (i == 15) {
      stime = std::stoul(field);
      break;
    }
  }
  f.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  if (DIR* dir = opendir((proc + "/task").c_str())) {
    while (const dirent* e = readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream sched(proc + "/task/" + e->d_name + "/schedstat");
      unsigned long long on_cpu_ns = 0;
      if (sched >> on_cpu_ns) f.on_cpu_seconds += static_cast<double>(on_cpu_ns) / 1e9;
      std::ifstream ts(proc + "/task/" + e->d_name + "/status");
      for (std::string line; std::getline(ts, line);) {
        if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
          f.context_switches += std::stol(line.substr(24));
        }
        if (line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
          f.context_switches += std::stol(line.substr(27));
        }
      }
    }
    closedir(dir);
  }
  return f;
}

std::map<std::string, long> RssByMapping(pid_t pid) {
  std::map<std::string, long> rss;
  std::ifstream smaps("/proc/" + std::to_string(pid) + "/smaps");
  std::string current = "[anon]";
  for (std::string line; std::getline(smaps, line);) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find('-') <
            line.find(' ')) {  // a mapping header: "start-end perms off dev inode path"
      std::istringstream fields(line);
      std::string range, perms, skip, path;
      fields >> range >> perms >> skip >> skip >> skip >> path;
      const auto slash = path.rfind('/');
      const auto dash = range.find('-');
      const unsigned long size = std::stoul(range.substr(dash + 1), nullptr, 16) -
                                 std::stoul(range.substr(0, dash), nullptr, 16);
      if (!path.empty()) {
        current = slash == std::string::npos ? path : path.substr(slash + 1);
      } else if (size == 8ul << 20 && perms == "rw-p") {
        current = "[anon: thread stacks]";  // glibc's default 8 MiB stacks (guard page apart)
      } else {
        current = "[anon]";
      }
    } else if (line.rfind("Rss:", 0) == 0) {
      rss[current] += std::stol(line.substr(4));
    }
  }
  return rss;
}

ThreadActivity ThreadActivityOf(pid_t pid, pid_t tid) {
  const std::string base = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
  ThreadActivity a;
  unsigned long long on_cpu_ns = 0;
  if (std::ifstream(base + "/schedstat") >> on_cpu_ns) {
    a.on_cpu_seconds = static_cast<double>(on_cpu_ns) / 1e9;
  }
  std::ifstream ts(base + "/status");
  for (std::string line; std::getline(ts, line);) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
      a.context_switches += std::stol(line.substr(24));
    }
    if (line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
      a.context_switches += std::stol(line.substr(27));
    }
  }
  return a;
}

std::map<std::string, ThreadActivity> ActivityByThreadName(pid_t pid) {
  std::map<std::string, ThreadActivity> by_name;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  if (DIR* dir = opendir(task.c_str())) {
    while (const dirent* e = readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      std::string name;
      std::getline(std::ifstream(task + "/" + e->d_name + "/comm"), name);
      const ThreadActivity one = ThreadActivityOf(pid, std::atoi(e->d_name));
      ThreadActivity& a = by_name[name];
      a.context_switches += one.context_switches;
      a.on_cpu_seconds += one.on_cpu_seconds;
    }
    closedir(dir);
  }
  return by_name;
}

void Row(const std::string& benchmark, const std::string& metric, double value,
         const std::string& unit, const std::string& baseline, const std::string& target,
         const std::string& verdict) {
  std::printf("%-22s %-44s %12s %-6s | baseline %-22s | target %-16s %s\n", benchmark.c_str(),
              metric.c_str(), Fmt(value).c_str(), unit.c_str(), baseline.c_str(), target.c_str(),
              verdict.c_str());
  std::fflush(stdout);
  if (const char* path = std::getenv("BENCH_RESULTS")) {
    std::ofstream(path, std::ios::app)
        << benchmark << '\t' << metric << '\t' << Fmt(value) << '\t' << unit << '\t' << baseline
        << '\t' << target << '\t' << verdict << '\n';
  }
}

long PeakRssKib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace rdmadp::bench
