// rdmadp-memlock-hook: a CDI createRuntime hook that raises the container's RLIMIT_MEMLOCK.
//
//   rdmadp-memlock-hook <bytes>|unlimited      (the OCI state on standard input)
//
// RDMA pins the memory it registers, and the kernel bounds that by RLIMIT_MEMLOCK unless the
// process has CAP_IPC_LOCK, which a non-root container's process does not have whatever its
// securityContext adds. Neither CDI container edits nor the kubelet's APIs carry an rlimit;
// a createRuntime hook runs in the runtime's namespace after the container's process is
// created and before it starts the user's program, with that process's pid in the OCI state
// (OCI runtime spec, config.md "createRuntime"), so prlimit(2) on that pid reaches it.
//
// Does exactly that and refuses anything else, in one line on stderr and exit status 1
// (which fails the container's creation: a pool configured for locked memory never starts a
// container silently without it):
//  - one argument, a positive decimal byte count or "unlimited"; soft and hard are both set;
//  - standard input, at most 1 MiB, a JSON object with ociVersion, id, a pid > 1 and an
//    absolute bundle path, and status "creating" or "created" if it has one;
//  - when the bundle's config.json sets RLIMIT_MEMLOCK itself, the runtime applies that after
//    this hook (runc does): a value below ours is refused, naming it; at least ours is kept.
// Raising the hard limit needs CAP_SYS_RESOURCE, which container runtimes have.
//
// Static (the DaemonSet installs it on the host, whose libraries are not the image's);
// single-threaded; no files written.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace {

constexpr size_t kMaxStateBytes = 1 << 20;
constexpr size_t kMaxConfigBytes = 16 << 20;

int Refuse(const std::string& why) {
  std::fprintf(stderr, "rdmadp-memlock-hook: %s\n", why.c_str());
  return 1;
}

std::optional<rlim_t> ParseLimit(const std::string& text) {
  if (text == "unlimited") return RLIM_INFINITY;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v == 0 || text[0] == '+' ||
      v >= static_cast<uint64_t>(RLIM_INFINITY)) {
    return std::nullopt;
  }
  return static_cast<rlim_t>(v);
}

std::string Describe(rlim_t v) {
  return v == RLIM_INFINITY ? std::string("unlimited") : std::to_string(v) + " bytes";
}

// Reads all of `fd` up to `limit` bytes; nullopt when there is more or it cannot be read.
std::optional<std::string> ReadAll(int fd, size_t limit) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return out;
    if (out.size() + static_cast<size_t>(n) > limit) return std::nullopt;
    out.append(buf, static_cast<size_t>(n));
  }
}

// The soft RLIMIT_MEMLOCK the bundle's config.json sets, if it sets one (none when the file
// cannot be read: the spec check is the best this hook can do, not a precondition). Only a
// regular file, not through a symlink, without blocking, at most kMaxConfigBytes.
std::optional<rlim_t> SpecMemlock(const std::string& bundle) {
  const int fd =
      ::open((bundle + "/config.json").c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) text = ReadAll(fd, kMaxConfigBytes);
  ::close(fd);
  if (!text) return std::nullopt;
  const auto spec = nlohmann::json::parse(*text, nullptr, false);
  if (!spec.is_object() || !spec.contains("process") || !spec["process"].is_object()) {
    return std::nullopt;
  }
  const auto& process = spec["process"];
  if (!process.contains("rlimits") || !process["rlimits"].is_array()) return std::nullopt;
  for (const auto& r : process["rlimits"]) {
    if (!r.is_object() || !r.contains("type") || r["type"] != "RLIMIT_MEMLOCK") continue;
    if (r.contains("soft") && r["soft"].is_number_unsigned()) {
      return static_cast<rlim_t>(r["soft"].get<uint64_t>());
    }
    return static_cast<rlim_t>(0);
  }
  return std::nullopt;
}

int Run(int argc, char** argv) {
  if (argc != 2) return Refuse("usage: rdmadp-memlock-hook <bytes>|unlimited (OCI state on stdin)");
  const auto limit = ParseLimit(argv[1]);
  if (!limit) {
    return Refuse(std::string("limit \"") + argv[1] +
                  "\" is not a positive byte count or \"unlimited\"");
  }
  const auto text = ReadAll(STDIN_FILENO, kMaxStateBytes);
  if (!text) return Refuse("the OCI state on stdin is unreadable or over 1 MiB");
  const auto state = nlohmann::json::parse(*text, nullptr, false);
  if (!state.is_object()) return Refuse("the OCI state on stdin is not a JSON object");
  const auto& version = state.value("ociVersion", nlohmann::json());
  const auto& id = state.value("id", nlohmann::json());
  const auto& pid = state.value("pid", nlohmann::json());
  const auto& bundle = state.value("bundle", nlohmann::json());
  const auto& status = state.value("status", nlohmann::json("creating"));
  if (!version.is_string() || !id.is_string() || id.get<std::string>().empty()) {
    return Refuse("the OCI state has no ociVersion or id");
  }
  if (!pid.is_number_integer() || pid.get<int64_t>() <= 1 || pid.get<int64_t>() > INT32_MAX) {
    return Refuse("the OCI state's pid is missing or not a container's process");
  }
  if (!bundle.is_string() || !bundle.get<std::string>().starts_with("/")) {
    return Refuse("the OCI state's bundle is missing or not an absolute path");
  }
  if (!status.is_string() ||
      (status.get<std::string>() != "creating" && status.get<std::string>() != "created")) {
    return Refuse("called with status " + status.dump() +
                  ": this is a createRuntime hook (status creating)");
  }
  if (const auto in_spec = SpecMemlock(bundle.get<std::string>())) {
    if (*in_spec == RLIM_INFINITY || (*limit != RLIM_INFINITY && *in_spec >= *limit)) return 0;
    return Refuse("the container's OCI spec sets RLIMIT_MEMLOCK to " + Describe(*in_spec) +
                  ", which the runtime applies after this hook, below the pool's " +
                  Describe(*limit) +
                  " (something in the runtime added it: containerd's default spec sets only "
                  "RLIMIT_NOFILE; an NRI plugin can set the pool's value instead)");
  }
  const struct rlimit wanted = {*limit, *limit};
  if (::prlimit(static_cast<pid_t>(pid.get<int64_t>()), RLIMIT_MEMLOCK, &wanted, nullptr) != 0) {
    const int err = errno;
    return Refuse("prlimit(" + std::to_string(pid.get<int64_t>()) + ", RLIMIT_MEMLOCK, " +
                  Describe(*limit) + "): " + std::strerror(err) +
                  (err == EPERM ? " (raising the hard limit needs CAP_SYS_RESOURCE)" : ""));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {  // never a core dump: one line, as every refusal
    return Refuse(std::string("unexpected input: ") + e.what());
  }
}
