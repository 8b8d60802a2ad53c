// Wires everything on the one event loop: scans, pool snapshots, one ResourceServer per
// configured resource, registration with the kubelet, kubelet-restart detection, reload,
// periodic rescans and shutdown. Everything here runs on the loop thread; gRPC and
// registration threads only Post() results back.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "pkg/cli/flags.h"
#include "pkg/config/config.h"
#include "pkg/dra/dra_view.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/lifecycle/registration_fsm.h"
#include "pkg/log/log.h"
#include "pkg/loop/event_loop.h"
#include "pkg/loop/heap_trimmer.h"
#include "pkg/metrics/http_endpoint.h"
#include "pkg/netlink/kernel_events.h"
#include "pkg/rdma/verbs_events.h"
#include "pkg/server/registrar.h"
#include "pkg/server/resource_server.h"
#include "pkg/sysfs/scanner.h"

namespace rdmadp::manager {

// The loop's room (pkg/loop), used by name throughout the wiring.
using loop::EventLoop;
using loop::HeapTrimmer;
using loop::Timer;

struct ManagerOptions {
  std::string config_file;
  std::string kubelet_root_dir;
  std::string sysfs_root;
  std::string dev_root;
  cli::RegistrationMode registration_mode = cli::RegistrationMode::kKubelet;
  std::chrono::milliseconds auto_detect_timeout{5000};
  bool link_up = true;
  bool use_cdi = false;
  std::string cdi_spec_dir = "/var/run/cdi";
  std::string metrics_address;  // "" = off
  std::string version;
  // The DRA front end (entries with frontend: dra).
  std::string dra_driver = "rdma.k8s-rdma-shared-dp.io";
  std::string node_name;
  std::string kube_api_server;  // "" = no API server: slices are not published
  std::string kube_ca_file;
  std::string kube_token_file;
};

class Manager {
 public:
  // `skipped`: config entries left out at start (invalid on their own); reported by /readyz
  // and the metrics until a reload applies a fully valid config.
  Manager(ManagerOptions options, config::Config config,
          std::vector<config::SkippedEntry> skipped = {});
  ~Manager();

  // Blocks until SIGTERM, SIGINT or SIGQUIT (which must be blocked in every thread before
  // any thread starts, so that only our signalfd sees them). Returns the exit status.
  int Run();

 private:
  struct Resource;
  struct DraDriver;

  void InitialStart();
  // --log-level=debug: every function found, and per resource why it is (not) in the pool.
  void LogInventoryDetail(const sysfs::NodeInventory& inventory) const;
  // Re-reads sysfs (all of it, or only the PCI functions in `only`) and publishes what
  // changed.
  void Rescan(std::string_view reason, const std::set<std::string>* only = nullptr);
  void Reload(std::string_view reason);
  void StartResource(const config::ResourceConfig& rc, const sysfs::NodeInventory& inventory);
  // The DRA front end (manager_dra.cpp): one driver instance for every DRA entry. SyncDra
  // starts, updates or stops it to match config_ and `inventory`.
  void SyncDra(const sysfs::NodeInventory& inventory);
  // Publishes dra_->pools: CDI specs, the Prepare view, slices, health, registration.
  void PublishDra();
  void StopDra();
  void DriveDra(const lifecycle::Event& event);
  lifecycle::Event ServeDra(uint64_t server_token);
  // Writes the view's CDI specs; answers those that could not be written (file -> why).
  std::map<std::string, std::string> SyncDraCdiSpecs(const dra::DraView& view);
  // Creates the API client and the slice publisher (retried by SyncDra until it works).
  void StartDraApi();
  void PublishDraHealth();
  // Scans sysfs (all of it, or only the functions in `only`), keeps the result as
  // inventory_ and remembers which links matter for link events.
  const sysfs::NodeInventory& ScanNode(const std::set<std::string>* only = nullptr);
  pool::SnapshotPtr BuildSnapshot(const Resource& res, const sysfs::NodeInventory& inventory);
  // CDI mode: (re)writes the resource's spec if the pool changed since the last good write.
  void SyncCdiSpec(Resource& res);
  // Removes the resource's spec unless a live instance of ours still serves it.
  void RemoveCdiSpec(const Resource& res);
  bool AnotherInstanceServes(const std::string& resource_name) const;
  // Destroys the resource's server, keeping its allocation count for the metrics.
  void DropServer(Resource& res);
  // Logs a problem an operator must see and records it for the metrics under `error_class`
  // (config, registration, cdi, link, metrics: a bounded label set).
  void ReportProblem(log::Level level, std::string_view error_class, const std::string& message);
  // Starts the metrics endpoint; a busy port is retried with back-off, never fatal.
  void StartMetrics();
  // What the kubelet is shown: the pool, or all of it Unhealthy while its CDI spec is not
  // on disk.
  pool::SnapshotPtr Served(const Resource& res) const;
  metrics::View BuildView() const;
  metrics::DraView BuildDraView() const;  // requires an active dra_
  // HTTP threads: asks the loop for a View; nullopt if it does not answer within 1 s.
  std::optional<metrics::View> CollectFromLoop();
  // Stops the resource's server; removes its CDI spec unless `keep_spec` (a restart that
  // rewrites the same file).
  void StopResource(std::map<std::string, std::unique_ptr<Resource>>::iterator it,
                    bool keep_spec = false);
  // Hands `event` to the resource's state machine and carries out what it decides.
  void Drive(Resource& res, const lifecycle::Event& event);
  // Posts `event` for resource `name` to the loop (any thread); dropped if it is gone.
  std::function<void(lifecycle::Event)> PostTo(const std::string& name);
  lifecycle::Facts CurrentFacts(const Resource& res) const;
  // Publishes the resource's socket; the outcome is the event to hand back.
  lifecycle::Event ServeSocket(Resource& res, uint64_t server_token);
  void StartRegistration(Resource& res, uint64_t attempt, bool fresh);
  void OnWatcherGetInfo();
  void DecideAutoMode(cli::RegistrationMode mode, std::string_view why);
  // Default: device-plugin sockets of configured resources; with `prefix`, the DRA
  // driver's sockets named <prefix><instance><suffix>.
  void CleanStaleSockets(const std::string& dir, std::string_view prefix = "",
                         std::string_view suffix = "");
  void WatchSocketDirs();
  void OnSignal();
  void OnInotifyEvents();
  void ApplyPeriodicInterval();
  // Coalesces bursts of kernel events into one rescan shortly after the first. An event
  // that names the PCI function it concerns (`address`) costs a re-read of that function
  // only; one that does not (nullopt) makes the rescan a full one.
  void RequestRescan(std::string reason, std::optional<std::string> address);
  void OpenKernelEventSources();
  void TrackVerbsDevices();
  void BringLinksUp();

