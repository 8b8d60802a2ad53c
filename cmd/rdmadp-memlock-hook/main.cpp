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
//  - one argument, a positive decimal byte count or "unlimited";
//  - standard input, at most 1 MiB and nested at most kMaxDepth levels, a JSON object with
//    ociVersion, id, a pid > 1 of a process in another mount namespace than the hook's (a
//    container's; not a stale pid reused by a host process) and an absolute bundle path,
//    and status "creating" or "created" if it has one;
//  - the bundle's config.json, read as runc reads it (symlinks followed): a regular file of
//    at most 16 MiB holding a JSON object, else refused. When it sets RLIMIT_MEMLOCK itself,
//    the runtime applies that after this hook (runc does): a value below ours is refused,
//    naming it; at least ours is kept.
// It never lowers a limit: soft and hard each become the larger of theirs and ours (a pool's
// value below the runtime's default changes nothing). Raising the hard limit needs
// CAP_SYS_RESOURCE, which container runtimes have.
//
// Static (the DaemonSet installs it on the host, whose libraries are not the image's);
// single-threaded; no files written.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

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

// `text` for an error line: at most 100 bytes, control characters and non-ASCII as \xNN.
std::string Printable(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < 100; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > 100) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
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

// Deeper nesting is refused before parsing: the state is a flat object, and a deeply nested
// value (100,000 levels fit in 200 KB) must cost neither a recursion nor a long echo.
constexpr int kMaxDepth = 64;

bool NestedTooDeep(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

// A member of `object`, by reference (no copy of a hostile value), or null.
const nlohmann::json& Member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// The soft RLIMIT_MEMLOCK the bundle's config.json sets (nullopt: it sets none), or why it
// cannot be read. runc reads the file the same way (os.Open follows a symlink), so what it
// cannot read here it could not run: refused rather than guessed.
struct SpecRead {
  std::optional<rlim_t> memlock;
  std::string problem;  // "" when read
};
SpecRead SpecMemlock(const std::string& bundle) {
  const std::string path = bundle + "/config.json";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {std::nullopt, path + ": " + std::strerror(errno)};
  struct stat st {};
  std::optional<std::string> text;
  std::string problem;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    problem = path + " is not a regular file";
  } else if (static_cast<size_t>(st.st_size) > kMaxConfigBytes) {
    problem = path + " is over 16 MiB";
  } else if (text = ReadAll(fd, kMaxConfigBytes); !text) {
    problem = path + " cannot be read";
  }
  ::close(fd);
  if (!problem.empty()) return {std::nullopt, problem};
  const auto spec = nlohmann::json::parse(*text, nullptr, false);
  if (!spec.is_object()) return {std::nullopt, path + " is not a JSON object"};
  const auto& process = Member(spec, "process");
  const auto& rlimits = Member(process, "rlimits");
  if (!process.is_object() || !rlimits.is_array()) return {};
  for (const auto& r : rlimits) {
    if (!r.is_object() || Member(r, "type") != "RLIMIT_MEMLOCK") continue;
    const auto& soft = Member(r, "soft");
    return {soft.is_number_unsigned() ? static_cast<rlim_t>(soft.get<uint64_t>()) : 0, ""};
  }
  return {};
}

// The mount namespace of `pid` ("/proc/<pid>/ns/mnt"'s device and inode), or nullopt.
std::optional<std::pair<dev_t, ino_t>> MountNamespace(const std::string& pid) {
  struct stat st {};
  if (::stat(("/proc/" + pid + "/ns/mnt").c_str(), &st) != 0) return std::nullopt;
  return std::make_pair(st.st_dev, st.st_ino);
}

