#include "pkg/manager/manager.h"

#include <sys/inotify.h>
#include <sys/signalfd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <tuple>
#include <utility>

#include "pkg/log/log.h"
#include "pkg/netlink/link_up.h"
#include "pkg/pool/pool_model.h"
#include "pkg/pool/selector.h"
#include "pkg/rpc/socket_path.h"
#include "pkg/text/cat.h"
#include "pkg/text/json.h"

namespace rdmadp::manager {
namespace {

using std::chrono::milliseconds;

// Freed heap goes back to the system this long after the first Allocate, rescan or reload
// since the last trim: at most one malloc_trim per 5 s under load, none when idle.
constexpr milliseconds kHeapTrimDelay{5000};

std::string DirOf(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

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

// Unix time, for the metrics' timestamps.
double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

Manager::Manager(std::unique_ptr<loop::FdLoop> loop, ManagerOptions options,
                 const FrontEndFactory& make_front_ends, config::Config config,
                 std::vector<config::SkippedEntry> skipped)
    : options_(std::move(options)),
      config_(std::move(config)),
      skipped_(std::move(skipped)),
      scanner_(options_.sysfs_root, options_.dev_root),
      instance_id_(rpc::NewInstanceId()),
      dirs_{options_.kubelet_root_dir},
      loop_(std::move(loop)),
      heap_trimmer_(std::make_unique<loop::HeapTrimmer>(*loop_, kHeapTrimDelay)) {
  metrics_http_.address = options_.metrics_address;
  metrics_http_.what = "metrics";
  health_http_.address = options_.health_address;
  health_http_.what = "health";
  // Every label value from the start, at 0: a series that appears late breaks rate().
  for (const char* trigger :
       {"periodic", "link", "uevent", "verbs", "sighup", "config_file", "other"}) {
    counters_.rescans_by_trigger[trigger] = 0;
  }
  for (const char* cls : {"config", "registration", "cdi", "link", "metrics", "dra", "usage"}) {
    counters_.errors_by_class[cls] = 0;
  }
  frontend::Host& host = *this;
  front_ends_ = make_front_ends(host);
}

std::vector<std::string> Manager::ConfigProblems(const config::Config& config,
                                                 const std::vector<size_t>& indices) const {
  std::vector<std::string> problems;
  for (const auto& front_end : front_ends_) {
    for (auto& p : front_end->Problems(config, indices)) problems.push_back(std::move(p));
  }
  return problems;
}

Manager::~Manager() = default;  // front_ends_, declared last, go first

int Manager::Run() {
  if (const int status = Start(); status != 0) return status;
  loop_->Run();
  Shutdown();
  return 0;
}

int Manager::Start() {
  loop::AssertOnLoop(*loop_);
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGQUIT, SIGHUP}) sigaddset(&signals, s);
  signal_fd_.Reset(::signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signal_fd_.Valid()) {
    log::Error(Cat("cannot watch signals (signalfd): ", std::strerror(errno)));
    return 1;
  }
  if (auto added = loop_->Add(signal_fd_.Get(), [this] { OnSignal(); }); !added.ok()) {
    log::Error(Cat("cannot watch signals: ", std::string(added.message())));
    return 1;
  }

