// A kubelet simulator that treats a device plugin the way the real kubelet does, version
// by version (docs/kubelet-versions.md, read from the kubelet's source), including
// its unkind parts. Chosen per test with KubeletEra:
//
//  kV124      Register is answered at once; the endpoint is dialled afterwards, options are
//             taken from the request (GetDevicePluginOptions is never called). A newer
//             registration overwrites the endpoint without stopping the old one; the end of
//             a stream that is no longer current is ignored.
//  kV125to136 Register is synchronous: dial (10 s), GetDevicePluginOptions, ListAndWatch
//             started, then the answer. Clients keyed by name; the old client is not
//             closed; the end of *any* stream of a resource disconnects its current client
//             (#121994). The watcher's DeRegisterPlugin disconnects the current client by name.
//  kV137      Clients keyed by (name, socket path) (#135437): the same path again is
//             rejected with "device plugin already connected: <path>"; a disconnect removes
//             the endpoint at its path (a late one can evict a newer endpoint there);
//             survivors are promoted without going unhealthy; unhealthy only when the last
//             endpoint goes.
//
// In every era: all live streams of a resource write into one device view (last writer
// wins); a stream end marks the resource unhealthy (allocatable 0, capacity kept) as above
// and is never re-dialled; Kill() leaves the dead kubelet.sock file (connect: ECONNREFUSED)
// until Start() runs CleanupPluginDirectory (every socket in device-plugins goes) and
// serves a new kubelet.sock; checkpointed resources start at allocatable 0.
//
// Plugin watcher (EnableWatcher): inotify on plugins_registry (dot files and non-sockets
// ignored) plus a walk at every start; a desired state of path -> UUID (a new UUID per
// Create); a reconciler every 1 s that unregisters first (actual-state entries whose UUID is
// gone or changed) and then registers; operations serialised per socket path (one running
// at a time, the other skipped until a later pass); after a failed operation the path is
// refused for 500 ms, doubling to ~2 min, reset by a success but not by re-creation.
// Register operation: dial (10 s), GetInfo (1 s), type/version/name validation (failure:
// Notify(false)), actual state updated, the era's connect (failure: Notify(false), not
// retried until the socket is re-created), Notify(true) (5 s).
//
// Every dial uses a local subchannel pool (grpc-go dials a fresh connection each time).
// Thread-safe; waits use a condition variable, never sleeps (Restart's downtime is the
// modelled outage itself).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/api/deviceplugin.grpc.pb.h"

namespace rdmadp::testing {

enum class KubeletEra { kV124, kV125to136, kV137 };
const char* EraName(KubeletEra era);
inline const KubeletEra kAllEras[] = {KubeletEra::kV124, KubeletEra::kV125to136, KubeletEra::kV137};
// A test-name suffix per era ("v124", "v125to136", "v137") for INSTANTIATE_TEST_SUITE_P.
inline std::string EraTestName(KubeletEra era) {
  switch (era) {
    case KubeletEra::kV124:
      return "v124";
    case KubeletEra::kV125to136:
      return "v125to136";
    case KubeletEra::kV137:
      return "v137";
  }
  return "unknown";
}

struct SimResource {
  std::string endpoint;      // socket path of the current client
  int registrations = 0;     // clients connected (Register accepted, or watcher registration)
  int register_calls = 0;    // Register RPCs received on kubelet.sock, whatever the outcome
  bool stream_open = false;  // the current client's stream
  int streams_ended = 0;
  std::vector<v1beta1::ListAndWatchResponse> snapshots;  // every message, in order
  int64_t capacity = 0;
  int64_t allocatable = 0;
  bool has_options = false;
  v1beta1::DevicePluginOptions options;
  // Time the running kubelet saw capacity > 0 with allocatable 0 (not while it was down).
  int64_t zero_allocatable_ms = 0;
  int zero_windows = 0;
  std::optional<std::chrono::steady_clock::time_point> zero_since;
};

struct SimState {
  std::map<std::string, SimResource> resources;  // by resource name
  std::vector<std::string> events;               // human-readable log, in order
  std::vector<std::string> rejected;             // Register errors and Notify(false) texts
  int register_calls = 0;                        // on kubelet.sock, all resources
  int registry_creates = 0;  // sockets created in plugins_registry while the watcher ran
  int watcher_notifies_ok = 0;
};

// The plugin watcher's handler for another plugin type (the kubelet's DRA manager handles
// "DRAPlugin"). Register and Deregister run on the watcher's operation threads, without the
// simulator's lock; KubeletStarted runs in Start() before the watcher starts.
class PluginTypeHandler {
 public:
  virtual ~PluginTypeHandler() = default;
  // ValidatePlugin + RegisterPlugin: "" on success, else the error Notify(false) carries.
  virtual std::string Register(const std::string& name, const std::string& endpoint,
                               const std::vector<std::string>& versions) = 0;
  virtual void Deregister(const std::string& name, const std::string& endpoint) = 0;
  virtual void KubeletStarted() {}
  virtual void KubeletStopped() {}
};

class KubeletSimulator {
 public:
  explicit KubeletSimulator(std::string root_dir, KubeletEra era = KubeletEra::kV125to136);
  ~KubeletSimulator();

  KubeletEra era() const { return era_; }
  // Cleans up device-plugins (every socket goes) and serves kubelet.sock; starts the
  // plugin watcher if enabled.
  absl::Status Start();
  // The kubelet process dies: every stream and connection ends, kubelet.sock stays as a
  // dead file, the watcher stops. Nothing in plugins_registry is touched.
  void Kill();
  // Kill, `downtime` of outage, Start.
  absl::Status Restart(std::chrono::milliseconds downtime = std::chrono::milliseconds(0));
  // Kill and remove kubelet.sock (the end of a test).
  void Stop();

