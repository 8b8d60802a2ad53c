#include "pkg/manager/manager.h"

#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <utility>

#include "pkg/cdi/cdi_spec.h"
#include "pkg/log/log.h"
#include "pkg/manager/manager_internal.h"
#include "pkg/pool/selector.h"
#include "pkg/pool/snapshot.h"
#include "pkg/server/socket_path.h"
#include "pkg/text/cat.h"

namespace rdmadp::manager {
namespace {

// The trigger class of a rescan reason, for a bounded metric label.
std::string RescanTrigger(std::string_view reason) {
  for (std::string_view t : {"periodic", "link", "uevent", "verbs", "SIGHUP", "config file"}) {
    if (reason.starts_with(t)) {
      std::string out(t);
      for (char& c : out) c = c == ' ' ? '_' : static_cast<char>(std::tolower(c));
      return out;
    }
  }
  return "other";
}

}  // namespace

Manager::Manager(ManagerOptions options, config::Config config,
                 std::vector<config::SkippedEntry> skipped)
    : options_(std::move(options)),
      config_(std::move(config)),
      skipped_(std::move(skipped)),
      scanner_(options_.sysfs_root, options_.dev_root),
      instance_id_(server::NewInstanceId()) {
  // Every label value from the start, at 0: a series that appears late breaks rate().
  for (const char* trigger :
       {"periodic", "link", "uevent", "verbs", "sighup", "config_file", "other"}) {
    counters_.rescans_by_trigger[trigger] = 0;
  }
  for (const char* cls : {"config", "registration", "cdi", "link", "metrics"}) {
    counters_.errors_by_class[cls] = 0;
  }
}

Manager::~Manager() = default;

bool Manager::WatcherMode() const { return mode_ == cli::RegistrationMode::kWatcher; }

std::string Manager::DevicePluginDir() const {
  return Cat(options_.kubelet_root_dir, "/device-plugins");
}

std::string Manager::PluginsRegistryDir() const {
  return Cat(options_.kubelet_root_dir, "/plugins_registry");
}

std::string Manager::SocketDir() const {
  return WatcherMode() ? PluginsRegistryDir() : DevicePluginDir();
}

std::string Manager::KubeletSocket() const {
  return Cat(options_.kubelet_root_dir, "/device-plugins/", kKubeletSocketName);
}

int Manager::Run() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGQUIT, SIGHUP}) sigaddset(&signals, s);
  signal_fd_.Reset(::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK));
  auto loop = EventLoop::Create();
  if (!signal_fd_.Valid() || !loop.ok()) {
    log::Error(Cat("cannot set up the event loop: ", std::strerror(errno)));
    return 1;
  }
  loop_ = std::move(*loop);
  heap_trimmer_ = std::make_unique<HeapTrimmer>(*loop_, kHeapTrimDelay);
  loop_->Add(signal_fd_.Get(), [this] { OnSignal(); });

  inotify_fd_.Reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (inotify_fd_.Valid()) {
    loop_->Add(inotify_fd_.Get(), [this] { OnInotifyEvents(); });
    config_dir_watch_ = ::inotify_add_watch(inotify_fd_.Get(), DirOf(options_.config_file).c_str(),
                                            IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
  }
  reload_debounce_ = std::make_unique<Timer>(*loop_, [this] { Reload("config file changed"); });
  event_debounce_ = std::make_unique<Timer>(*loop_, [this] {
    const PendingRescan pending = *std::exchange(pending_rescan_, std::nullopt);
    Rescan(pending.reason, pending.full ? nullptr : &pending.addresses);
  });
  OpenKernelEventSources();

  start_time_seconds_ =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  StartMetrics();
  InitialStart();
  loop_->Run();
  {
    std::lock_guard lock(collect_gate_->mu);
    collect_gate_->closed = true;
    collect_gate_->cv.notify_all();
  }
  http_.reset();
  http_retry_.reset();

  // Shutdown: cancel registrations first (they may be mid-RPC), then stop every server,
  // which ends streams and removes our own sockets and nothing else.
  stopping_ = true;
  for (auto& [name, res] : resources_) res->registration.reset();
  while (!resources_.empty()) StopResource(resources_.begin());
  StopDra();
  kubelet_channel_.reset();
  verbs_.reset();
  periodic_timer_.reset();
  reload_debounce_.reset();
  event_debounce_.reset();
  log::Info("all servers stopped, own sockets removed; exiting");
  return 0;
}

