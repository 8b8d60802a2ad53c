#include "test/support/plugin_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "test/support/temp_dir.h"

extern char** environ;

namespace rdmadp::testing {

std::string PluginBinary() {
  // Overridable, so that a long test loop can run copies while the tree is rebuilt.
  const char* env = std::getenv("TEST_PLUGIN_BINARY");
  return env != nullptr && *env != '\0' ? env : TEST_PLUGIN_BINARY;
}

PluginProcess::PluginProcess(const std::string& binary, const std::vector<std::string>& args,
                             const std::string& stderr_path) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!stderr_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 2, 1);
  }
  // The child starts with an empty signal mask, whatever the test process blocks.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  if (const int err = posix_spawn(&pid_, binary.c_str(), &actions, &attr, argv.data(), environ);
      err != 0) {
    pid_ = -1;
    spawn_error_ = binary + ": posix_spawn: " + std::strerror(err);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (pid_ > 0) pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
}

PluginProcess::~PluginProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
  if (pidfd_ >= 0) ::close(pidfd_);
}

void PluginProcess::Signal(int signo) const {
  if (pid_ > 0 && !status_) ::kill(pid_, signo);
}

std::optional<int> PluginProcess::WaitExit(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  if (pid_ <= 0 || pidfd_ < 0) return std::nullopt;
  pollfd pfd{pidfd_, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
  int st = 0;
  if (::waitpid(pid_, &st, 0) != pid_) return std::nullopt;
  status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return status_;
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunResult RunShell(const std::string& command) {
  RunResult out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.output.append(buf, n);
  const int raw = ::pclose(p);
  out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

RunResult RunToExit(const std::vector<std::string>& args, std::chrono::milliseconds timeout) {
  TempDir dir;
  const std::string out = dir.path() + "/output";
  RunResult result;
  {
    PluginProcess p(PluginBinary(), args, out);
    auto status = p.WaitExit(timeout);
    result.status = status.value_or(-1);
  }
  result.output = ReadFileOrEmpty(out);
  return result;
}

}  // namespace rdmadp::testing
