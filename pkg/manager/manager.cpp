#include "pkg/manager/manager.h"

#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "pkg/cdi/cdi_spec.h"
#include "pkg/cdi/spec_files.h"
#include "pkg/log/log.h"
#include "pkg/netlink/link_up.h"
#include "pkg/pool/snapshot.h"
#include "pkg/server/socket_path.h"
#include "pkg/text/cat.h"

namespace rdmadp::manager {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kInitialBackoff{250};
constexpr milliseconds kMaxBackoff{30000};
constexpr milliseconds kReloadDebounce{100};
constexpr milliseconds kEventDebounce{20};
constexpr milliseconds kRegisterTimeout{5000};
constexpr std::string_view kKubeletSocketName = "kubelet.sock";

bool PathExists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string DirOf(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Describe(const pool::PoolSnapshot& snap) {
  const auto& adv = snap.advertised();
  std::vector<std::string> hcas;
  for (const auto& fn : snap.hcas()) {
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

}  // namespace

struct Manager::Resource {
  config::ResourceConfig config;
  pool::SnapshotPtr snapshot;  // latest, kept even while not serving
  std::unique_ptr<server::ResourceServer> server;
  std::unique_ptr<server::KubeletRegistration> registration;
  std::unique_ptr<Timer> retry;
  std::shared_ptr<grpc::Channel> own_channel;  // to our own socket; path fixed per mode
  uint64_t attempt = 0;                        // registration attempts; stale results are dropped
  uint64_t generation = 0;  // server incarnations; stale stream/watcher events are dropped
  milliseconds backoff = kInitialBackoff;
  bool registered = false;
  uint64_t registrations = 0;
  uint64_t allocations_before = 0;  // answered by earlier servers of this resource
  pool::CdiNaming cdi_naming;
  std::optional<pool::Advertised> cdi_written;  // pool content of the last spec written
};

Manager::Manager(ManagerOptions options, config::Config config)
    : options_(std::move(options)),
      config_(std::move(config)),
      scanner_(options_.sysfs_root, options_.dev_root),
      instance_id_(server::NewInstanceId()) {}

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
  loop_->Add(signal_fd_.Get(), [this] { OnSignal(); });

  inotify_fd_.Reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (inotify_fd_.Valid()) {
    loop_->Add(inotify_fd_.Get(), [this] { OnDevicePluginDirEvent(); });
    config_dir_watch_ = ::inotify_add_watch(inotify_fd_.Get(), DirOf(options_.config_file).c_str(),
                                            IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
  }
  reload_debounce_ = std::make_unique<Timer>(*loop_, [this] { Reload("config file changed"); });
  event_debounce_ = std::make_unique<Timer>(*loop_, [this] {
    const std::string reason = std::exchange(pending_rescan_reason_, "");
    Rescan(reason);
  });
  OpenKernelEventSources();

  if (!options_.metrics_address.empty()) {
    auto http = metrics::HttpEndpoint::Start(options_.metrics_address,
                                             [this] { return CollectFromLoop(); });
    if (!http.ok()) {
      log::Error(std::string(http.status().message()));
      return 1;
    }
    http_ = std::move(*http);
    log::Info(Cat("metrics on http://", http_->host(), ":", http_->port(),
                  "/metrics, probes on /healthz and /readyz"));
  }
  InitialStart();
  loop_->Run();
  {
    std::lock_guard lock(collect_gate_->mu);
    collect_gate_->closed = true;
    collect_gate_->cv.notify_all();
  }
  http_.reset();

  // Shutdown: cancel registrations first (they may be mid-RPC), then stop every server,
  // which ends streams and removes our own sockets and nothing else.
  stopping_ = true;
  for (auto& [name, res] : resources_) {
    res->registration.reset();
    res->retry.reset();
  }
  while (!resources_.empty()) StopResource(resources_.begin());
  kubelet_channel_.reset();
  verbs_.reset();
  periodic_timer_.reset();
  reload_debounce_.reset();
  event_debounce_.reset();
  log::Info("all servers stopped, own sockets removed; exiting");
  return 0;
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
  const sysfs::NodeInventory inventory = scanner_.Scan();
  for (const auto& p : inventory.problems) {
    if (known_problems_.insert(p).second) log::Warn(p);
  }
  size_t capable = 0;
  for (const auto& fn : inventory.functions) capable += fn.rdma_capable ? 1 : 0;
  log::Info(Cat("discovered ", inventory.functions.size(), " PCI network function(s), ", capable,
                " RDMA-capable"));
  for (const auto& rc : config_.resources) StartResource(rc, inventory);
  if (options_.link_up) BringLinksUp(inventory);
  ApplyPeriodicInterval();
  TrackVerbsDevices();
}

void Manager::BringLinksUp(const sysfs::NodeInventory& /*inventory*/) {
  std::set<std::string> links;
  for (const auto& [name, res] : resources_) {
    for (const auto& fn : res->snapshot->hcas()) {
      if (!fn.if_name.empty()) links.insert(fn.if_name);
    }
  }
  for (const auto& link : links) {
    if (auto status = netlink::SetLinkUp(link); !status.ok()) {
      ReportProblem(log::Level::kWarn,
                    Cat(std::string(status.message()), " (pass --no-link-up to skip this step)"));
    }
  }
}

void Manager::OpenKernelEventSources() {
  if (auto links = netlink::LinkEventSocket::Open(); links.ok()) {
    link_events_ = std::make_unique<netlink::LinkEventSocket>(std::move(*links));
    loop_->Add(link_events_->fd(), [this] {
      if (link_events_->Drain() > 0) RequestRescan("link event");
    });
  } else {
    log::Warn(Cat(std::string(links.status().message()),
                  "; link changes are seen only by "
                  "periodic rescans"));
  }
  if (auto uevents = netlink::UeventSocket::Open(); uevents.ok()) {
    uevents_ = std::make_unique<netlink::UeventSocket>(std::move(*uevents));
    loop_->Add(uevents_->fd(), [this] {
      for (const auto& ev : uevents_->Drain()) {
        if (netlink::UeventTriggersRescan(ev)) {
          RequestRescan(Cat("uevent ", ev.action, " ", ev.subsystem, " ", ev.devpath));
        }
      }
    });
  } else {
    log::Warn(Cat(std::string(uevents.status().message()),
                  "; hot-plug is seen only by "
                  "periodic rescans"));
  }
  // Verbs events come from the real devices: only meaningful on the real sysfs.
  if (options_.sysfs_root == "/sys") {
    verbs_ = std::make_unique<rdma::VerbsEvents>(
        [this](int fd, std::function<void()> fn) { loop_->Add(fd, std::move(fn)); },
        [this](int fd) { loop_->Remove(fd); },
        [this](std::string what) { RequestRescan(Cat("verbs event ", what)); });
  }
}

void Manager::TrackVerbsDevices() {
  if (!verbs_) return;
  std::set<std::string> ibdevs;
  for (const auto& [name, res] : resources_) {
    for (const auto& fn : res->snapshot->hcas()) {
      for (const auto& dev : fn.rdma_devices) ibdevs.insert(dev.name);
    }
  }
  verbs_->Track(ibdevs);
}

void Manager::RequestRescan(std::string reason) {
  log::Debug(Cat("rescan requested: ", reason));
  if (!pending_rescan_reason_.empty() || stopping_) return;
  pending_rescan_reason_ = std::move(reason);
  event_debounce_->ArmOnce(kEventDebounce);
}

void Manager::WatchSocketDirs() {
  if (!inotify_fd_.Valid()) return;
  constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM;
  if (root_dir_watch_ < 0) {
    root_dir_watch_ = ::inotify_add_watch(inotify_fd_.Get(), options_.kubelet_root_dir.c_str(),
                                          IN_CREATE | IN_MOVED_TO);
    if (root_dir_watch_ >= 0 && ancestor_watch_ >= 0) {
      ::inotify_rm_watch(inotify_fd_.Get(), ancestor_watch_);
      ancestor_watch_ = -1;
    }
  }
  if (root_dir_watch_ < 0 && ancestor_watch_ < 0) {
    // The kubelet root itself is missing: watch the nearest existing ancestor and follow
    // the path down as directories appear.
    std::filesystem::path dir = std::filesystem::path(options_.kubelet_root_dir).parent_path();
    while (!dir.empty() && !PathExists(dir.string())) dir = dir.parent_path();
    if (!dir.empty()) {
      ancestor_watch_ =
          ::inotify_add_watch(inotify_fd_.Get(), dir.c_str(), IN_CREATE | IN_MOVED_TO);
    }
  }
  if (plugin_dir_watch_ < 0) {
    plugin_dir_watch_ = ::inotify_add_watch(inotify_fd_.Get(), DevicePluginDir().c_str(), kMask);
  }
  if (registry_dir_watch_ < 0 && (WatcherMode() || auto_deciding_)) {
    registry_dir_watch_ =
        ::inotify_add_watch(inotify_fd_.Get(), PluginsRegistryDir().c_str(), kMask);
  }
}

void Manager::CleanStaleSockets(const std::string& dir) {
  // Only sockets named like ours (<resourceName>-<8 hex>.sock) for a configured resource,
  // of another instance, and with nobody accepting on them: provably dead.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename();
    if (!entry.is_socket(ec) || !file.ends_with(".sock") || file.size() < 14) continue;
    const std::string stem = file.substr(0, file.size() - 5);
    const auto dash = stem.rfind('-');
    if (dash == std::string::npos || stem.size() - dash - 1 != 8) continue;
    const std::string id = stem.substr(dash + 1);
    if (id == instance_id_ || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
      continue;
    }
    const std::string resource = stem.substr(0, dash);
    const bool ours = std::any_of(config_.resources.begin(), config_.resources.end(),
                                  [&](const auto& rc) { return rc.resource_name == resource; });
    if (!ours || server::SocketHasListener(entry.path())) continue;
    if (std::filesystem::remove(entry.path(), ec)) {
      log::Info(Cat("removed stale socket ", entry.path().string(),
                    " of a dead instance (nothing accepts on it)"));
    }
  }
}

void Manager::OnWatcherGetInfo() {
  if (auto_deciding_) {
    DecideAutoMode(cli::RegistrationMode::kWatcher, "the kubelet's plugin watcher called GetInfo");
  }
}

void Manager::DecideAutoMode(cli::RegistrationMode mode, std::string_view why) {
  if (!auto_deciding_) return;
  auto_deciding_ = false;
  auto_timer_.reset();
  log::Info(
      Cat("auto: ", why, "; using ",
          mode == cli::RegistrationMode::kWatcher ? "watcher mode" : "kubelet.sock registration"));
  if (mode == mode_) return;
  mode_ = mode;
  WatchSocketDirs();
  CleanStaleSockets(SocketDir());
  for (auto& [name, res] : resources_) {
    res->own_channel.reset();  // the socket moves to the other directory
    Serve(*res);               // and registers
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

pool::SnapshotPtr Manager::BuildSnapshot(const Resource& res,
                                         const sysfs::NodeInventory& inventory) {
  return pool::PoolSnapshot::Build(res.config, inventory,
                                   options_.use_cdi ? &res.cdi_naming : nullptr, res.snapshot);
}

void Manager::DropServer(Resource& res) {
  if (res.server) res.allocations_before += res.server->allocations();
  res.server.reset();
}

void Manager::ReportProblem(log::Level level, const std::string& message) {
  log::Write(level, message);
  ++errors_;
  last_error_ = message;
  last_error_time_ =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

metrics::View Manager::BuildView() const {
  metrics::View v;
  v.version = options_.version;
  v.registration_mode =
      auto_deciding_ ? "auto (deciding)" : std::string(cli::RegistrationModeName(mode_));
  for (const auto& [name, res] : resources_) {
    metrics::ResourceView r;
    const auto& adv = res->snapshot->advertised();
    r.resource = res->config.FullName();
    r.hcas = static_cast<int64_t>(res->snapshot->hcas().size());
    r.slots = adv.slots;
    r.healthy_slots = adv.healthy ? adv.slots : 0;
    r.registered = res->registered;
    r.open_streams = res->server ? static_cast<int64_t>(res->server->open_streams()) : 0;
    r.allocations = res->allocations_before + (res->server ? res->server->allocations() : 0);
    r.registrations = res->registrations;
    v.resources.push_back(std::move(r));
  }
  v.kubelet_restarts = kubelet_restarts_;
  v.reloads = reloads_;
  v.rescans = rescans_;
  v.rescan_seconds_sum = rescan_seconds_sum_;
  v.last_rescan_seconds = last_rescan_seconds_;
  v.errors = errors_;
  v.last_error = last_error_;
  v.last_error_unix_seconds = last_error_time_;
  return v;
}

std::optional<metrics::View> Manager::CollectFromLoop() {
  struct Box {
    std::optional<metrics::View> view;
  };
  auto gate = collect_gate_;
  auto box = std::make_shared<Box>();
  loop_->Post([this, gate, box] {
    metrics::View v = BuildView();
    std::lock_guard lock(gate->mu);
    box->view = std::move(v);
    gate->cv.notify_all();
  });
  std::unique_lock lock(gate->mu);
  gate->cv.wait_for(lock, std::chrono::seconds(1), [&] { return box->view || gate->closed; });
  return box->view;
}

void Manager::SyncCdiSpec(Resource& res) {
  if (!options_.use_cdi) return;
  if (res.cdi_written && *res.cdi_written == res.snapshot->advertised()) return;
  const std::string file = cdi::SpecFileName(res.config);
  if (auto s = cdi::WriteSpecAtomically(options_.cdi_spec_dir, file, cdi::SpecJson(*res.snapshot));
      !s.ok()) {
    // Keep serving; the next rescan tries again. Never end a stream over CDI I/O.
    ReportProblem(log::Level::kError, Cat(res.config.FullName(), ": ", std::string(s.message()),
                                          "; will retry at the next rescan"));
    return;
  }
  res.cdi_written = res.snapshot->advertised();
  log::Info(Cat(res.config.FullName(), ": CDI spec ", options_.cdi_spec_dir, "/", file,
                " written (", res.snapshot->hcas().size(), " device(s), kind ", res.cdi_naming.kind,
                ")"));
}

bool Manager::AnotherInstanceServes(const std::string& resource_name) const {
  std::error_code ec;
  const std::string own = server::SocketFileName(resource_name, instance_id_);
  for (const auto& entry : std::filesystem::directory_iterator(SocketDir(), ec)) {
    const std::string file = entry.path().filename();
    if (file == own || !file.starts_with(resource_name + "-") || !file.ends_with(".sock")) {
      continue;
    }
    if (file.size() == own.size() && server::SocketHasListener(entry.path())) return true;
  }
  return false;
}

void Manager::RemoveCdiSpec(const Resource& res) {
  if (!options_.use_cdi) return;
  if (AnotherInstanceServes(res.config.resource_name)) {
    log::Info(Cat(res.config.FullName(), ": another instance serves it; keeping its CDI spec"));
    return;
  }
  if (auto s = cdi::RemoveSpec(options_.cdi_spec_dir, cdi::SpecFileName(res.config)); !s.ok()) {
    log::Warn(std::string(s.message()));
  }
}

void Manager::StopResource(std::map<std::string, std::unique_ptr<Resource>>::iterator it,
                           bool keep_spec) {
  it->second->registration.reset();
  it->second->retry.reset();
  DropServer(*it->second);  // our socket goes before we look for other instances
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
  Resource& ref = *res;
  resources_[rc.resource_name] = std::move(res);
  Serve(ref);
}

void Manager::Serve(Resource& res) {
  res.registration.reset();
  DropServer(res);
  res.registered = false;
  if (!PathExists(SocketDir()) && (root_dir_watch_ >= 0 || ancestor_watch_ >= 0)) {
    // No polling: the watch on the kubelet root calls Serve again when it appears.
    log::Warn(Cat(res.config.FullName(), ": ", SocketDir(),
                  " does not exist yet; will serve "
                  "when the kubelet creates it (is --kubelet-root-dir right?)"));
    return;
  }
  const uint64_t generation = ++res.generation;
  const std::string name = res.config.resource_name;

  server::ResourceServerOptions opts;
  opts.socket_path = Cat(SocketDir(), "/", server::SocketFileName(name, instance_id_));
  opts.serve_watcher_registration = WatcherMode();
  opts.on_stream_end = [this, name, generation](uint64_t stream, bool newest) {
    loop_->Post([=, this] { OnStreamEnded(name, generation, stream, newest); });
  };
  opts.watcher.on_get_info = [this] { loop_->Post([this] { OnWatcherGetInfo(); }); };
  opts.watcher.on_status = [this, name, generation](bool ok, std::string error) {
    loop_->Post([=, this] { OnWatcherStatus(name, generation, ok, error); });
  };
  auto started = server::ResourceServer::Start(std::move(opts), res.snapshot);
  if (!started.ok()) {
    RetryLater(res, std::string(started.status().message()));
    return;
  }
  res.server = std::move(*started);
  log::Info(Cat(res.config.FullName(), ": serving on ", res.server->socket_path()));
  if (!WatcherMode()) Register(res);
}

void Manager::Register(Resource& res) {
  if (!res.server) return;
  res.registration.reset();
  res.registered = false;
  if (!PathExists(KubeletSocket())) {
    // No polling: the directory watch calls us again when kubelet.sock appears.
    log::Warn(Cat(res.config.FullName(), ": ", KubeletSocket(),
                  " does not exist yet; will register when the kubelet creates it"));
    return;
  }
  const uint64_t attempt = ++res.attempt;
  const std::string name = res.config.resource_name;
  server::RegistrationRequest req;
  req.own_socket = res.server->socket_path();
  req.kubelet_socket = KubeletSocket();
  if (!kubelet_channel_) kubelet_channel_ = server::UnixChannel(KubeletSocket());
  if (!res.own_channel) res.own_channel = server::UnixChannel(req.own_socket);
  req.own_channel = res.own_channel;
  req.kubelet_channel = kubelet_channel_;
  req.register_timeout = kRegisterTimeout;
  req.resource_name = res.config.FullName();
  res.registration = std::make_unique<server::KubeletRegistration>(
      std::move(req), [this, name, attempt](absl::Status status) {
        loop_->Post([=, this] { OnRegisterDone(name, attempt, status); });
      });
}

void Manager::OnRegisterDone(const std::string& name, uint64_t attempt,
                             const absl::Status& status) {
  auto it = resources_.find(name);
  if (it == resources_.end() || it->second->attempt != attempt) return;
  Resource& res = *it->second;
  res.registration.reset();
  if (!status.ok()) {
    RetryLater(res, Cat(std::string(status.message()),
                        " (check that the kubelet runs and --kubelet-root-dir is its root)"));
    return;
  }
  res.registered = true;
  ++res.registrations;
  res.backoff = kInitialBackoff;
  log::Info(Cat(res.config.FullName(), ": registered with the kubelet (",
                res.snapshot->advertised().slots, " slot(s))"));
}

void Manager::OnWatcherStatus(const std::string& name, uint64_t generation, bool ok,
                              const std::string& error) {
  auto it = resources_.find(name);
  if (it == resources_.end() || it->second->generation != generation) return;
  Resource& res = *it->second;
  if (ok) {
    res.registered = true;
    ++res.registrations;
    res.backoff = kInitialBackoff;
    log::Info(Cat(res.config.FullName(), ": registered by the kubelet's plugin watcher"));
    return;
  }
  // The kubelet does not retry until the socket is re-created: re-create it, with back-off.
  DropServer(res);
  RetryLater(res, Cat("the kubelet rejected the registration: ", error));
}

void Manager::OnStreamEnded(const std::string& name, uint64_t generation, uint64_t stream,
                            bool newest) {
  auto it = resources_.find(name);
  if (stopping_ || it == resources_.end() || it->second->generation != generation) return;
  Resource& res = *it->second;
  if (!newest) {
    log::Debug(Cat(res.config.FullName(), ": older ListAndWatch stream ", stream, " ended"));
    return;
  }
  log::Warn(Cat(res.config.FullName(),
                ": the kubelet's ListAndWatch stream ended; "
                "registering again"));
  if (WatcherMode()) {
    Serve(res);
  } else {
    Register(res);
  }
}

void Manager::RetryLater(Resource& res, const std::string& why) {
  ReportProblem(log::Level::kWarn, Cat(res.config.FullName(), ": ", why, "; retrying in ",
                                       res.backoff.count(), " ms"));
  if (!res.retry) {
    const std::string name = res.config.resource_name;
    res.retry = std::make_unique<Timer>(*loop_, [this, name] {
      auto it = resources_.find(name);
      if (it == resources_.end()) return;
      Resource& r = *it->second;
      if (!r.server) {
        Serve(r);
      } else if (!WatcherMode()) {
        Register(r);
      }
    });
  }
  res.retry->ArmOnce(res.backoff);
  res.backoff = std::min(res.backoff * 2, kMaxBackoff);
}

void Manager::Rescan(std::string_view reason) {
  const auto started = std::chrono::steady_clock::now();
  const sysfs::NodeInventory inventory = scanner_.Scan();
  for (const auto& p : inventory.problems) {
    if (known_problems_.insert(p).second) log::Warn(p);
  }
  for (auto& [name, res] : resources_) {
    res->snapshot = BuildSnapshot(*res, inventory);
    SyncCdiSpec(*res);  // before publishing, so Allocate never names a device the spec lacks
    if (res->server && res->server->Publish(res->snapshot)) {
      log::Info(Cat("pool changed (", reason, "): ", Describe(*res->snapshot)));
    }
  }
  TrackVerbsDevices();
  last_rescan_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  rescan_seconds_sum_ += last_rescan_seconds_;
  ++rescans_;
}

void Manager::Reload(std::string_view reason) {
  auto loaded = config::LoadConfigFile(options_.config_file);
  if (!loaded.ok()) {
    log::Error(Cat("reload (", reason, ") rejected; the running config keeps serving:"));
    ReportProblem(log::Level::kError, std::string(loaded.status().message()));
    return;
  }
  for (const auto& w : loaded->warnings) log::Warn(w);
  if (loaded->config == config_) {
    log::Info(Cat("reload (", reason, "): config unchanged; rescanning"));
    Rescan(reason);
    return;
  }
  log::Info(Cat("reload (", reason, "): applying the new config"));
  const sysfs::NodeInventory inventory = scanner_.Scan();
  std::set<std::string> wanted;
  for (const auto& rc : loaded->config.resources) {
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
  ++reloads_;
  ApplyPeriodicInterval();
  Rescan(reason);
}

void Manager::OnSignal() {
  signalfd_siginfo info{};
  while (::read(signal_fd_.Get(), &info, sizeof(info)) == sizeof(info)) {
    if (info.ssi_signo == SIGHUP) {
      log::Info("received SIGHUP: reloading the config and rescanning");
      Reload("SIGHUP");
      continue;
    }
    log::Info(Cat("received ", strsignal(static_cast<int>(info.ssi_signo)), ", shutting down"));
    stopping_ = true;
    loop_->Quit();
    return;
  }
}

void Manager::OnDevicePluginDirEvent() {
  alignas(inotify_event) char buf[8192];
  bool kubelet_started = false;
  bool config_touched = false;
  bool dirs_appeared = false;
  std::vector<std::string> lost;
  ssize_t n;
  while ((n = ::read(inotify_fd_.Get(), buf, sizeof(buf))) > 0) {
    for (char* p = buf; p < buf + n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      const std::string name = ev->len > 0 ? ev->name : "";
      if (ev->wd == config_dir_watch_ &&
          (name == "..data" || name == BaseOf(options_.config_file))) {
        config_touched = true;
      }
      if ((ev->wd == root_dir_watch_ && (name == "device-plugins" || name == "plugins_registry")) ||
          ev->wd == ancestor_watch_) {
        dirs_appeared = true;
      }
      if (ev->mask & IN_IGNORED) {  // the directory itself went away; re-watch when it returns
        if (ev->wd == plugin_dir_watch_) plugin_dir_watch_ = -1;
        if (ev->wd == registry_dir_watch_) registry_dir_watch_ = -1;
        if (ev->wd == root_dir_watch_) root_dir_watch_ = -1;
        if (ev->wd == ancestor_watch_) ancestor_watch_ = -1;
        continue;
      }
      if (ev->wd != plugin_dir_watch_ && ev->wd != registry_dir_watch_) continue;
      if (ev->wd == plugin_dir_watch_ && name == kKubeletSocketName &&
          (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
        kubelet_started = true;
      }
      if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) lost.push_back(name);
    }
  }
  if (config_touched) reload_debounce_->ArmOnce(kReloadDebounce);
  if (stopping_) return;
  if (dirs_appeared) {
    if (ancestor_watch_ >= 0) {  // one level closer: re-aim the watch
      ::inotify_rm_watch(inotify_fd_.Get(), ancestor_watch_);
      ancestor_watch_ = -1;
    }
    WatchSocketDirs();
    for (auto& [rname, res] : resources_) {
      if (!res->server && PathExists(SocketDir())) Serve(*res);
    }
  }
  for (const auto& file : lost) {
    for (auto& [rname, res] : resources_) {
      if (!res->server || BaseOf(res->server->socket_path()) != file) continue;
      // Our own Serve() replaces the file too; only a socket that is still gone was lost.
      if (PathExists(res->server->socket_path())) continue;
      log::Warn(Cat(res->config.FullName(), ": socket ", res->server->socket_path(),
                    " was removed (kubelet restart?); serving it again"));
      Serve(*res);
    }
  }
  if (kubelet_started && !WatcherMode()) {
    ++kubelet_restarts_;
    log::Info(Cat(KubeletSocket(), " created (kubelet (re)started): registering every resource"));
    for (auto& [rname, res] : resources_) {
      if (!res->server) {
        Serve(*res);
      } else {
        Register(*res);
      }
    }
  }
}

}  // namespace rdmadp::manager
