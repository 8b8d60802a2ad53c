// The wiring. One event loop runs everything: signals, the config file and the kubelet's
// directories (inotify), kernel link events and uevents, verbs events, node scans with
// debounced rescans, reloads, periodic rescans, the metrics endpoint and shutdown. What is
// served lives in the front ends (pkg/deviceplugin, pkg/dra) behind frontend::FrontEnd: the
// manager hands each the config and every scan, fans out what it sees in the kubelet's
// directories, and gathers their metrics. It knows nothing of gRPC or of the kubelet's APIs.
//
// Threads: everything here runs on the loop thread. The metrics endpoint's HTTP threads ask
// the loop for a view (CollectFromLoop); front ends' threads Post() to the loop.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/frontend/front_end.h"
#include "pkg/kube/backoff.h"
#include "pkg/loop/fd_loop.h"
#include "pkg/loop/heap_trimmer.h"
#include "pkg/metrics/http_endpoint.h"
#include "pkg/netlink/kernel_events.h"
#include "pkg/rdma/verbs_events.h"
#include "pkg/sysfs/scanner.h"

namespace rdmadp::manager {

// The manager's own settings; each front end's are its own (main builds the front ends).
struct ManagerOptions {
  std::string config_file;
  std::string kubelet_root_dir;
  std::string sysfs_root;
  std::string dev_root;
  bool link_up = true;
  bool watch_config = true;     // false: only SIGHUP reloads
  std::string metrics_address;  // "" = off
  std::string health_address;   // "" = off: probes on the metrics endpoint only
  std::string version;
  // While a config entry is skipped, its error line again this often (RemindSkipped).
  std::chrono::seconds config_error_interval{60};
};

// Builds the front ends on the manager's Host (called once, by the Manager's constructor).
using FrontEndFactory =
    std::function<std::vector<std::unique_ptr<frontend::FrontEnd>>(frontend::Host& host)>;

class Manager final : private frontend::Host {
 public:
  // `loop`: the event loop everything runs on, made before the front ends so that their
  // constructors may use the Host's Loop() (and AssertOnLoop) like any other entry point.
  // `config`: the start config as main admitted it (before anything touched the host, with
  // the checks each front end's Problems() runs); `skipped`: the entries left out, reported
  // by /readyz and the metrics until a reload applies a fully valid config.
  Manager(std::unique_ptr<loop::FdLoop> loop, ManagerOptions options,
          const FrontEndFactory& make_front_ends, config::Config config,
          std::vector<config::SkippedEntry> skipped = {});
  ~Manager() override;

  // Blocks until SIGTERM, SIGINT or SIGQUIT (which must be blocked in every thread before
  // any thread starts, so that only our signalfd sees them). Returns the exit status.
  // Start(), the loop's Run(), Shutdown().
  int Run();
  // Everything Run() does before the loop runs: the watches, the kernel event sources, the
  // HTTP endpoints, the first scan and every front end's first Apply. 0, or the exit status
  // when the process cannot go on (no signalfd). Tests on a loop they drive
  // (test/support/manual_loop.h) call it, then Shutdown().
  int Start();
  // What Run() does after its loop: the endpoints closed, every front end stopped.
  void Shutdown();
  // The metrics and probe view (loop thread).
  metrics::View BuildView() const;

 private:
  // frontend::Host.
  loop::Scheduler& Loop() override { return *loop_; }
  lifecycle::TokenSource& Tokens() override { return tokens_; }
  const std::string& InstanceId() const override { return instance_id_; }
  const frontend::KubeletDirs& Dirs() const override { return dirs_; }
  void ReportProblem(log::Level level, std::string_view error_class, const std::string& message,
                     const log::Fields& fields) override;
  void ReportOnce(log::Level level, std::string_view error_class, const std::string& message,
                  const log::Fields& fields) override;
  void ReportProblem(log::Level level, std::string_view error_class, const std::string& message) {
    ReportProblem(level, error_class, message, {.resource = {}, .hca = {}, .event = error_class});
  }
  loop::HeapTrimmer& Trimmer() override { return *heap_trimmer_; }
  bool WatchKubeletDirs() override;
  // Says once why `dir` cannot be watched (inotify_add_watch's `error`), unless it is only
  // missing (ENOENT: the root's watch reports its creation).
  void ReportWatchFailure(const std::string& dir, int error);
  void CatchUpKubeletWatch() override {
    if (inotify_fd_.Valid()) OnInotifyEvents();
  }
  bool Stopping() const override { return stopping_; }