  std::string DevicePluginDir() const;
  std::string PluginsRegistryDir() const;
  std::string SocketDir() const;
  std::string KubeletSocket() const;
  bool WatcherMode() const;

  ManagerOptions options_;
  config::Config config_;
  std::vector<config::SkippedEntry> skipped_;
  sysfs::Scanner scanner_;
  std::string instance_id_;
  lifecycle::TokenSource tokens_;  // one per process: tokens never repeat
  std::unique_ptr<EventLoop> loop_;
  // After start, rescans, reloads and Allocates; outlives the servers that call it.
  std::unique_ptr<HeapTrimmer> heap_trimmer_;
  UniqueFd signal_fd_;
  UniqueFd inotify_fd_;
  // Effective mode: kKubelet or kWatcher (auto starts as watcher until decided).
  cli::RegistrationMode mode_ = cli::RegistrationMode::kKubelet;
  bool auto_deciding_ = false;
  std::unique_ptr<Timer> auto_timer_;
  int plugin_dir_watch_ = -1;
  int registry_dir_watch_ = -1;
  int root_dir_watch_ = -1;  // the kubelet root, to see the socket directories appear
  int ancestor_watch_ = -1;  // nearest existing ancestor while the kubelet root is missing
  int config_dir_watch_ = -1;
  std::unique_ptr<Timer> periodic_timer_;
  std::unique_ptr<Timer> reload_debounce_;
  std::unique_ptr<Timer> event_debounce_;
  struct PendingRescan {
    std::string reason;  // of the first event
    bool full = false;
    std::set<std::string> addresses;  // the functions to re-read unless `full`
  };
  std::optional<PendingRescan> pending_rescan_;  // set while a debounced rescan is armed
  std::unique_ptr<netlink::LinkEventSocket> link_events_;
  sysfs::NodeInventory inventory_;  // the latest scan (set by ScanNode())
  // netdev -> PCI address, of inventory_: the only links whose events can change a pool.
  std::map<std::string, std::string> link_owners_;
  std::unique_ptr<netlink::UeventSocket> uevents_;
  std::unique_ptr<rdma::VerbsEvents> verbs_;
  metrics::Counters counters_;  // loop thread
  // Hand-over between HTTP threads and the loop; `closed` releases waiters at shutdown.
  struct CollectGate {
    std::mutex mu;
    std::condition_variable cv;
    bool closed = false;
  };
  std::shared_ptr<CollectGate> collect_gate_ = std::make_shared<CollectGate>();
  std::unique_ptr<metrics::HttpEndpoint> http_;
  std::unique_ptr<Timer> http_retry_;
  std::chrono::milliseconds http_backoff_{1000};
  double start_time_seconds_ = 0;
  std::map<std::string, std::unique_ptr<Resource>> resources_;  // by resourceName
  std::unique_ptr<DraDriver> dra_;                              // while a DRA entry is configured
  std::shared_ptr<grpc::Channel> kubelet_channel_;              // long-lived, see registrar.h
  std::set<std::string> known_problems_;
  bool stopping_ = false;
};

}  // namespace rdmadp::manager
