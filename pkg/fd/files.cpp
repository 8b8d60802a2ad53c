#include "pkg/fd/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "pkg/fd/unique_fd.h"

namespace rdmadp::fd {

namespace {

// The entries of `dir` that `keep` accepts, "." and ".." never; nullopt (errno set) when
// it cannot be opened.
template <typename Keep>
std::optional<std::vector<std::string>> List(const std::string& dir, Keep keep) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return std::nullopt;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string_view name = e->d_name;
    if (name != "." && name != ".." && keep(*e)) names.emplace_back(name);
  }
  return names;
}

// Entries of one type, as readdir says or, on a file system that does not say (cgroupfs
// and sysfs do), as lstat does.
std::optional<std::vector<std::string>> ListOfType(const std::string& dir, unsigned char type,
                                                   mode_t mode) {
  return List(dir, [&](const dirent& e) {
    if (e.d_type != DT_UNKNOWN) return e.d_type == type;
    struct stat st {};
    return ::lstat((dir + "/" + e.d_name).c_str(), &st) == 0 && (st.st_mode & S_IFMT) == mode;
  });
}

}  // namespace

std::vector<std::string> ListDir(const std::string& dir) {
  return List(dir, [](const dirent&) { return true; }).value_or(std::vector<std::string>{});
}

std::optional<std::vector<std::string>> ListSubdirs(const std::string& dir) {
  return ListOfType(dir, DT_DIR, S_IFDIR);
}

std::optional<std::vector<std::string>> ListLinks(const std::string& dir) {
  return ListOfType(dir, DT_LNK, S_IFLNK);
}

std::optional<std::string> ReadFile(const std::string& path, size_t max_bytes) {
  UniqueFd file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.Valid()) return std::nullopt;
  std::string out;
  char buf[4096];
  while (out.size() < max_bytes) {
    const ssize_t n = ::read(file.Get(), buf, std::min(sizeof buf, max_bytes - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string ParentDir(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const auto slash = p.rfind('/');
  if (slash == std::string::npos || p == "/") return "";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool PathExists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace rdmadp::fd
