// The plugin's configuration: the Go plugin's schema (periodicUpdateInterval, configList[]),
// read from JSON or YAML. Parsing and validation are pure (text in, value or errors out).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rdmadp::config {

// Largest rdmaHcaMax accepted: one ListAndWatch message lists one Device per slot and the
// kubelet rejects messages over 4 MiB. 100,000 slots with a 4-node topology serialise to
// about 3.6 MB (see pool/snapshot.cpp, which also guards the limit at runtime).
inline constexpr int64_t kMaxRdmaHcaMax = 100000;
// All entries together: the plugin's peak RSS at this total is ~94 MiB (lifecycle_bench
// "memory" rows), inside the DaemonSet's 128Mi limit. More needs a higher limit first.
inline constexpr int64_t kMaxTotalRdmaHcaMax = 200000;
// DRA deviceModel "slots" publishes one device per slot: more would be thousands of slice
// objects for the scheduler to walk.
inline constexpr int64_t kMaxDraSlotDevices = 1024;
// One year: keeps interval arithmetic far from overflow.
inline constexpr int64_t kMaxPeriodicUpdateIntervalSeconds = 365LL * 24 * 3600;
inline constexpr int64_t kDefaultPeriodicUpdateIntervalSeconds = 60;
inline constexpr std::string_view kDefaultResourcePrefix = "rdma";
// `"memlock": "unlimited"` (RLIM_INFINITY).
inline constexpr uint64_t kMemlockUnlimited = UINT64_MAX;
// The least `memlock` accepted: the RLIMIT_MEMLOCK container runtimes give by default (the
// kernel's since 5.16). The hook never lowers a limit, so less would change nothing.
inline constexpr uint64_t kMinMemlock = 8ULL << 20;

struct Selectors {
  std::vector<std::string> vendors;     // 4 lowercase hex digits
  std::vector<std::string> device_ids;  // 4 lowercase hex digits
  std::vector<std::string> drivers;
  std::vector<std::string> if_names;
  std::vector<std::string> link_types;  // iproute2 names: ether, infiniband, ...
  // PCI addresses ("0000:3b:00.0", lowercase, domain included; not in the Go plugin): for
  // functions the other selectors cannot tell apart (no netdev, one vendor, one driver).
  std::vector<std::string> pci_addresses;

  bool Empty() const {
    return vendors.empty() && device_ids.empty() && drivers.empty() && if_names.empty() &&
           link_types.empty() && pci_addresses.empty();
  }
  bool operator==(const Selectors&) const = default;
};

// Which front end serves a resource (`frontend`): the kubelet's device-plugin API (the
// default: the Go plugin's drop-in) or DRA (ResourceSlices and the kubelet's DRA plugin API).
enum class Frontend { kDevicePlugin, kDra };
// How a resource is offered (`deviceModel`). DRA (see dra/resource_slices.h): kAuto, the
// default, is perHca where the API server keeps consumable capacity (1.36+ defaults), slots
// where it does not (1.34, 1.35), decided from the server's own answers and re-decided
// when that changes. Device plugin: kSlots (the default, written kAuto in a ResourceConfig
// that does not set it: rdmaHcaMax slots each giving the whole pool, as the Go plugin) or
// kPerHca (every HCA its own rdmaHcaMax devices with its NUMA node; pool/per_hca_ids.h);
// validation refuses the other two.
enum class DeviceModel { kAuto, kPerHca, kPerPool, kSlots };

std::string_view FrontendName(Frontend f);        // "devicePlugin", "dra"
std::string_view DeviceModelName(DeviceModel m);  // "auto", "perHca", "perPool", "slots"

// Variables a container gets beyond PCIDEVICE_* (`envHints`, opt-in): the libraries that
// would otherwise try every RDMA device the node's sysfs shows, told exactly which are the
// pod's. kNccl: NCCL_IB_HCA; kUcx: UCX_NET_DEVICES (pool/pod_env.h).
enum class EnvHint { kNccl, kUcx };
std::string_view EnvHintName(EnvHint h);  // "nccl", "ucx"