  // Blocks until `pred` holds or `timeout` passes; returns whether it held.
  bool WaitFor(const std::function<bool(const SimState&)>& pred, std::chrono::milliseconds timeout);
  // True if `pred` stays false for the whole `window` (a quiet period).
  bool StaysFalse(const std::function<bool(const SimState&)>& pred,
                  std::chrono::milliseconds window) {
    return !WaitFor(pred, window);
  }
  SimState State() const;
  // Waits until each of `resources` has registered at least `times` times and has an open
  // stream with a snapshot on it.
  bool WaitRegistered(const std::vector<std::string>& resources, int times,
                      std::chrono::milliseconds timeout);

  absl::StatusOr<v1beta1::AllocateResponse> Allocate(const std::string& resource,
                                                     const std::vector<std::string>& ids);
  // The kubelet's GetPreferredAllocation call for one container (test/support/
  // kubelet_admission.h decides when it is made).
  absl::StatusOr<v1beta1::PreferredAllocationResponse> GetPreferredAllocation(
      const std::string& resource, const std::vector<std::string>& available,
      const std::vector<std::string>& must_include, int size);
  // Ends the resource's current ListAndWatch stream from the kubelet side.
  void CancelStream(const std::string& resource);

  // Register calls block this long before being handled (a hung kubelet).
  void SetRegisterDelay(std::chrono::milliseconds delay);
  // Serve the plugin-watcher path too (from the next Start()).
  void EnableWatcher() { watcher_enabled_ = true; }
  // Plugins of `type` go to `handler` (which must outlive the simulator's use of it).
  void SetHandler(const std::string& type, PluginTypeHandler* handler) {
    handlers_[type] = handler;
  }
  // The next `n` watcher registrations fail in RegisterPlugin (answered Notify(false)).
  void RejectNextWatcherRegistrations(int n);

  std::string device_plugin_dir() const { return root_ + "/device-plugins"; }
  std::string plugins_registry_dir() const { return root_ + "/plugins_registry"; }
  std::string kubelet_socket() const { return device_plugin_dir() + "/kubelet.sock"; }

 private:
  class RegistrationService;
  struct Client;
  struct WatchedPlugin {  // actual state of the plugin watcher
    uint64_t uuid = 0;
    std::string name;
    std::string endpoint;
    std::string type;
  };
  std::map<std::string, PluginTypeHandler*> handlers_;  // set before Start()

  grpc::Status HandleRegister(const v1beta1::RegisterRequest& request);
  // The era's connect: dial, options, ListAndWatch. Empty string on success.
  std::string Connect(const std::string& name, const std::string& endpoint,
                      const v1beta1::DevicePluginOptions* request_options);
  // The era's reaction to a client's stream ending. Requires mu_.
  void OnClientEnded(const std::shared_ptr<Client>& client);
  void Disconnect(const std::shared_ptr<Client>& client);  // requires mu_
  // Requires mu_: removes `client` from the era's maps; true if the resource has no client.
  void MarkUnhealthy(const std::string& name);           // requires mu_
  void SetAllocatable(SimResource& res, int64_t value);  // requires mu_
  void Consume(std::shared_ptr<Client> client);
  std::shared_ptr<Client> CurrentClient(const std::string& name) const;  // requires mu_

  // Plugin watcher.
  void WatcherLoop();
  void Reconcile();  // requires mu_
  void RegisterOperation(std::string path, uint64_t uuid);
  void UnregisterOperation(std::string path, WatchedPlugin plugin);
  void OperationDone(const std::string& path, bool failed);  // requires mu_
  bool Dial(const std::shared_ptr<grpc::Channel>& channel, std::chrono::milliseconds timeout);
  void StartThread(std::function<void()> fn);  // requires mu_

  void Note(const std::string& event);  // requires mu_
  bool Stopping() const;

  const std::string root_;
  const KubeletEra era_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  SimState state_;
  // Every client this kubelet process connected, until it dies (old ones are not closed).
  std::vector<std::shared_ptr<Client>> clients_;
  std::map<std::string, std::shared_ptr<Client>> current_;  // by name (endpoints[name])
  std::map<std::string, std::map<std::string, std::shared_ptr<Client>>> by_path_;  // kV137
  std::vector<std::thread> threads_;
  std::unique_ptr<RegistrationService> service_;
  std::unique_ptr<grpc::Server> server_;
  // kubelet.sock is our own listening socket, its connections handed to gRPC: closing it
  // leaves the file in place with nothing accepting, as a dead kubelet process does (gRPC
  // would remove the file on shutdown, which a crashed kubelet never does).
  int listen_fd_ = -1;
  int accept_stop_fd_ = -1;
  std::thread acceptor_;
  bool watcher_enabled_ = false;
  bool watcher_listed_ = false;  // the watcher's first listing is done (Start waits for it)
  std::chrono::milliseconds register_delay_{0};
  bool stopping_ = false;
  int reject_watcher_ = 0;
  // Plugin watcher state.
  std::map<std::string, uint64_t> desired_;      // socket path -> UUID
  std::map<std::string, WatchedPlugin> actual_;  // socket path -> registered plugin
  std::set<std::string> running_ops_;            // socket paths with an operation
  struct Backoff {
    std::chrono::steady_clock::time_point until;
    std::chrono::milliseconds last{0};
  };
  std::map<std::string, Backoff> backoff_;  // socket path -> refused until
  uint64_t next_uuid_ = 0;
  int watcher_stop_fd_ = -1;
  std::thread watcher_;
};

}  // namespace rdmadp::testing
