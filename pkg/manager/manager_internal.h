// Internal to pkg/manager: what the Manager's .cpp files share. Loop thread only.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "pkg/dra/slice_publisher.h"
#include "pkg/kube/backoff.h"
#include "pkg/kube/rest_client.h"
#include "pkg/lifecycle/registration_fsm.h"
#include "pkg/manager/manager.h"
#include "pkg/pool/snapshot.h"
#include "pkg/server/dra_server.h"
#include "pkg/text/cat.h"

namespace rdmadp::manager {

using std::chrono::milliseconds;

inline constexpr milliseconds kReloadDebounce{100};
inline constexpr milliseconds kEventDebounce{20};
inline constexpr milliseconds kSelfCheckTimeout{2000};
inline constexpr milliseconds kRegisterTimeout{5000};
// Freed heap goes back to the system this long after the first Allocate, rescan or reload
// since the last trim: at most one malloc_trim per 5 s under load, none when idle.
inline constexpr milliseconds kHeapTrimDelay{5000};
// The state machine's watchdog must never fire on an attempt the registrar will still answer.
static_assert(kSelfCheckTimeout + kRegisterTimeout < lifecycle::kRegisterAnswerDeadline);
inline constexpr std::string_view kKubeletSocketName = "kubelet.sock";

// CLOCK_REALTIME in ns, as the kernel stamps kubelet.sock's ctime: a gRPC handler stamps its
// call with it, so the state machine can tell which kubelet incarnation made the call.
inline int64_t WallNowNs() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

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

// The DRA front end's driver instance. The view is shared with the DraServer's worker
// thread (Prepare reads it), hence the mutex; everything else is the loop's.
struct Manager::DraDriver {
  struct Shared {
    std::mutex mu;
    dra::DraViewPtr view;  // immutable; swapped whole
    // One per DRA worker thread (server::kDraWorkers; a client serves one thread at a
    // time): read the claims Prepare is asked for. Set once the API client could be created.
    std::vector<std::shared_ptr<kube::RestClient>> claims;
    // Counted on the DRA server's thread, read by the metrics view.
    std::atomic<uint64_t> prepares{0}, prepare_failures{0}, prepare_calls{0}, unprepares{0};
    std::atomic<uint64_t> prepare_nanos{0};
    dra::DraViewPtr Get() {
      std::lock_guard lock(mu);
      return view;
    }
    std::shared_ptr<kube::RestClient> Claims(int worker) {
      std::lock_guard lock(mu);
      return worker >= 0 && static_cast<size_t>(worker) < claims.size() ? claims[worker] : nullptr;
    }
  };
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  // Why there is no API client ("" once there is one): for /readyz and the metrics.
  std::string api_problem;
  // The DRA entries' pools at the latest rescan, and what deviceModel "auto" means here
  // (nullopt until the publisher's first capability probe answers).
  std::vector<pool::PoolModel> pools;
  std::optional<config::DeviceModel> auto_model;
  std::string cdi_problem;  // a CDI spec that could not be written ("" when none)
  // Creating the API client failed (a token not mounted yet, say): retried on this timer,
  // 1 s doubling to 30 s, jittered, not only at the next rescan (issue 31 item 19).
  std::unique_ptr<Timer> api_retry;
  kube::Backoff api_backoff{std::chrono::seconds(1), std::chrono::seconds(30)};
  bool stale_specs_checked = false;  // the CDI directory was swept of specs of gone HCAs
  std::unique_ptr<lifecycle::RegistrationFsm> fsm;
  std::unique_ptr<server::DraServer> server;
  std::unique_ptr<Timer> timer;
  uint64_t timer_token = 0;
  std::unique_ptr<Timer> heartbeat;
  std::unique_ptr<dra::SlicePublisher> publisher;
  std::map<std::string, std::string> specs_written;  // CDI spec file name -> content
  std::string health_key;  // what the last health list said, timestamps left out
  bool active = false;     // serving: some entry uses the DRA front end
};

// Which kubelet.sock file is at `path` now (inode 0: none).
inline lifecycle::SocketId SocketIdOf(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  return {.inode = static_cast<uint64_t>(st.st_ino),
          .ctime_ns = st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec};
}

}  // namespace rdmadp::manager
