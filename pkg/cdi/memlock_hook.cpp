#include "pkg/cdi/memlock_hook.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/status/statusor.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/text/cat.h"

namespace rdmadp::cdi {
namespace {

// The hook is a static binary of ~2 MiB; anything far larger at the source is not it.
constexpr size_t kMaxHookBytes = 64 << 20;

// The hook at `path`: a regular file of at most kMaxHookBytes that is an ELF executable.
// O_NONBLOCK: a FIFO there (a broken image) would block the open until a writer came,
// holding the start and SIGTERM; and a file that is empty or a script is not the hook built
// for this image (H7 of the hardening round at 050f44e: an empty one was installed).
absl::StatusOr<std::string> ReadHook(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd.Valid() || ::fstat(fd.Get(), &st) != 0) {
    return absl::NotFoundError(Cat(path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        Cat(path, " is not a regular file (a FIFO, a device or a directory?)"));
  }
  if (static_cast<size_t>(st.st_size) > kMaxHookBytes) {
    return absl::FailedPreconditionError(
        Cat(path, " is ", st.st_size, " bytes; the hook is at most ", kMaxHookBytes));
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd.Get(), out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::DataLossError(Cat(path, ": short read"));
    done += static_cast<size_t>(n);
  }
  if (!out.starts_with("\177ELF")) {
    return absl::FailedPreconditionError(
        Cat(path, " is not an ELF executable (", out.size(),
            " bytes, no \\x7fELF at the start): not the hook built for this image"));
  }
  return out;
}

// Octal, as stat -c %a shows a mode: 0755, 1777.
std::string Mode(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Each directory from / down to `dir` (absolute), walked one component at a time with
// O_NOFOLLOW from its parent's handle, so what is checked is what the path names: a real
// directory (a symlink is refused), root's, and not writable by others than root. A parent
// may be writable by others if it is sticky (as /tmp is): there only root can remove or
// rename its root-owned child. The hook's own directory may not be, sticky or not: the
// runtime runs as root whatever is at the hook's name. Any other owner or writer could swap
// a directory on the path, and with it the hook (H3 of the hardening round at 050f44e).
absl::Status CheckDirectoryChain(const std::string& dir) {
  std::string walked = "/";
  UniqueFd at(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!at.Valid()) return absl::NotFoundError(Cat("/: ", std::strerror(errno)));
  // `pos`: where the next component starts; npos once `walked` is all of `dir`.
  for (size_t pos = dir.find_first_not_of('/');;) {
    struct stat st {};
    if (::fstat(at.Get(), &st) != 0) {
      return absl::NotFoundError(Cat(walked, ": ", std::strerror(errno)));
    }
    if (S_ISLNK(st.st_mode)) {
      return absl::PermissionDeniedError(
          Cat(walked,
              " is a symbolic link: name the hook's directory by its real path (each directory "
              "on it is checked, a link's target would not be)"));
    }
    if (!S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(Cat(walked, " is not a directory"));
    }
    const bool last = pos == std::string::npos;
    if (st.st_uid != 0) {
      return absl::PermissionDeniedError(
          Cat(walked, " is owned by uid ", st.st_uid,
              ", not root: its owner could replace the hook the runtime runs as root"));
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (last || (st.st_mode & S_ISVTX) == 0)) {
      return absl::PermissionDeniedError(
          Cat(walked, " is writable by others than root (mode ", Mode(st.st_mode),
              last ? "): the runtime would run whatever is put there as root"
                   : ", not sticky): anyone could replace what is in it, and so the hook the "
                     "runtime runs as root"));
    }
    if (last) return absl::OkStatus();
    const size_t end = std::min(dir.find('/', pos), dir.size());
    const std::string name = dir.substr(pos, end - pos);
    pos = dir.find_first_not_of('/', end);
    if (name == ".") continue;  // the same directory, checked again as the last if it is
    if (name == "..") {
      return absl::InvalidArgumentError(Cat(dir, ": the hook's directory must not name .."));
    }
    walked = Cat(walked == "/" ? "" : walked, "/", name);
    // O_PATH without O_DIRECTORY: a symlink (O_NOFOLLOW) or a file is opened itself, and
    // fstat above says which; with O_DIRECTORY both would be one ENOTDIR.
    const int next = ::openat(at.Get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return absl::NotFoundError(Cat(walked, ": ", std::strerror(errno)));
    at = UniqueFd(next);
  }
}

}  // namespace

std::string BundledMemlockHook() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "rdmadp-memlock-hook";
  std::string exe(buf, static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/') + 1) + "rdmadp-memlock-hook";
}

absl::Status HookDirectoryProblem(const std::string& dest) {
  if (!dest.starts_with('/')) {
    return absl::InvalidArgumentError(Cat(dest, ": the hook's path must be absolute"));
  }
  const size_t slash = dest.rfind('/');
  return CheckDirectoryChain(slash == 0 ? "/" : dest.substr(0, slash));
}

absl::Status InstallMemlockHook(const std::string& source, const std::string& dest) {
  const absl::StatusOr<std::string> content = ReadHook(source);
  if (!content.ok()) {
    return {content.status().code(),
            Cat("the hook to install: ", std::string(content.status().message()))};
  }
  // The runtime runs what is there as root: every directory on the way must be root's alone.
  if (absl::Status s = HookDirectoryProblem(dest); !s.ok()) return s;
  struct stat st {};
  if (::lstat(dest.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
      (st.st_mode & 07777) == 0755) {
    const absl::StatusOr<std::string> installed = ReadHook(dest);
    if (installed.ok() && *installed == *content) return absl::OkStatus();
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
