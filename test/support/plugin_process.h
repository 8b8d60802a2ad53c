// Runs the real k8s-rdma-shared-dp binary as a child process for e2e tests, the demo and
// benchmarks. Exit waits use a pidfd and poll(2) with a timeout: no sleeps.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rdmadp::testing {

// Path of the plugin binary built next to the tests (set by CMake).
std::string PluginBinary();

class PluginProcess {
 public:
  // Starts `binary args...`; stderr goes to `stderr_path` ("" = inherit).
  PluginProcess(const std::string& binary, const std::vector<std::string>& args,
                const std::string& stderr_path = "");
  ~PluginProcess();  // SIGKILLs a child still running
  PluginProcess(const PluginProcess&) = delete;
  PluginProcess& operator=(const PluginProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Why the child did not start ("" when it did): posix_spawn's error, with the binary.
  const std::string& spawn_error() const { return spawn_error_; }
  void Signal(int signo) const;
  // Exit status (or 128+signal) if the child exits within `timeout`.
  std::optional<int> WaitExit(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  std::optional<int> status_;
  std::string spawn_error_;
};

// Runs the binary to completion (for bad-config checks); returns exit status and stderr.
struct RunResult {
  int status = -1;
  std::string output;  // stdout + stderr
};
RunResult RunToExit(const std::vector<std::string>& args, std::chrono::milliseconds timeout);
// Runs `command` with sh (redirections and all) to completion: exit status, stdout + stderr.
RunResult RunShell(const std::string& command);

std::string ReadFileOrEmpty(const std::string& path);

}  // namespace rdmadp::testing