void Manager::StartMetrics() {
  if (options_.metrics_address.empty() || http_) return;
  auto http =
      metrics::HttpEndpoint::Start(options_.metrics_address, [this] { return CollectFromLoop(); });
  if (!http.ok()) {
    // Capacity matters more than metrics: keep serving the kubelet, try the port again.
    ReportProblem(log::Level::kError, "metrics",
                  Cat(std::string(http.status().message()),
                      "; the device plugin keeps serving; "
                      "retrying in ",
                      http_backoff_.count(), " ms"));
    if (!http_retry_) http_retry_ = std::make_unique<Timer>(*loop_, [this] { StartMetrics(); });
    http_retry_->ArmOnce(http_backoff_);
    http_backoff_ = std::min(http_backoff_ * 2, std::chrono::milliseconds(60000));
    return;
  }
  http_ = std::move(*http);
  http_retry_.reset();
  const std::string host =
      http_->host().find(':') != std::string::npos ? Cat("[", http_->host(), "]") : http_->host();
  log::Info(Cat("metrics on http://", host, ":", http_->port(),
                "/metrics, probes on /healthz and /readyz"));
}

void Manager::InitialStart() {
  mode_ = options_.registration_mode;
  if (mode_ == cli::RegistrationMode::kAuto) {
    // Decided by what the kubelet does, never by whether a directory exists: a missing
    // plugins_registry only rules the watcher out.
    if (PathExists(PluginsRegistryDir())) {
      mode_ = cli::RegistrationMode::kWatcher;
      auto_deciding_ = true;
      auto_timer_ = std::make_unique<Timer>(*loop_, [this] {
        DecideAutoMode(cli::RegistrationMode::kKubelet,
                       Cat("the kubelet's plugin watcher did not call GetInfo within ",
                           options_.auto_detect_timeout.count(), " ms"));
      });
      auto_timer_->ArmOnce(options_.auto_detect_timeout);
    } else {
      mode_ = cli::RegistrationMode::kKubelet;
      log::Info(Cat("auto: ", PluginsRegistryDir(), " does not exist; using kubelet.sock"));
    }
  }
  log::Info(Cat("instance ", instance_id_, ": registration mode ",
                cli::RegistrationModeName(options_.registration_mode),
                auto_deciding_ ? " (trying watcher)" : "", ", sockets in ", SocketDir()));
  WatchSocketDirs();
  CleanStaleSockets(SocketDir());
  const sysfs::NodeInventory& inventory = ScanNode();
  for (const auto& p : inventory.AllProblems()) {
    if (known_problems_.insert(p).second) log::Warn(p);
  }
  size_t capable = 0;
  for (const auto& fn : inventory.functions) capable += fn.rdma_capable ? 1 : 0;
  log::Info(Cat("discovered ", inventory.functions.size(), " PCI network function(s), ", capable,
                " RDMA-capable"));
  LogInventoryDetail(inventory);
  for (const auto& rc : config_.resources) {
    if (rc.frontend == config::Frontend::kDevicePlugin) StartResource(rc, inventory);
  }
  SyncDra(inventory);
  if (options_.link_up) BringLinksUp();
  ApplyPeriodicInterval();
  TrackVerbsDevices();
  heap_trimmer_->Activity();  // the config parse and the first scan left freed memory
}

