// The plugin's state as Prometheus text exposition format (version 0.0.4). Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rdmadp::metrics {

struct ResourceView {
  std::string resource;  // rdma/hca_shared_devices_a
  int64_t hcas = 0;
  int64_t slots = 0;
  int64_t healthy_slots = 0;
  bool registered = false;
  int64_t open_streams = 0;
  uint64_t allocations = 0;
  uint64_t allocate_rejections = 0;  // Allocate answered INVALID_ARGUMENT
  uint64_t registrations = 0;
  uint64_t registration_failures = 0;  // Register failed or rejected, Notify(false)
  uint64_t socket_recreations = 0;     // our socket served again (watcher mode, a deletion)
  uint64_t serve_retries = 0;          // back-off waits after a socket could not be served
  uint64_t register_retries = 0;       // back-off waits after a failed Register
  std::string problem;                 // why it must not be allocated from ("" if fine)
  // The RoCE variables the entry asks for that its pods do not get, one line each
  // (pool/pod_env.h RoceEnv): a ready note, not a readiness problem.
  std::vector<std::string> env_not_set;
  // Ready notes of the resource, one line each: perHca's shares cut to the kubelet's message
  // limit (pool/snapshot.h shares_cut), IDs the kubelet holds of the other deviceModel.
  std::vector<std::string> notes;
};

// Process figures in the standard `process_*` names (read from /proc by ReadProcess()).
struct ProcessView {
  double resident_memory_bytes = 0;
  double cpu_seconds = 0;
  double open_fds = 0;
  double start_time_seconds = 0;  // Unix time
  // glibc malloc, summed over every arena (mallinfo2): what live objects hold, and what the
  // allocator keeps free without returning it. RSS growing with heap_in_use flat is the
  // allocator's fragmentation, not a leak.
  double heap_in_use_bytes = 0;
  double heap_free_bytes = 0;
};
// Reads /proc/self; `start_time_seconds` is passed in (taken once at start).
ProcessView ReadProcess(double start_time_seconds);

// Process-wide counters; the manager keeps one and copies it into each View.
struct Counters {
  uint64_t kubelet_restarts = 0;
  uint64_t reloads = 0;
  uint64_t rescans = 0;
  double rescan_seconds_sum = 0;
  double last_rescan_seconds = 0;
  uint64_t errors = 0;
  // Errors by class (config, registration, cdi, link, metrics): a bounded label set; the
  // text of each is in the log.
  std::map<std::string, uint64_t> errors_by_class;
  std::string last_error_class;  // "" when none
  double last_error_unix_seconds = 0;
  std::map<std::string, uint64_t> rescans_by_trigger;  // periodic, link, uevent, verbs, ...
  // PCI function directories read by scans: a full scan reads every one, an event that names
  // its function only that one.
  uint64_t functions_read = 0;
};

// A config entry left out because it is invalid (on its own, or past a whole-file bound).
struct SkippedView {
  size_t index = 0;
  std::string resource_name;
  bool running_version_kept = false;  // a reload: the running version of it serves on
};

// Which config is in force, and whether the last load or reload applied all of its file.
struct ConfigStatus {
  // false after a reload rejected as a whole, or a load or reload that skipped an entry.
  bool last_load_complete = true;
  uint64_t hash = 0;                      // config::Fingerprint of the config in force
  double last_complete_unix_seconds = 0;  // the last load that applied the whole file
  std::string rejected;                   // a reload rejected as a whole, pending; "" if none
};

// An entry with `memlock` (memlock.md): applied when its containers get the hook; else why.
struct MemlockView {
  std::string resource;     // rdma/hca_shared_devices_a
  uint64_t bytes = 0;       // UINT64_MAX: unlimited
  std::string not_applied;  // "" when the hook applies it
};

