// The one interface between the manager and a front end (pkg/deviceplugin, pkg/dra). The
// manager owns the loop, the scans, the config and the kubelet-directory watches; a front
// end turns the config's entries for it and the latest scan into what the kubelet is served,
// and reports what it did through the metrics view. The two front ends never include each
// other; what they share is here, in pkg/rpc and in the model rooms (config, pool, lifecycle).
//
// Threads: everything here runs on the manager's event-loop thread. A front end's own
// threads (gRPC queues, Prepare workers, registration attempts) reach it only through
// Host::Loop().Post().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/lifecycle/registration_fsm.h"
#include "pkg/log/log.h"
#include "pkg/loop/heap_trimmer.h"
#include "pkg/loop/scheduler.h"
#include "pkg/metrics/prometheus.h"
#include "pkg/sysfs/inventory.h"

namespace rdmadp::frontend {

// The kubelet's directories under its root (--kubelet-root-dir).
struct KubeletDirs {
  std::string root;
  std::string DevicePlugins() const { return root + "/device-plugins"; }
  std::string PluginsRegistry() const { return root + "/plugins_registry"; }
  std::string Plugins() const { return root + "/plugins"; }
  std::string KubeletSocket() const { return DevicePlugins() + "/kubelet.sock"; }
};

// What the manager saw happen in the kubelet's directories; every front end is told.
struct KubeletEvent {
  enum class Kind {
    // device-plugins, plugins_registry or plugins appeared (or a missing kubelet root came
    // one level closer), or the watch's queue overflowed: a socket that could not be served
    // may be served now, and what happened before a watch existed is found by looking (our
    // socket gone, kubelet.sock there).
    kDirsAppeared,
    // device-plugins/kubelet.sock was created: the kubelet (re)started.
    kKubeletSocketCreated,
    // A file in device-plugins or plugins_registry was deleted or moved away.
    kFileDeleted,
  };
  Kind kind;
  std::string dir;   // kFileDeleted: the directory
  std::string file;  // kFileDeleted: the file's name
};

// What the manager lends a front end.
class Host {
 public:
  virtual ~Host() = default;
  // The loop: post from other threads, alarms, the time every deadline is computed on.
  virtual loop::Scheduler& Loop() = 0;
  // One per process: lifecycle tokens never repeat across front ends.
  virtual lifecycle::TokenSource& Tokens() = 0;
  // 8 hex characters, fixed for the process: in every socket name of this instance.
  virtual const std::string& InstanceId() const = 0;
  virtual const KubeletDirs& Dirs() const = 0;
  // Logs a problem an operator must see and counts it under `error_class` (config,
  // registration, cdi, link, metrics, dra: a bounded label set).
  virtual void ReportProblem(log::Level level, std::string_view error_class,
                             const std::string& message, const log::Fields& fields) = 0;
  // The same, once per distinct message for the life of the process.
  virtual void ReportOnce(log::Level level, std::string_view error_class,
                          const std::string& message, const log::Fields& fields) = 0;
  // Told of work that freed memory worth returning to the system soon; its Activity() may
  // be called from any thread (an Allocate on a gRPC thread).
  virtual loop::HeapTrimmer& Trimmer() = 0;
  // (Re)adds the watches on the kubelet's directories; true when the kubelet root (or, while
  // it is missing, its nearest ancestor) is watched, so that a missing socket directory
  // arrives as kDirsAppeared and needs no retry timer.
  virtual bool WatchKubeletDirs() = 0;
  // Hands every kubelet-directory event the kernel has already queued to the front ends
  // (OnKubeletEvent) before it returns. A front end calls it before acting on what a kubelet
  // said (a Register's answer, a stream opened or ended, GetInfo, Notify): whatever that
  // kubelet did to its directories before saying it (a restart's cleanup of our socket, its
  // new kubelet.sock) is then seen first, in the order it happened, however the loop orders
  // its ready sources. (Seen the other way round, one restart read as two: CI, 2026-12-06.)
  virtual void CatchUpKubeletWatch() = 0;
  // Set once shutdown began: results posted by other threads are dropped.
  virtual bool Stopping() const = 0;
};

class FrontEnd {
 public:
  virtual ~FrontEnd() = default;
  // The whole config and the latest scan: the front end serves its own entries (starting,
  // updating, restarting or stopping what changed) and leaves the others alone. Called at
  // start, after every rescan and after every reload; `reason` is for the log.
  virtual void Apply(const config::Config& config, const sysfs::NodeInventory& inventory,
                     std::string_view reason) = 0;
  virtual void OnKubeletEvent(const KubeletEvent& event) = 0;
  // The problems of `config`'s entries for this front end that it cannot serve with its
  // options under the kubelet root, one line per entry naming the field (`indices`:
  // config::LoadedConfig::indices). The manager asks at every reload (any problem refuses
  // it); at start main runs the same function before the front ends exist (an entry with a
  // problem is skipped), so a reload refuses what a start skips, and more: what only a
  // running front end can know (the device plugin's deviceModel switch while the kubelet
  // holds the entry's IDs; at start it is a note instead). The loop thread.
  virtual std::vector<std::string> Problems(const config::Config& config,
                                            const std::vector<size_t>& indices) const = 0;
  // Adds what it serves to the metrics and probe view.
  virtual void Collect(metrics::View& view) const = 0;
  // Stops serving at shutdown: its sockets are removed; what a restarted instance takes
  // over (ResourceSlices, CDI specs another live instance serves) stays.
  virtual void Stop() = 0;
};

}  // namespace rdmadp::frontend
