// The device-plugin front end: one ResourceServer per configList entry with "frontend":
// "devicePlugin" (the default), each registered with the kubelet through kubelet.sock or its
// plugin watcher (--registration-mode; "auto" decides by what the kubelet does), each driven
// by its own registration state machine (pkg/lifecycle), which decides and this class carries
// out: serve a socket, start or cancel a Register, arm a timer. In CDI mode it also keeps one
// CDI spec per resource on disk, written before any Allocate can name its devices.
//
// Threads: the event loop's (pkg/frontend/front_end.h). gRPC queue threads and registration
// attempts post their results back through the loop.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "pkg/deviceplugin/registrar.h"
#include "pkg/deviceplugin/resource_server.h"
#include "pkg/frontend/front_end.h"
#include "pkg/frontend/registration_mode.h"
#include "pkg/lifecycle/registration_fsm.h"
#include "pkg/pool/snapshot.h"

namespace rdmadp::deviceplugin {

struct FrontEndOptions {
  frontend::RegistrationMode registration_mode = frontend::RegistrationMode::kKubelet;
  std::chrono::milliseconds auto_detect_timeout{5000};  // auto: how long to wait for GetInfo
  bool use_cdi = false;
  std::string cdi_spec_dir = "/var/run/cdi";
  // Where the memlock hook is installed on the host ("" = not installed): CDI specs of
  // entries with `memlock` name it (cdi/cdi_spec.h).
  std::string memlock_hook{};
  bool topology = true;  // NUMA nodes on every slot (--no-topology: none)
};

// The problems of `config` this front end cannot serve with `options` under the kubelet
// root, one line per entry naming the field: a socket path too long for its directory, a
// CDI kind no CDI library accepts. Start and reload both run these (one path, so a reload
// refuses exactly what a start refuses). `indices`: LoadedConfig::indices.
std::vector<std::string> ConfigProblems(const FrontEndOptions& options,
                                        const std::string& kubelet_root_dir,
                                        const config::Config& config,
                                        const std::vector<size_t>& indices);

class DevicePluginFrontEnd final : public frontend::FrontEnd {
 public:
  DevicePluginFrontEnd(frontend::Host& host, FrontEndOptions options);
  ~DevicePluginFrontEnd() override;

  void Apply(const config::Config& config, const sysfs::NodeInventory& inventory,
             std::string_view reason) override;
  void OnKubeletEvent(const frontend::KubeletEvent& event) override;
  std::vector<std::string> Problems(const config::Config& config,
                                    const std::vector<size_t>& indices) const override;
  void Collect(metrics::View& view) const override;
  void Stop() override;

 private:
  struct Resource;
  class ResourceExecutor;                                                // registration.cpp
  using ResourceMap = std::map<std::string, std::unique_ptr<Resource>>;  // by resourceName

  // Why an entry's deviceModel may not switch from `running` to `wanted` now ("" when it
  // may): the kubelet holds devices of it. Its checkpoint (allocated_ids.h) says whether it
  // holds any; the pod-resources API, where mounted, which containers still run with them
  // (one call of at most kPodResourcesTimeout, on the loop: only a reload that switches).
  std::string ModelSwitchProblem(const config::ResourceConfig& running,
                                 const config::ResourceConfig& wanted) const;
  // A switch made while the plugin was down (a restart with the new config): one line
  // when the kubelet's checkpoint holds IDs of the other model, "" when not.
  std::string OtherModelHeld(const config::ResourceConfig& rc) const;
  std::string CheckpointPath() const;
  static constexpr std::chrono::milliseconds kPodResourcesTimeout{1000};
  static constexpr size_t kMaxHoldersNamed = 5;
  // First Apply: the registration mode ("auto" starts as watcher while plugins_registry
  // exists), and the sockets dead instances left behind.
  void ChooseMode();
  void StartResource(const config::ResourceConfig& rc, const sysfs::NodeInventory& inventory);
  // Stops the resource's server; removes its CDI spec unless `keep_spec` (a restart that
  // rewrites the same file).
  void StopResource(ResourceMap::iterator it, bool keep_spec = false);
  // Destroys the resource's server, keeping its counts for the metrics.
  static void DropServer(Resource& res);
  // Warns, once per distinct reason, when no pod can get the pool (empty or all unhealthy),
  // naming what to fix: a missing rdma_cm, ports waiting for the subnet manager, ...
  void WarnIfUnusable(Resource& res, const sysfs::NodeInventory& inventory);
  pool::SnapshotPtr BuildSnapshot(const Resource& res, const sysfs::NodeInventory& inventory) const;
  // What the kubelet is shown: the pool, or all of it Unhealthy while its CDI spec is not
  // on disk.
  static pool::SnapshotPtr Served(const Resource& res);

  // Registration (registration.cpp). Hands `event` to the resource's state machine and
  // carries out what it decides.
  void Drive(Resource& res, const lifecycle::Event& event);
  // Posts `event` for resource `name` to the loop (any thread); dropped if it is gone.
  std::function<void(lifecycle::Event)> PostTo(const std::string& name);
  // Publishes the resource's socket; the outcome is the event to hand back.
  lifecycle::Event ServeSocket(Resource& res, uint64_t server_token);
  void StartRegistration(Resource& res, uint64_t attempt, bool fresh);
  void OnWatcherGetInfo();
  void DecideAutoMode(frontend::RegistrationMode mode, std::string_view why);
  void RemoveDeadSockets() const;
  bool WatcherMode() const { return mode_ == frontend::RegistrationMode::kWatcher; }
  std::string SocketDir() const;

  // CDI mode (cdi_files.cpp): (re)writes the resource's spec if the pool changed since the
  // last good write.
  void SyncCdiSpec(Resource& res);
  // Removes the resource's spec unless a live instance of ours still serves it.
  void RemoveCdiSpec(const Resource& res);
  bool AnotherInstanceServes(const std::string& resource_name) const;

  frontend::Host& host_;
  const FrontEndOptions options_;
  bool started_ = false;
  // Effective mode: kKubelet or kWatcher (auto starts as watcher until decided).
  frontend::RegistrationMode mode_ = frontend::RegistrationMode::kKubelet;
  bool auto_deciding_ = false;
  std::unique_ptr<loop::Alarm> auto_timer_;
  std::set<std::string> configured_;  // resourceNames of our entries: whose dead sockets go
  ResourceMap resources_;
  std::shared_ptr<grpc::Channel> kubelet_channel_;  // long-lived, see registrar.h
  uint64_t kubelet_restarts_ = 0;                   // kubelet.sock created (kubelet mode)
};

}  // namespace rdmadp::deviceplugin
