// A kubelet simulator that treats a device plugin the way the real kubelet's device
// manager does (reference/kubelet-contract.md):
//  - serves v1beta1.Registration/Register on <root>/device-plugins/kubelet.sock, checks the
//    version and the extended-resource name with the kubelet's error texts (code UNKNOWN);
//  - inside Register: joins the endpoint to the socket dir, dials it (blocking, 10 s),
//    calls GetDevicePluginOptions, starts the ListAndWatch consumer, then answers;
//  - a newer registration for the same resource replaces (and cancels) the older stream;
//  - each ListAndWatch message is a full snapshot: capacity = all, allocatable = "Healthy";
//    a stream end marks every device unhealthy and is never re-dialled;
//  - Restart(): stops, removes every socket in device-plugins, starts again;
//  - plugin watcher (EnableWatcher): inotify on <root>/plugins_registry plus a walk at start;
//    for each new socket: dial, GetInfo (1 s), validate type, versions and name, dial the
//    endpoint verbatim, GetDevicePluginOptions, start ListAndWatch, then
//    NotifyRegistrationStatus(true). A failure is notified as (false, reason) and, like the
//    real kubelet, not retried until the socket is re-created. Deleting a socket deregisters.
// Thread-safe; waits use a condition variable, never sleeps.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/api/deviceplugin.grpc.pb.h"

namespace rdmadp::testing {

struct SimResource {
  std::string endpoint;  // absolute socket path the plugin registered
  int registrations = 0;
  bool stream_open = false;
  int streams_ended = 0;
  std::vector<v1beta1::ListAndWatchResponse> snapshots;  // every message, in order
  int64_t capacity = 0;
  int64_t allocatable = 0;
  bool has_options = false;
  v1beta1::DevicePluginOptions options;
};

struct SimState {
  std::map<std::string, SimResource> resources;  // by resource name
  std::vector<std::string> events;               // human-readable log, in order
  std::vector<std::string> rejected;             // Register errors returned
};

class KubeletSimulator {
 public:
  explicit KubeletSimulator(std::string root_dir);
  ~KubeletSimulator();

  // Creates <root>/device-plugins and serves kubelet.sock.
  absl::Status Start();
  // Stops serving, cancels every stream and drops every plugin connection.
  void Stop();
  // Stop, remove every socket in device-plugins (as the real kubelet does), Start.
  absl::Status Restart();

  // Blocks until `pred` holds or `timeout` passes; returns whether it held.
  bool WaitFor(const std::function<bool(const SimState&)>& pred, std::chrono::milliseconds timeout);
  SimState State() const;
  // Waits until each of `resources` has registered at least `times` times and has an open
  // stream with a snapshot on it.
  bool WaitRegistered(const std::vector<std::string>& resources, int times,
                      std::chrono::milliseconds timeout);

  absl::StatusOr<v1beta1::AllocateResponse> Allocate(const std::string& resource,
                                                     const std::vector<std::string>& ids);
  // Ends the resource's ListAndWatch stream from the kubelet side.
  void CancelStream(const std::string& resource);

  // Register calls block this long before being handled (a hung kubelet).
  void SetRegisterDelay(std::chrono::milliseconds delay);

  // Serve the plugin-watcher path too (from the next Start()).
  void EnableWatcher() { watcher_enabled_ = true; }
  // The next `n` watcher registrations are answered NotifyRegistrationStatus(false).
  void RejectNextWatcherRegistrations(int n);

  std::string device_plugin_dir() const { return root_ + "/device-plugins"; }
  std::string plugins_registry_dir() const { return root_ + "/plugins_registry"; }
  std::string kubelet_socket() const { return device_plugin_dir() + "/kubelet.sock"; }

 private:
  class RegistrationService;
  struct Client;

  grpc::Status HandleRegister(const v1beta1::RegisterRequest& request);
  // Dial, options, stream; shared by both registration paths. Empty string on success.
  std::string Connect(const std::string& resource, const std::string& endpoint);
  void WatchRegistry();
  void RegisterWatched(const std::string& socket_path);
  void Consume(std::shared_ptr<Client> client, std::string resource);
  void Note(const std::string& event);  // requires mu_

  const std::string root_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  SimState state_;
  std::map<std::string, std::shared_ptr<Client>> clients_;  // by resource name
  std::vector<std::thread> consumers_;
  std::unique_ptr<RegistrationService> service_;
  bool watcher_enabled_ = false;
  std::chrono::milliseconds register_delay_{0};
  bool stopping_ = false;
  int reject_watcher_ = 0;
  std::map<std::string, std::string> watched_;  // socket path -> resource name
  int watcher_stop_fd_ = -1;
  std::thread watcher_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace rdmadp::testing
