// A stand-in for the Go plugin (Mellanox/NVIDIA k8s-rdma-shared-dev-plugin) in the migration
// and rollback tests (test/e2e/migrate_e2e_test.cpp): the same resource name and slot count
// as one of our resources, and the Go plugin's way of registering, and nothing else (no
// sysfs, no health, no CDI). One resource per instance, as the Go plugin runs one gRPC
// server per config entry.
//
// Contract, as the Go plugin behaves (read from its resource server's source):
//  - Socket `<name>.sock`, where <name> is the resource name without its prefix:
//      kWatcher (the Go plugin's default wherever plugins_registry exists): in
//        <kubelet root>/plugins_registry, one socket serving both
//        pluginregistration.Registration and v1beta1.DevicePlugin; GetInfo answers type
//        "DevicePlugin", name = the resource, endpoint = that same socket's path, supported
//        versions "v1alpha1" and "v1beta1". The kubelet's plugin watcher finds the socket,
//        registers it, and calls NotifyRegistrationStatus.
//      kKubelet: in <kubelet root>/device-plugins; Start() sends one Register to
//        kubelet.sock (version v1beta1, endpoint = the socket's file name) after the server
//        serves, and returns its outcome.
//  - GetDevicePluginOptions: every option false. ListAndWatch: devices "0".."N-1", all
//    Healthy, sent once; the stream is then held until the kubelet ends it or Stop() runs.
//    Allocate: one empty container response per container request (the Go plugin hands
//    out its HCAs' char devices). PreStartContainer: empty. GetPreferredAllocation:
//    UNIMPLEMENTED (never advertised).
//  - It registers exactly once, in Start(), and NEVER again. When the kubelet ends its
//    ListAndWatch stream, the Go plugin's handler just returns: nothing in it notices that
//    the kubelet has dropped it, so nothing registers it again. In watcher mode it has no
//    other trigger at all; the watcher only acts when the socket is re-created, and the Go
//    plugin keeps its socket while it runs. So on kubelets 1.25-1.36, where the end of ANY
//    stream of a resource disconnects that resource's current client, a Go plugin that is the
//    current client when another plugin's stream ends stays disconnected (allocatable 0) until
//    its pod restarts. This double does the same: a stream the kubelet ends is counted
//    (streams_ended) and nothing else happens.
//  - Not modelled: kubelet mode's 5 s poll of its own socket file (the Go plugin restarts
//    its server and registers again once a restarting kubelet has wiped device-plugins; no
//    test here restarts the kubelet), and Notify(false), which stops the Go plugin's server
//    for good (here it is only recorded).
//  - Stop() is a pod deleted with SIGTERM: the server stops (every stream ends), then the
//    socket file is removed. Start() after Stop() is not supported.
//
// Threads: Start() and Stop() run on the owner's thread, never both at once; the destructor
// calls Stop(). gRPC's sync server threads run the handlers. ListAndWatch holds its server
// thread while the stream is open, checking its context every 20 ms (a sync handler hears
// of a cancellation only by asking). State() and WaitFor() are thread-safe; WaitFor waits
// on a condition variable notified whenever the state changes.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pkg/api/deviceplugin.grpc.pb.h"

namespace rdmadp::testing {

enum class GoRegistration { kKubelet, kWatcher };

struct GoLikeOptions {
  std::string kubelet_root;   // device-plugins/ and plugins_registry/ are under it
  std::string resource_name;  // "<prefix>/<name>", e.g. rdma/hca_shared_devices_a
  int devices = 0;            // slots "0".."N-1" (the config's rdmaHcaMax)
  GoRegistration mode = GoRegistration::kWatcher;
};

struct GoLikeState {
  bool serving = false;     // between a successful Start() and Stop()
  int registrations = 0;    // accepted: Register answered OK (kubelet) or Notify(true) (watcher)
  int register_calls = 0;   // kubelet mode: Register RPCs sent (never more than one)
  int get_info_calls = 0;   // watcher mode: GetInfo calls from the kubelet's plugin watcher
  int notified_ok = 0;      // watcher mode: NotifyRegistrationStatus(registered)
  int notified_failed = 0;  // watcher mode: NotifyRegistrationStatus(not registered)
  std::vector<std::string> errors;  // a failed Register, Notify(false) texts
  int options_calls = 0;            // GetDevicePluginOptions
  int streams_started = 0;          // ListAndWatch calls
  int streams_open = 0;
  int streams_ended = 0;  // ended by the kubelet while serving; nothing follows any of them
  int allocate_calls = 0;
};

class GoLikePlugin {
 public:
  explicit GoLikePlugin(GoLikeOptions options);
  ~GoLikePlugin();
  GoLikePlugin(const GoLikePlugin&) = delete;
  GoLikePlugin& operator=(const GoLikePlugin&) = delete;

  // Serves the socket (a stale file there is removed first, as the Go plugin does); in
  // kubelet mode then registers once and returns the outcome of that Register.
  absl::Status Start();
  // The pod is deleted: the server stops (streams end), the socket file goes. Idempotent.
  void Stop();

  const std::string& resource_name() const { return options_.resource_name; }
  GoRegistration mode() const { return options_.mode; }
  // Absolute path of the socket (the endpoint the kubelet dials, in either mode).
  const std::string& socket_path() const { return socket_path_; }

  GoLikeState State() const;
  // Blocks until `pred` holds or `timeout` passes; returns whether it held.
  bool WaitFor(const std::function<bool(const GoLikeState&)>& pred,
               std::chrono::milliseconds timeout);

 private:
  class DevicePluginService;
  class RegistrationService;

  absl::Status RegisterWithKubelet();
  grpc::Status ListAndWatch(grpc::ServerContext* context,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer);
  void Update(const std::function<void(GoLikeState&)>& change);

  const GoLikeOptions options_;
  const std::string socket_path_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  GoLikeState state_;
  bool stopping_ = false;  // guarded by mu_: open ListAndWatch handlers return
  // The services outlive the server (declared first: destroyed last).
  std::unique_ptr<DevicePluginService> device_plugin_;
  std::unique_ptr<RegistrationService> registration_;
  std::unique_ptr<grpc::Server> server_;  // owner's thread only (Start, Stop)
};

}  // namespace rdmadp::testing