  void InitialStart();
  // --log-level=debug: every function found, and per entry why it is (not) in the pool.
  void LogInventoryDetail() const;
  // Re-reads sysfs (all of it, or only the PCI functions in `only`) and hands the result to
  // every front end.
  void Rescan(std::string_view reason, const std::set<std::string>* only = nullptr);
  // Reads the config file again and applies it with the checks a start makes: an invalid
  // entry is skipped and the others apply, and an entry skipped whose name serves keeps its
  // running version (nothing already serving is lost to a bad edit); a file that fails as a
  // whole changes nothing (config_status_ says so until a reload succeeds).
  void Reload(std::string_view reason);
  // After a start or reload applied: the gauges of config_status_ follow skipped_, and the
  // reminder runs while an entry is skipped.
  void NoteLoaded();
  // One error line per skipped entry, every config_error_interval: where nothing reads
  // /readyz or the metrics (network-operator's template has no probe), the log still says
  // it, not only once at start. Not counted as a new error.
  void RemindSkipped() const;
  // Every front end's problems with `config` (FrontEnd::Problems), one line each.
  std::vector<std::string> ConfigProblems(const config::Config& config,
                                          const std::vector<size_t>& indices) const;
  // Scans sysfs (all of it, or only the functions in `only`) into inventory_ and remembers
  // which links matter for link events.
  void ScanNode(const std::set<std::string>* only = nullptr);
  // The PCI functions some entry of the config selects (both front ends).
  std::vector<const sysfs::PciFunction*> SelectedFunctions() const;
  void BringLinksUp();
  void TrackVerbsDevices();
  void ApplyPeriodicInterval();
  // Coalesces bursts of kernel events into one rescan shortly after the first. An event
  // that names the PCI function it concerns (`address`) costs a re-read of that function
  // only; one that does not (nullopt) makes the rescan a full one.
  void RequestRescan(std::string reason, std::optional<std::string> address);
  void OpenKernelEventSources();
  // Adds `fd` to the loop; when the kernel refuses, warns with what is lost (`otherwise`).
  void Watch(std::string_view otherwise, int fd, std::function<void()> on_readable);
  void OnSignal();
  void OnInotifyEvents();
  void FanOut(const frontend::KubeletEvent& event);
  // Starts the metrics and health endpoints; a busy port is retried with back-off, never
  // fatal (each endpoint on its own).
  void StartHttp();
  // HTTP threads: asks the loop for a View; nullopt if it does not answer within 1 s.
  std::optional<metrics::View> CollectFromLoop();

  ManagerOptions options_;
  config::Config config_;
  std::vector<config::SkippedEntry> skipped_;
  metrics::ConfigStatus config_status_;  // which config is in force, and the last load's fate
  sysfs::Scanner scanner_;
  std::string instance_id_;
  frontend::KubeletDirs dirs_;
  lifecycle::TokenSource tokens_;  // one per process: tokens never repeat
  std::unique_ptr<loop::FdLoop> loop_;
  // After start, rescans, reloads and Allocates; outlives the servers that call it.
  std::unique_ptr<loop::HeapTrimmer> heap_trimmer_;
  UniqueFd signal_fd_;
  UniqueFd inotify_fd_;
  int plugin_dir_watch_ = -1;
  int registry_dir_watch_ = -1;
  int root_dir_watch_ = -1;  // the kubelet root, to see the socket directories appear
  int ancestor_watch_ = -1;  // nearest existing ancestor while the kubelet root is missing
  int config_dir_watch_ = -1;
  std::unique_ptr<loop::Alarm> periodic_timer_;
  std::unique_ptr<loop::Alarm> skipped_reminder_;
  std::unique_ptr<loop::Alarm> reload_debounce_;
  std::unique_ptr<loop::Alarm> event_debounce_;
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
  metrics::Counters counters_;
  // Hand-over between HTTP threads and the loop; `closed` releases waiters at shutdown.
  struct CollectGate {
    std::mutex mu;
    std::condition_variable cv;
    bool closed = false;
  };
  std::shared_ptr<CollectGate> collect_gate_ = std::make_shared<CollectGate>();
  struct Listener {
    std::string address;  // "" = off
    std::string what;     // "metrics" or "health", for the log
    std::unique_ptr<metrics::HttpEndpoint> http;
    kube::Backoff backoff{std::chrono::seconds(1), std::chrono::seconds(60)};
  };
  Listener metrics_http_;
  Listener health_http_;
  std::unique_ptr<loop::Alarm> http_retry_;
  double start_time_seconds_ = 0;
  std::set<std::string> known_problems_;
  bool stopping_ = false;
  // The device-plugin front end, then the DRA front end. Last: they go before the loop.
  std::vector<std::unique_ptr<frontend::FrontEnd>> front_ends_;
};

}  // namespace rdmadp::manager