// `trafficClass` and `gidIndex` (opt-in, with envHints naming the libraries): a number the
// operator chose, or "auto": read from the pool's HCAs (pool/pod_env.h RoceEnv).
struct RoceValue {
  bool automatic = false;
  int value = 0;  // 0..255 when not automatic
  bool operator==(const RoceValue&) const = default;
};
std::string RoceValueText(const RoceValue& v);  // "auto", "106"

struct ResourceConfig {
  std::string resource_name;
  std::string resource_prefix{kDefaultResourcePrefix};
  int64_t rdma_hca_max = 0;
  Selectors selectors;
  Frontend frontend = Frontend::kDevicePlugin;
  DeviceModel device_model = DeviceModel::kAuto;  // see DeviceModel
  std::vector<EnvHint> env_hints;                 // in the order written, no repeats
  // Leave out of the pool the functions that cannot serve a pod (no ACTIVE port, or GID
  // tables all zero: pool::UnusableReason); they rejoin when they can.
  bool skip_unusable = false;
  // `memlock`: the RLIMIT_MEMLOCK (soft and hard, bytes; kMemlockUnlimited) of every
  // container given the pool's devices through CDI, set by a createRuntime hook
  // (cmd/rdmadp-memlock-hook). Unset: the runtime's own limit.
  std::optional<uint64_t> memlock;
  // `pciDeviceEnv` (default true): containers get PCIDEVICE_<RESOURCE> and its _INFO, in the
  // SR-IOV plugin's format (the Go plugin sets no variable). false: neither, as from the Go
  // plugin (a variable name the pod's own environment already uses).
  bool pci_device_env = true;
  // `unusedGraceSeconds`: how long a container may hold the pool with no QP and no verbs
  // object beyond contexts before it is called unused (docs/observability.md); unset: the
  // --rdma-unused-grace flag's.
  std::optional<int64_t> unused_grace_seconds;
  // The RoCE class and GID index a pod's NCCL (NCCL_IB_TC, NCCL_IB_GID_INDEX) and UCX
  // (UCX_IB_TRAFFIC_CLASS, UCX_IB_GID_INDEX) use, as env_hints names them; device plugin
  // only, in the Allocate answer, where a value the pod sets itself wins (docs/pod-env.md).
  std::optional<RoceValue> traffic_class;
  std::optional<RoceValue> gid_index;

  // `<prefix>/<name>`, the name the kubelet and pods see.
  std::string FullName() const { return resource_prefix + "/" + resource_name; }
  // A device-plugin entry that advertises every HCA as its own devices (deviceModel perHca).
  bool PerHcaDevices() const {
    return frontend == Frontend::kDevicePlugin && device_model == DeviceModel::kPerHca;
  }
  // The model's name as it serves: a device-plugin entry's "slots" or "perHca" (unset is
  // slots), a DRA entry's DeviceModelName.
  std::string_view ModelName() const {
    if (frontend == Frontend::kDra) return DeviceModelName(device_model);
    return PerHcaDevices() ? "perHca" : "slots";
  }
  bool operator==(const ResourceConfig&) const = default;
};

// unusedGraceSeconds' bounds: a job needs a while to meet its peers; a day is the longest a
// container may hold HCAs idle before anyone hears of it.
inline constexpr int64_t kMinUnusedGraceSeconds = 60;
inline constexpr int64_t kMaxUnusedGraceSeconds = 86400;

struct Config {
  int64_t periodic_update_interval_seconds = kDefaultPeriodicUpdateIntervalSeconds;  // 0 = off
  std::vector<ResourceConfig> resources;
  bool operator==(const Config&) const = default;
};

// A number that changes when anything of `config` does (48 bits, so a Prometheus sample
// holds it exactly): rdma_shared_dp_config_hash, to tell which nodes run the same config.
uint64_t Fingerprint(const Config& config);