int Run(int argc, char** argv) {
  if (argc != 2) return Refuse("usage: rdmadp-memlock-hook <bytes>|unlimited (OCI state on stdin)");
  const auto limit = ParseLimit(argv[1]);
  if (!limit) {
    return Refuse("limit \"" + Printable(argv[1]) +
                  "\" is not a positive byte count or \"unlimited\"");
  }
  const auto text = ReadAll(STDIN_FILENO, kMaxStateBytes);
  if (!text) return Refuse("the OCI state on stdin is unreadable or over 1 MiB");
  if (NestedTooDeep(*text)) {
    return Refuse("the OCI state on stdin is nested more than " + std::to_string(kMaxDepth) +
                  " levels deep");
  }
  const auto state = nlohmann::json::parse(*text, nullptr, false);
  if (!state.is_object()) return Refuse("the OCI state on stdin is not a JSON object");
  const auto& version = Member(state, "ociVersion");
  const auto& id = Member(state, "id");
  const auto& pid = Member(state, "pid");
  const auto& bundle = Member(state, "bundle");
  const auto& status = Member(state, "status");
  if (!version.is_string() || !id.is_string() || id.get_ref<const std::string&>().empty()) {
    return Refuse("the OCI state has no ociVersion or id");
  }
  if (!pid.is_number_integer() || pid.get<int64_t>() <= 1 || pid.get<int64_t>() > INT32_MAX) {
    return Refuse("the OCI state's pid is missing or not a container's process");
  }
  if (!bundle.is_string() || !bundle.get_ref<const std::string&>().starts_with("/")) {
    return Refuse("the OCI state's bundle is missing or not an absolute path");
  }
  if (!status.is_null()) {
    const std::string* said = status.is_string() ? &status.get_ref<const std::string&>() : nullptr;
    if (said == nullptr || (*said != "creating" && *said != "created")) {
      return Refuse(
          "called with status " +
          (said == nullptr ? std::string("that is not a string") : "\"" + Printable(*said) + "\"") +
          ": this is a createRuntime hook (status creating)");
    }
  }
  const std::string pid_text = std::to_string(pid.get<int64_t>());
  const auto theirs = MountNamespace(pid_text);
  if (!theirs) return Refuse("pid " + pid_text + " is not a running process");
  if (theirs == MountNamespace("self")) {
    return Refuse("pid " + pid_text +
                  " is in the hook's own mount namespace, so it is not a container's process "
                  "(a stale state, or a pid reused by a host process)");
  }
  const SpecRead spec = SpecMemlock(bundle.get_ref<const std::string&>());
  if (!spec.problem.empty()) {
    return Refuse("the bundle's OCI spec: " + spec.problem +
                  " (the runtime reads it to create the container)");
  }
  if (const auto& in_spec = spec.memlock) {
    if (*in_spec == RLIM_INFINITY || (*limit != RLIM_INFINITY && *in_spec >= *limit)) return 0;
    return Refuse("the container's OCI spec sets RLIMIT_MEMLOCK to " + Describe(*in_spec) +
                  ", which the runtime applies after this hook, below the pool's " +
                  Describe(*limit) +
                  " (something in the runtime added it: containerd's default spec sets only "
                  "RLIMIT_NOFILE; an NRI plugin can set the pool's value instead)");
  }
  const auto target = static_cast<pid_t>(pid.get<int64_t>());
  struct rlimit current {};
  if (::prlimit(target, RLIMIT_MEMLOCK, nullptr, &current) != 0) {
    return Refuse("prlimit(" + pid_text + ", RLIMIT_MEMLOCK): " + std::strerror(errno));
  }
  // Never lower: RLIM_INFINITY is the largest rlim_t, so max() keeps "unlimited".
  const struct rlimit wanted = {std::max(current.rlim_cur, *limit),
                                std::max(current.rlim_max, *limit)};
  if (wanted.rlim_cur == current.rlim_cur && wanted.rlim_max == current.rlim_max) return 0;
  if (::prlimit(target, RLIMIT_MEMLOCK, &wanted, nullptr) != 0) {
    const int err = errno;
    return Refuse("prlimit(" + pid_text + ", RLIMIT_MEMLOCK, " + Describe(*limit) +
                  "): " + std::strerror(err) +
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
