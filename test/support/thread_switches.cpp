#include "test/support/thread_switches.h"

#include <filesystem>
#include <fstream>

namespace rdmadp::testing {

long ContextSwitchesOfThreads(pid_t pid, const std::string& name) {
  long switches = 0;
  std::error_code ec;  // a thread may end while we look
  const std::filesystem::path task = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& entry : std::filesystem::directory_iterator(task, ec)) {
    std::string comm;
    std::getline(std::ifstream(entry.path() / "comm"), comm);
    if (comm != name) continue;
    std::ifstream status(entry.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.find("ctxt_switches:") != std::string::npos) {
        switches += std::stol(line.substr(line.find(':') + 1));
      }
    }
  }
  return switches;
}

}  // namespace rdmadp::testing