  inotify_fd_.Reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
  if (inotify_fd_.Valid()) {
    if (auto added = loop_->Add(inotify_fd_.Get(), [this] { OnInotifyEvents(); }); !added.ok()) {
      log::Warn(std::string(added.message()));
      inotify_fd_.Reset(-1);  // no watches nobody reads: the fallbacks below take over
    }
  }
  if (inotify_fd_.Valid()) {
    if (options_.watch_config) {
      config_dir_watch_ =
          ::inotify_add_watch(inotify_fd_.Get(), DirOf(options_.config_file).c_str(),
                              IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
    } else {
      log::Info("config file watch off (--watch-config=false): SIGHUP reloads");
    }
  } else {
    // Out of inotify instances (fs.inotify.max_user_instances): keep serving.
    log::Warn(Cat("cannot watch files (inotify: ", std::strerror(errno),
                  "): kubelet restarts are seen by a look at most 30 s apart, a missing "
                  "socket directory by a damped retry; config changes need SIGHUP"));
  }
  reload_debounce_ = loop_->NewAlarm([this] { Reload("config file changed"); });
  event_debounce_ = loop_->NewAlarm([this] {
    const PendingRescan pending = *std::exchange(pending_rescan_, std::nullopt);
    Rescan(pending.reason, pending.full ? nullptr : &pending.addresses);
  });
  OpenKernelEventSources();

  start_time_seconds_ = WallSeconds();
  config_status_.hash = config::Fingerprint(config_);
  NoteLoaded();
  StartHttp();
  InitialStart();
  return 0;
}

void Manager::Shutdown() {
  loop::AssertOnLoop(*loop_);
  {
    std::lock_guard lock(collect_gate_->mu);
    collect_gate_->closed = true;
    collect_gate_->cv.notify_all();
  }
  metrics_http_.http.reset();
  health_http_.http.reset();
  http_retry_.reset();

  // Shutdown: every front end stops its servers, which end streams and remove our own
  // sockets and nothing else.
  stopping_ = true;
  for (auto& front_end : front_ends_) front_end->Stop();
  verbs_.reset();
  periodic_timer_.reset();
  skipped_reminder_.reset();
  reload_debounce_.reset();
  event_debounce_.reset();
  log::Info("all servers stopped, own sockets removed; exiting");
}

void Manager::StartHttp() {
  bool retry = false;
  for (Listener* l : {&metrics_http_, &health_http_}) {
    if (l->address.empty() || l->http) continue;
    auto http = metrics::HttpEndpoint::Start(
        l->address, [this] { return CollectFromLoop(); }, Cat("--", l->what, "-address"));
    if (!http.ok()) {
      // Capacity matters more than metrics: keep serving the kubelet, try the port again.
      const auto wait = l->backoff.Next();
      ReportProblem(log::Level::kError, "metrics",
                    Cat(std::string(http.status().message()),
                        "; the device plugin keeps serving; retrying in ", wait.count(), " ms"));
      if (!http_retry_) {
        http_retry_ = loop_->NewAlarm([this] { StartHttp(); });
      }
      if (!retry) http_retry_->ArmOnce(wait);  // one timer retries every failed listener
      retry = true;
      continue;
    }
    l->http = std::move(*http);
    l->backoff.Reset();
    const std::string& h = l->http->host();
    const std::string host = h.find(':') != std::string::npos ? Cat("[", h, "]") : h;
    log::Info(Cat(l->what == "metrics" ? "metrics on http://" : "probes on http://", host, ":",
                  l->http->port(),
                  l->what == "metrics" ? "/metrics, probes on /healthz and /readyz"
                                       : "/healthz and /readyz"));
  }
}

void Manager::InitialStart() {
  WatchKubeletDirs();
  ScanNode();
  for (const auto& p : inventory_.AllProblems()) {
    if (known_problems_.insert(p).second) log::Warn(p);
  }
  size_t capable = 0;
  for (const auto& fn : inventory_.functions) capable += fn.rdma_capable ? 1 : 0;
  log::Info(Cat("discovered ", inventory_.functions.size(), " PCI network function(s), ", capable,
                " RDMA-capable"));
  for (const auto& u : inventory_.unserved) {
    log::Info(Cat("RDMA device ", u.ibdev, " (", u.where, ") is not served: ", u.reason));
  }
  LogInventoryDetail();
  for (auto& front_end : front_ends_) front_end->Apply(config_, inventory_, "start");
  if (options_.link_up) BringLinksUp();
  ApplyPeriodicInterval();
  TrackVerbsDevices();
  heap_trimmer_->Activity();  // the config parse and the first scan left freed memory
}

void Manager::LogInventoryDetail() const {
  if (!log::Enabled(log::Level::kDebug)) return;  // big nodes: no work unless asked
  for (const auto& fn : inventory_.functions) {
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
    periodic_timer_ = loop_->NewAlarm([this] { Rescan("periodic"); });
  }
  periodic_timer_->ArmPeriodic(milliseconds(secs * 1000));
  log::Info(Cat("periodic rescan every ", secs, " s"));
}

void Manager::ScanNode(const std::set<std::string>* only) {
  sysfs::ScanStats stats;
  inventory_ =
      only != nullptr ? scanner_.Refresh(inventory_, *only, &stats) : scanner_.Scan(&stats);
  counters_.functions_read += stats.functions;
  link_owners_.clear();
  for (const auto& fn : inventory_.functions) {
    for (const auto& netdev : fn.netdevs) link_owners_.emplace(netdev, fn.address);
  }
}

std::vector<const sysfs::PciFunction*> Manager::SelectedFunctions() const {
  std::vector<const sysfs::PciFunction*> out;
  for (const auto& fn : inventory_.functions) {
    for (const auto& rc : config_.resources) {
      if (fn.rdma_capable && pool::Matches(rc.selectors, fn)) {  // as pool::SelectPool
        out.push_back(&fn);
        break;
      }
    }
  }
  return out;
}

void Manager::BringLinksUp() {
  std::set<std::string> links;
  for (const sysfs::PciFunction* fn : SelectedFunctions()) {
    if (!fn->if_name.empty()) links.insert(fn->if_name);
  }
  for (const auto& link : links) {
    if (auto status = netlink::SetLinkUp(link); !status.ok()) {
      ReportProblem(log::Level::kWarn, "link",
                    Cat(std::string(status.message()), " (pass --no-link-up to skip this step)"),
                    {.resource = {}, .hca = link, .event = "link"});
    }
  }
}

void Manager::Rescan(std::string_view reason, const std::set<std::string>* only) {
  loop::AssertOnLoop(*loop_);
  const auto started = std::chrono::steady_clock::now();
  const uint64_t read_before = counters_.functions_read;
  ScanNode(only);
  for (const auto& p : inventory_.AllProblems()) {
    if (known_problems_.insert(p).second) log::Warn(p);
  }
  for (auto& front_end : front_ends_) front_end->Apply(config_, inventory_, reason);
  TrackVerbsDevices();
  counters_.last_rescan_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  counters_.rescan_seconds_sum += counters_.last_rescan_seconds;
  ++counters_.rescans;
  ++counters_.rescans_by_trigger[RescanTrigger(reason)];
  heap_trimmer_->Activity();  // the old inventory and snapshots are freed memory now
  log::Debug(
      Cat("rescan (", reason, ") read ", counters_.functions_read - read_before,
          " PCI function(s) in ", static_cast<int>(counters_.last_rescan_seconds * 1e6), " us"),
      {.resource = {}, .hca = {}, .event = "rescan"});
}

void Manager::Reload(std::string_view reason) {
  loop::AssertOnLoop(*loop_);
  // The checks a start makes: the entries' own, the front ends', then the whole-file bounds
  // over what is left. An entry with a problem is skipped, as at start.
  auto loaded = config::LoadConfigFile(
      options_.config_file,
      [this](const config::Config& c, const std::vector<size_t>& indices) {
        return ConfigProblems(c, indices);
      },
      &config_);
  if (!loaded.ok()) {
    const std::string message(loaded.status().message());
    log::Error(Cat("reload (", reason, ") rejected; the running config keeps serving:"));
    ReportProblem(log::Level::kError, "config", message);
    config_status_.last_load_complete = false;
    config_status_.rejected = Cat(options_.config_file, " was rejected at the last reload (",
                                  QuotedExcerpt(message.substr(0, message.find('\n')), 200),
                                  "); the previous config keeps serving");
    return;
  }
  for (const auto& w : loaded->warnings) log::Warn(w);
  for (const auto& entry : loaded->skipped) {  // one error each, as a start counts none
    ReportProblem(log::Level::kError, "config", Join(entry.problems, "\n"));
    log::Error(Cat(entry.Label(), " skipped: it is invalid; ",
                   entry.running_version_kept
                       ? "its running version keeps serving (a line on /readyz until the "
                         "ConfigMap is fixed)"
                       : Cat("the other ", loaded->config.resources.size(),
                             " resource(s) serve (/readyz stays 503 until the ConfigMap is "
                             "fixed)")));
  }
  skipped_ = std::move(loaded->skipped);
  NoteLoaded();
  if (loaded->config == config_) {
    log::Info(Cat("reload (", reason, "): config unchanged; rescanning"));
    Rescan(reason);
    return;
  }
  log::Info(Cat("reload (", reason, "): applying the new config"),
            {.resource = {}, .hca = {}, .event = "reload"});
  config_ = std::move(loaded->config);
  config_status_.hash = config::Fingerprint(config_);
  ++counters_.reloads;
  ApplyPeriodicInterval();
  Rescan(reason);  // every front end restarts what changed and stops what went
  LogInventoryDetail();
}

void Manager::NoteLoaded() {
  config_status_.last_load_complete = skipped_.empty();
  config_status_.rejected.clear();
  if (skipped_.empty()) {
    config_status_.last_complete_unix_seconds = WallSeconds();
    skipped_reminder_.reset();
    return;
  }
  if (!skipped_reminder_) {
    skipped_reminder_ = loop_->NewAlarm([this] { RemindSkipped(); });
    skipped_reminder_->ArmPeriodic(options_.config_error_interval);
  }
}

void Manager::RemindSkipped() const {
  for (const auto& entry : skipped_) {
    log::Error(Cat(entry.Label(), " is still skipped: ",
                   entry.problems.empty() ? std::string("invalid") : entry.problems.front(),
                   entry.running_version_kept ? " (its running version keeps serving)" : "",
                   "; fix it in the ConfigMap"),
               {.resource = {}, .hca = {}, .event = "config"});
  }
}

void Manager::ReportProblem(log::Level level, std::string_view error_class,
                            const std::string& message, const log::Fields& fields) {
  loop::AssertOnLoop(*loop_);
  log::Write(level, message, fields);
  ++counters_.errors;
  ++counters_.errors_by_class[std::string(error_class)];
  counters_.last_error_class = error_class;
  counters_.last_error_unix_seconds = WallSeconds();
}

void Manager::ReportOnce(log::Level level, std::string_view error_class, const std::string& message,
                         const log::Fields& fields) {
  if (known_problems_.insert(message).second) ReportProblem(level, error_class, message, fields);
}

metrics::View Manager::BuildView() const {
  metrics::View v;
  v.version = options_.version;
  for (const auto& entry : skipped_) {
    v.skipped_entries.push_back({entry.index, entry.resource_name, entry.running_version_kept});
  }
  v.config = config_status_;
  v.counters = counters_;
  static_assert(static_cast<int>(sysfs::PortState::kActive) == 4, "the kernel's numbering");
  for (const sysfs::PciFunction* fn : SelectedFunctions()) {
    for (const auto& dev : fn->rdma_devices) {
      for (const auto& port : dev.ports) {
        v.ports.push_back({dev.name, port.number, static_cast<int>(port.state)});
      }
    }
  }
  std::sort(v.ports.begin(), v.ports.end(), [](const auto& a, const auto& b) {
    return std::tie(a.hca, a.port) < std::tie(b.hca, b.port);
  });
  for (const auto& front_end : front_ends_) front_end->Collect(v);
  v.process = metrics::ReadProcess(start_time_seconds_);
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

}  // namespace rdmadp::manager
