// Internal to pkg/manager: what the Manager's .cpp files share. Loop thread only.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "pkg/lifecycle/registration_fsm.h"
#include "pkg/manager/manager.h"
#include "pkg/pool/snapshot.h"
#include "pkg/text/cat.h"

namespace rdmadp::manager {

using std::chrono::milliseconds;

inline constexpr milliseconds kReloadDebounce{100};
inline constexpr milliseconds kEventDebounce{20};
inline constexpr milliseconds kSelfCheckTimeout{2000};
inline constexpr milliseconds kRegisterTimeout{5000};
// The state machine's watchdog must never fire on an attempt the registrar will still answer.
static_assert(kSelfCheckTimeout + kRegisterTimeout < lifecycle::kRegisterAnswerDeadline);
inline constexpr std::string_view kKubeletSocketName = "kubelet.sock";

inline bool PathExists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

inline std::string DirOf(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

inline std::string BaseOf(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

inline std::string Describe(const pool::PoolSnapshot& snap) {
  const auto& adv = snap.advertised();
  std::vector<std::string> hcas;
  for (const auto& hca : snap.hcas()) {
    const sysfs::PciFunction& fn = hca.function;
    hcas.push_back(fn.if_name.empty() ? fn.address : Cat(fn.address, "/", fn.if_name));
  }
  std::string out = Cat(snap.resource().FullName(), ": ", hcas.size(), " HCA(s)");
  if (!hcas.empty()) Append(out, " [", Join(hcas, " "), "]");
  Append(out, ", ", adv.slots, " slot(s), ", adv.healthy ? "Healthy" : "Unhealthy", ", ",
         adv.device_paths.size(), " device node(s)");
  if (!adv.numa_nodes.empty()) Append(out, ", NUMA [", Join(adv.numa_nodes, ","), "]");
  if (snap.topology_dropped()) Append(out, " (topology dropped: message over 4 MiB)");
  return out;
}

struct Manager::Resource {
  config::ResourceConfig config;
  pool::SnapshotPtr snapshot;  // latest, kept even while not serving
  // The registration lifecycle; this struct only carries out its actions.
  std::unique_ptr<lifecycle::RegistrationFsm> fsm;
  std::unique_ptr<server::ResourceServer> server;
  std::unique_ptr<server::KubeletRegistration> registration;
  std::unique_ptr<Timer> timer;
  uint64_t timer_token = 0;                    // the FSM's token for the armed timer
  std::shared_ptr<grpc::Channel> own_channel;  // to our own socket; path fixed per mode
  uint64_t allocations_before = 0;             // answered by earlier servers of this resource
  uint64_t rejections_before = 0;
  pool::CdiNaming cdi_naming;
  std::optional<pool::Advertised> cdi_written;  // pool content of the last spec written
  // Why the spec for `snapshot` is not on disk ("" when it is): the kubelet is then shown
  // every slot Unhealthy, since Allocate would name CDI devices no runtime can resolve.
  std::string cdi_problem;
};

}  // namespace rdmadp::manager
