#include "pkg/cdi/memlock_hook.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "pkg/fd/unique_fd.h"
#include "pkg/text/cat.h"

namespace rdmadp::cdi {
namespace {

// The hook is a static binary of ~2 MiB; anything far larger at the source is not it.
constexpr size_t kMaxHookBytes = 64 << 20;

std::optional<std::string> ReadFile(const std::string& path, std::string& error) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!fd.Valid() || ::fstat(fd.Get(), &st) != 0) {
    error = Cat(path, ": ", std::strerror(errno));
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) > kMaxHookBytes) {
    error = Cat(path, ": not a regular file of at most ", kMaxHookBytes, " bytes");
    return std::nullopt;
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd.Get(), out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = Cat(path, ": short read");
      return std::nullopt;
    }
    done += static_cast<size_t>(n);
  }
  return out;
}

}  // namespace

std::string BundledMemlockHook() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "rdmadp-memlock-hook";
  std::string exe(buf, static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/') + 1) + "rdmadp-memlock-hook";
}

absl::Status InstallMemlockHook(const std::string& source, const std::string& dest) {
  std::string error;
  const auto content = ReadFile(source, error);
  if (!content) return absl::NotFoundError(Cat("the hook to install: ", error));
  // The runtime runs what is there as root: a directory others can write to is refused.
  const std::string dir = dest.substr(0, dest.rfind('/'));
  struct stat st {};
  if (::stat(dir.empty() ? "/" : dir.c_str(), &st) != 0) {
    return absl::NotFoundError(Cat(dir, ": ", std::strerror(errno)));
  }
  if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::PermissionDeniedError(
        Cat(dir,
            " is not owned by root or is writable by others: the runtime would run "
            "whatever is put there as root"));
  }
  if (::lstat(dest.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
      (st.st_mode & 07777) == 0755) {
    std::string ignored;
    if (ReadFile(dest, ignored) == content) return absl::OkStatus();
  }
  // Every pod's plugin is pid 1: the temporary name is made unique by mkostemp, not the pid.
  std::string tmp = Cat(dest, ".tmp.XXXXXX");
  UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
  if (!fd.Valid()) {
    return absl::InternalError(Cat("cannot create ", tmp, ": ", std::strerror(errno)));
  }
  size_t done = 0;
  while (done < content->size()) {
    const ssize_t n = ::write(fd.Get(), content->data() + done, content->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      return absl::InternalError(Cat("cannot write ", tmp, ": ", std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd.Get(), 0755) != 0 || ::fsync(fd.Get()) != 0 ||
      ::rename(tmp.c_str(), dest.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return absl::InternalError(Cat("cannot install ", dest, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

std::string MemlockHookProblem(const std::string& hook) {
  if (hook.empty()) {
    return "the hook is not installed (the start-up log says why: --memlock-hook-path, "
           "images/components/memlock)";
  }
  struct stat st {};
  if (::lstat(hook.c_str(), &st) != 0) {
    return Cat("the hook ", hook, " is gone (", std::strerror(errno),
               "): restart the plugin's pod to install it again");
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
      (st.st_mode & S_IXUSR) == 0) {
    return Cat("the hook ", hook,
               " is no longer a root-owned executable file others cannot write: restart the "
               "plugin's pod to install it again");
  }
  struct statvfs fs {};
  if (::statvfs(hook.c_str(), &fs) == 0 && (fs.f_flag & ST_NOEXEC) != 0) {
    return Cat("the hook ", hook,
               " is on a noexec mount: the runtime cannot run it, so every container of the "
               "pool fails at creation; set --memlock-hook-path to a directory on an exec mount");
  }
  return "";
}

}  // namespace rdmadp::cdi