// A configList entry invalid on its own (kubelet name rules, an unknown key inside it,
// impossible selector values, a duplicate name): left out so that the others serve.
struct SkippedEntry {
  size_t index = 0;
  std::string resource_name;          // as written; may be empty or invalid
  std::vector<std::string> problems;  // `config: configList[N]...: ...`, one line each
  // A reload only: the entry's resourceName serves under the running config, whose version
  // of it keeps serving (ParseConfig's `running`).
  bool running_version_kept = false;
  std::string Label() const;  // `configList[N] (name)`
  bool operator==(const SkippedEntry&) const = default;
};

// `memlock` as written: "unlimited", or a Kubernetes quantity of whole bytes, an integer with
// an optional binary (Ki, Mi, Gi, Ti, Pi, Ei) or decimal (k, M, G, T, P, E) suffix or a
// decimal exponent ("1e9", "5E+10"), a decimal fraction allowed where that makes it whole
// bytes ("1.5Gi"). Positive, and below 2^63. Not accepted: signs, "m" (milli) and negative
// exponents, which never make whole bytes worth locking. The error says what was wrong, for
// the field's line. (Validation then refuses less than kMinMemlock.)
absl::StatusOr<uint64_t> ParseMemlock(std::string_view text);
// The hook's argument for `bytes`: "unlimited" or the decimal byte count.
std::string MemlockArg(uint64_t bytes);

struct LoadedConfig {
  Config config;                // the valid entries only
  std::vector<size_t> indices;  // configList index of each entry in config.resources
  // Non-fatal findings (deprecated keys, case-insensitive key matches, unknown top-level
  // keys, which are not read), one line each.
  std::vector<std::string> warnings;
  std::vector<SkippedEntry> skipped;
};

// Checks that need more than the file (the flags: socket paths under the kubelet root, CDI
// kinds; the front ends' Problems()), run on the entries valid on their own. One line per
// problem; a line naming an entry (`config: configList[N]...`) skips that entry, any other
// fails the file.
using EntryChecks = std::function<std::vector<std::string>(const Config& config,
                                                           const std::vector<size_t>& indices)>;

// Parses and validates config text, in this order: the file's structure and each entry on
// its own; `checks`; on a reload (`running`: the config in force), the running version of
// each entry skipped so far whose name no entry left takes (marked running_version_kept);
// the rules between entries (a name given twice, two entries setting one variable); last,
// the whole-file bound on slots. Each rule runs over what the rules before it left, in file
// order, and skips the entries it finds wrong by name: no entry skipped already claims a
// name or a slot, and one bad entry never costs a good one. A problem outside any entry (the
// file cannot be parsed, a bad top-level value), or no entry left, fails the whole file: the
// status message holds one line per problem, each `config: <field path>: <problem>`; every
// problem is reported, not just the first (and then the unknown top-level keys too).
// Skipped entries are in `skipped`, the others in `config`. An unknown top-level key is a
// warning and is not read, as the Go plugin ignores it; an unknown key inside an entry is
// that entry's problem.
absl::StatusOr<LoadedConfig> ParseConfig(std::string_view text, const EntryChecks& checks = {},
                                         const Config* running = nullptr);

// The configList index a problem line names (`config: configList[N]...`), if any.
std::optional<size_t> EntryOf(std::string_view problem);

inline constexpr size_t kMaxConfigBytes = 1 << 20;

// Reads `path` (a regular file of at most kMaxConfigBytes) and calls ParseConfig. A read failure is
// one line naming the path.
absl::StatusOr<LoadedConfig> LoadConfigFile(const std::string& path, const EntryChecks& checks = {},
                                            const Config* running = nullptr);

// The kernel keeps a unix socket path in 108 bytes (107 characters). Our sockets are
// `<dir>/.<resourceName>-<8 hex>.sock` while they are being published (see
// server/resource_server.h). One line per resource whose path would not fit under one of
// `socket_dirs`, naming the field, the length and the limit; empty when all fit.
// `indices`: the configList index of each resource (LoadedConfig::indices); empty = 0, 1, ...
std::vector<std::string> SocketPathProblems(const Config& config,
                                            const std::vector<std::string>& socket_dirs,
                                            const std::vector<size_t>& indices = {});
inline constexpr size_t kMaxUnixSocketPath = 107;

}  // namespace rdmadp::config
