#include "pkg/config/config.h"
#include "pkg/text/cat.h"

namespace rdmadp::config {

std::vector<std::string> SocketPathProblems(const Config& config,
                                            const std::vector<std::string>& socket_dirs,
                                            const std::vector<size_t>& indices) {
  // "/" "." <name> "-" 8 hex ".sock"
  constexpr size_t kOverhead = 1 + 1 + 1 + 8 + 5;
  std::vector<std::string> problems;
  for (size_t i = 0; i < config.resources.size(); ++i) {
    if (config.resources[i].frontend != Frontend::kDevicePlugin) continue;  // no socket of its own
    const std::string& name = config.resources[i].resource_name;
    for (const std::string& dir : socket_dirs) {
      const size_t length = dir.size() + kOverhead + name.size();
      if (length <= kMaxUnixSocketPath) continue;
      const size_t longest = kMaxUnixSocketPath > dir.size() + kOverhead
                                 ? kMaxUnixSocketPath - dir.size() - kOverhead
                                 : 0;
      problems.push_back(Cat("config: configList[", i < indices.size() ? indices[i] : i,
                             "].resourceName: \"", name, "\" is too long for its socket in ", dir,
                             ": ", length, " bytes, the limit for a unix socket path is ",
                             kMaxUnixSocketPath, " (use at most ", longest,
                             " characters here, or a shorter --kubelet-root-dir)"));
      break;
    }
  }
  return problems;
}

}  // namespace rdmadp::config