void Manager::LogInventoryDetail(const sysfs::NodeInventory& inventory) const {
  if (!log::Enabled(log::Level::kDebug)) return;  // big nodes: no work unless asked
  for (const auto& fn : inventory.functions) {
    std::string line = Cat("found ", fn.address, " vendor ", fn.vendor, " device ", fn.device,
                           " driver ", fn.driver.empty() ? "(none)" : fn.driver, " netdev ",
                           fn.if_name.empty() ? "(none)" : fn.if_name, " link ",
                           fn.link_type.empty() ? "(none)" : fn.link_type, " NUMA ", fn.numa_node);
    if (fn.rdma_capable) {
      Append(line, ", RDMA: ", fn.rdma_devices.empty() ? "" : fn.rdma_devices[0].name,
             ", char devices [", Join(fn.char_devices, " "), "]");
    } else {
      Append(line, ", not RDMA-capable: ", fn.not_rdma_reason);
    }
    log::Debug(line);
    for (const auto& rc : config_.resources) {
      const std::string why = pool::Explain(rc.selectors, fn);
      log::Debug(
          Cat("  ", rc.FullName(), ": ", why.empty() ? "in the pool" : "not in the pool, " + why));
    }
  }
}

void Manager::ApplyPeriodicInterval() {
  const int64_t secs = config_.periodic_update_interval_seconds;
  if (secs == 0) {
    periodic_timer_.reset();
    log::Info("periodic rescans off (periodicUpdateInterval is 0)");
    return;
  }
  if (!periodic_timer_) {
    periodic_timer_ = std::make_unique<Timer>(*loop_, [this] { Rescan("periodic"); });
  }
  periodic_timer_->ArmPeriodic(milliseconds(secs * 1000));
  log::Info(Cat("periodic rescan every ", secs, " s"));
}

const sysfs::NodeInventory& Manager::ScanNode(const std::set<std::string>* only) {
  sysfs::ScanStats stats;
  inventory_ =
      only != nullptr ? scanner_.Refresh(inventory_, *only, &stats) : scanner_.Scan(&stats);
  counters_.functions_read += stats.functions;
  link_owners_.clear();
  for (const auto& fn : inventory_.functions) {
    for (const auto& netdev : fn.netdevs) link_owners_.emplace(netdev, fn.address);
  }
  return inventory_;
}

pool::SnapshotPtr Manager::BuildSnapshot(const Resource& res,
                                         const sysfs::NodeInventory& inventory) {
  return pool::PoolSnapshot::Build(res.config, inventory,
                                   options_.use_cdi ? &res.cdi_naming : nullptr, res.snapshot);
}

void Manager::StopResource(std::map<std::string, std::unique_ptr<Resource>>::iterator it,
                           bool keep_spec) {
  Drive(*it->second, lifecycle::Event::Stop());  // our socket goes before we look for others
  if (!keep_spec) RemoveCdiSpec(*it->second);
  resources_.erase(it);
}

void Manager::StartResource(const config::ResourceConfig& rc,
                            const sysfs::NodeInventory& inventory) {
  auto res = std::make_unique<Resource>();
  res->config = rc;
  res->cdi_naming = {cdi::Kind(rc), cdi::AnnotationKey(rc)};
  res->snapshot = BuildSnapshot(*res, inventory);
  SyncCdiSpec(*res);  // before the server exists: the spec precedes any ListAndWatch answer
  log::Info(Describe(*res->snapshot));
  if (res->snapshot->hcas().empty()) {
    log::Warn(Cat(rc.FullName(),
                  ": no RDMA device matches its selectors; registering with 0 "
                  "devices (run with --log-level=debug to see what was found)"));
  }
  res->fsm = std::make_unique<lifecycle::RegistrationFsm>(rc.FullName(), &tokens_);
  const std::string name = rc.resource_name;
  res->timer = std::make_unique<Timer>(*loop_, [this, name] {
    if (auto it = resources_.find(name); it != resources_.end()) {
      Drive(*it->second, lifecycle::Event::Timer(it->second->timer_token));
    }
  });
  Resource& ref = *res;
  resources_[name] = std::move(res);
  Drive(ref, lifecycle::Event::Start(WatcherMode() ? lifecycle::Mode::kWatcher
                                                   : lifecycle::Mode::kKubelet));
}

