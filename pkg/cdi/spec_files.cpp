#include "pkg/cdi/spec_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "pkg/fd/unique_fd.h"
#include "pkg/text/cat.h"

namespace rdmadp::cdi {

absl::Status WriteFileAtomically(const std::string& dir, const std::string& name,
                                 const std::string& content, bool durable) {
  ::mkdir(dir.c_str(), 0755);  // the runtime may not have created it yet
  const std::string final_path = Cat(dir, "/", name);
  // A new file of our own (O_EXCL, random name), so two instances during a rolling update
  // never interleave writes, and nothing planted in the directory is ever written through.
  std::string tmp = Cat(dir, "/.", name, ".XXXXXX");
  {
    UniqueFd fd(::mkostemp(tmp.data(), O_CLOEXEC));
    if (!fd.Valid()) {
      return absl::UnavailableError(
          Cat(final_path, ": cannot create a temp file in ", dir, ": ", std::strerror(errno)));
    }
    ::fchmod(fd.Get(), 0644);  // runtimes read it; mkostemp creates 0600
    size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd.Get(), content.data() + done, content.size() - done);
      if (n <= 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return absl::UnavailableError(Cat(final_path, ": write failed: ", std::strerror(err)));
      }
      done += static_cast<size_t>(n);
    }
    if (durable && ::fsync(fd.Get()) != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      return absl::UnavailableError(Cat(final_path, ": fsync failed: ", std::strerror(err)));
    }
  }
  if (::rename(tmp.c_str(), final_path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return absl::UnavailableError(Cat(final_path, ": rename failed: ", std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::Status WriteSpecAtomically(const std::string& dir, const std::string& name,
                                 const std::string& content) {
  absl::Status s = WriteFileAtomically(dir, name, content, /*durable=*/true);
  if (s.ok()) return s;
  return absl::UnavailableError(
      Cat("CDI spec ", std::string(s.message()), " (is --cdi-spec-dir mounted writable?)"));
}

absl::Status RemoveSpec(const std::string& dir, const std::string& name) {
  const std::string path = Cat(dir, "/", name);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::UnavailableError(Cat("cannot remove CDI spec ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace rdmadp::cdi
