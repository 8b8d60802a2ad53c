// How a device plugin registers with the kubelet (--registration-mode): the domain's own
// type, which the flag parser (pkg/cli) fills and the device-plugin front end reads, so no
// front end includes the command line's types.
#pragma once

#include <string_view>

namespace rdmadp::frontend {

// kKubelet: Register on kubelet.sock; kWatcher: a socket in plugins_registry for the
// kubelet's plugin watcher; kAuto: decided by what the kubelet does.
enum class RegistrationMode { kKubelet, kWatcher, kAuto };

inline std::string_view RegistrationModeName(RegistrationMode mode) {
  switch (mode) {
    case RegistrationMode::kKubelet:
      return "kubelet";
    case RegistrationMode::kWatcher:
      return "watcher";
    case RegistrationMode::kAuto:
      return "auto";
  }
  return "kubelet";
}

}  // namespace rdmadp::frontend