// The DRA front end, when some entry uses it.
struct DraView {
  std::string driver;
  bool registered = false;  // the kubelet's plugin watcher accepted the driver
  uint64_t registrations = 0;
  std::string api_problem;      // why the API server is not reachable ("" when it is)
  std::string cdi_problem;      // a CDI spec that could not be written ("" when none)
  bool slices_synced = false;   // listed this node's slices at least once
  bool slices_in_sync = false;  // nothing left to write for the current pools
  std::map<std::pair<std::string, long>, uint64_t> slice_writes;  // (verb, HTTP code; 0 = none)
  uint64_t write_budget_waits = 0;
  uint64_t api_failures = 0;  // lists, watches and writes that failed
  std::vector<std::pair<std::string, std::string>> dropped_fields;  // (field, gate or "")
  struct ModelFallback {
    std::string resource, configured, published;  // "rdma/x", "perHca", "slots"
  };
  std::vector<ModelFallback> model_fallbacks;  // pools not in their configured model
  uint64_t prepares = 0;                       // claims asked for in NodePrepareResources
  uint64_t prepare_failures = 0;               // claims answered with an error
  double prepare_seconds_sum = 0;              // over NodePrepareResources calls
  uint64_t prepare_calls = 0;
  uint64_t unprepares = 0;
  // ResourceClaim status.devices applies by HTTP code (0: no answer), and the latest
  // refusal ("" once one works).
  std::map<long, uint64_t> claim_status_applies;
  std::string claim_status_problem;
  uint64_t claim_status_pending = 0;   // claims whose status waits to be checked or written
  uint64_t claim_status_given_up = 0;  // claims the server refused, until prepared again
};

// Per-container RDMA use, while the daemon samples it (--rdma-usage-interval; the observer in
// pkg/observe). Series are bounded: a container's objects are on its own HCAs, a foreign
// user's on ours, and at most kMaxRdmaUseContainers containers of each kind are kept.
struct ContainerRdmaView {
  std::string pod_namespace;  // "" for a foreign user the kubelet's links do not name
  std::string pod;
  std::string container;               // or "id:<first 12 digits>" when unnamed
  std::vector<std::string> resources;  // ours it holds; empty for a foreign user
  bool unused = false;                 // the verdict is "unused"
  struct Objects {
    std::string device;  // mlx5_0
    std::string type;    // hca_handle, hca_object (the cgroup); qp, ctx (the kernel's dumps)
    int64_t count = 0;
  };
  std::vector<Objects> objects;
};
inline constexpr size_t kMaxRdmaUseContainers = 1000;
// A port's counters as sysfs shows them (sysfs/port_counters.h), read with each sample.
struct PortCountersView {
  std::string hca;
  int port = 0;
  std::map<std::string, uint64_t> counters;     // counters/
  std::map<std::string, uint64_t> hw_counters;  // hw_counters/
};
struct RdmaUseView {
  uint64_t samples = 0;
  uint64_t failed_samples = 0;  // the kubelet's List failed: nothing said who holds what
  double last_sample_seconds = 0;
  double last_sample_unix_seconds = 0;
  std::map<std::string, uint64_t> verdicts;  // containers by verdict ("used", "unused", ...)
  std::vector<ContainerRdmaView> containers;
  std::vector<ContainerRdmaView> foreign;
  std::vector<PortCountersView> ports;  // at most kMaxPortSeries
  // RDMAUnused Events by result ("created", "exists", "failed", "dropped"); empty when the
  // observer writes none.
  std::map<std::string, uint64_t> events;
};

// One port of an HCA some pool selects. `state` is the kernel's number (sysfs .../state:
// 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER; 0 unknown).
struct PortView {
  std::string hca;  // mlx5_0
  int port = 0;
  int state = 0;
};
// Series of rdma_shared_dp_port_state at most: HCAs times ports stays bounded on any node.
inline constexpr size_t kMaxPortSeries = 512;

struct View {
  std::optional<DraView> dra;
  std::optional<RdmaUseView> rdma_use;
  std::vector<PortView> ports;  // sorted by hca, port
  std::string version;
  std::string registration_mode;
  std::vector<ResourceView> resources;
  std::vector<SkippedView> skipped_entries;
  ConfigStatus config;
  std::vector<MemlockView> memlock;  // every entry with `memlock`, both front ends
  Counters counters;
  ProcessView process;
};

std::string FormatPrometheus(const View& view);

// Why the plugin is not ready ("" when ready): no config entry skipped without a running
// version serving it, every `memlock` applied, and every resource without a problem,
// registered with the kubelet, holding an open ListAndWatch stream.
std::string NotReadyReason(const View& view);
// What the plugin wants an operator to know beside its readiness, one line each ("" when
// nothing): a reload rejected as a whole and entries skipped at a reload whose running
// version serves (what served before serves still, so readiness does not change:
// docs/observability.md), DRA pools published in another model than configured.
std::string ReadyNotes(const View& view);

}  // namespace rdmadp::metrics