void Manager::Rescan(std::string_view reason, const std::set<std::string>* only) {
  const auto started = std::chrono::steady_clock::now();
  const uint64_t read_before = counters_.functions_read;
  const sysfs::NodeInventory& inventory = ScanNode(only);
  for (const auto& p : inventory.AllProblems()) {
    if (known_problems_.insert(p).second) log::Warn(p);
  }
  for (auto& [name, res] : resources_) {
    res->snapshot = BuildSnapshot(*res, inventory);
    SyncCdiSpec(*res);  // before publishing, so Allocate never names a device the spec lacks
    if (res->server && res->server->Publish(Served(*res))) {
      log::Info(Cat("pool changed (", reason, "): ", Describe(*res->snapshot)));
    }
  }
  SyncDra(inventory);
  TrackVerbsDevices();
  counters_.last_rescan_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  counters_.rescan_seconds_sum += counters_.last_rescan_seconds;
  ++counters_.rescans;
  ++counters_.rescans_by_trigger[RescanTrigger(reason)];
  heap_trimmer_->Activity();  // the old inventory and snapshots are freed memory now
  log::Debug(Cat("rescan (", reason, ") read ", counters_.functions_read - read_before,
                 " PCI function(s) in ", static_cast<int>(counters_.last_rescan_seconds * 1e6),
                 " us"));
}

void Manager::Reload(std::string_view reason) {
  auto loaded = config::LoadConfigFile(options_.config_file);
  if (loaded.ok()) {
    auto problems = config::SocketPathProblems(
        loaded->config, cli::SocketDirs(options_.kubelet_root_dir, options_.registration_mode));
    if (options_.use_cdi) {
      for (auto& p : cdi::KindProblems(loaded->config)) problems.push_back(std::move(p));
    }
    // Reload keeps the strict rule: a new config with any invalid entry changes nothing.
    for (const auto& entry : loaded->skipped) {
      problems.insert(problems.end(), entry.problems.begin(), entry.problems.end());
    }
    if (!problems.empty()) loaded = absl::InvalidArgumentError(Join(problems, "\n"));
  }
  if (!loaded.ok()) {
    log::Error(Cat("reload (", reason, ") rejected; the running config keeps serving:"));
    ReportProblem(log::Level::kError, "config", std::string(loaded.status().message()));
    return;
  }
  for (const auto& w : loaded->warnings) log::Warn(w);
  if (loaded->config == config_) {
    log::Info(Cat("reload (", reason, "): config unchanged; rescanning"));
    Rescan(reason);
    return;
  }
  log::Info(Cat("reload (", reason, "): applying the new config"));
  const sysfs::NodeInventory& inventory = ScanNode();
  std::set<std::string> wanted;
  for (const auto& rc : loaded->config.resources) {
    if (rc.frontend != config::Frontend::kDevicePlugin) continue;  // SyncDra's, in Rescan
    wanted.insert(rc.resource_name);
    auto it = resources_.find(rc.resource_name);
    if (it != resources_.end() && it->second->config == rc) continue;  // keeps its streams
    if (it != resources_.end()) {
      log::Info(Cat(rc.FullName(), ": config changed; restarting its server"));
      StopResource(it, cdi::SpecFileName(it->second->config) == cdi::SpecFileName(rc));
    }
    StartResource(rc, inventory);
  }
  for (auto it = resources_.begin(); it != resources_.end();) {
    if (wanted.count(it->first) == 0) {
      log::Info(Cat(it->second->config.FullName(), ": removed from the config; stopping"));
      StopResource(it++);
    } else {
      ++it;
    }
  }
  config_ = std::move(loaded->config);
  skipped_.clear();
  LogInventoryDetail(inventory);
  ++counters_.reloads;
  ApplyPeriodicInterval();
  Rescan(reason);
}

}  // namespace rdmadp::manager
