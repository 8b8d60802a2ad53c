// Command-line parsing with Go `flag` package syntax, so existing DaemonSet args keep working:
// one or two leading dashes, `--flag=value` or `--flag value`, bools as `--flag` or
// `--flag=true|false`, and `--` ends the flags. Pure: no I/O, no exit.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/frontend/registration_mode.h"

namespace rdmadp::cli {

using frontend::RegistrationMode;
using frontend::RegistrationModeName;
enum class Command {
  kRun,
  kHelp,
  kVersion,
  kDiscover,
  kValidate,
  kRender,
  kPods,
  kRemoveStaleResources
};

struct Options {
  Command command = Command::kRun;
  std::string config_file = "/k8s-rdma-shared-dev-plugin/config.json";
  std::string kubelet_root_dir = "/var/lib/kubelet";
  RegistrationMode registration_mode = RegistrationMode::kKubelet;
  int auto_detect_timeout_seconds = 5;
  int config_error_interval_seconds = 60;  // a skipped config entry's error line, again
  std::string sysfs_root = "/sys";
  std::string dev_root = "/dev";
  bool use_cdi = false;
  std::string cdi_spec_dir = "/var/run/cdi";
  // Where the plugin installs its memlock hook on the host (the same path in the container:
  // a hostPath mount); "" = never.
  std::string memlock_hook_path = "/var/lib/k8s-rdma-shared-dp/bin/rdmadp-memlock-hook";
  bool link_up = true;
  bool watch_config = true;  // reload when the config file changes
  bool topology = true;      // NUMA nodes on the advertised slots
  std::string log_level = "info";
  std::string log_format = "text";
  std::string output = "table";  // discover, pods: table or json
  // Per-container RDMA use (pods): where the host's kubelet, cgroup tree and container log
  // links are seen ("" socket: <kubelet root>/pod-resources/kubelet.sock), and how long a
  // container may hold our devices unused before it is said.
  std::string pod_resources_socket;
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string container_logs_dir = "/var/log/containers";
  int rdma_unused_grace_seconds = 600;
  int rdma_usage_interval_seconds = 0;  // the daemon samples per-container use (0: never)
  bool rdma_usage_qps = false;          // and counts QPs by owner (the host PID namespace)
  bool rdma_unused_events = false;      // RDMAUnused Events without a DRA entry too
  std::string metrics_address;          // "" = no HTTP endpoint
  std::string health_address;           // "" = probes only on the metrics endpoint (if any)
  // render: the DRA objects an administrator applies.
  std::string dra_driver_name = "rdma.k8s-rdma-shared-dp.io";
  // The DRA health stream's timeout the kubelet is told (health_check_timeout_seconds); the
  // driver reports every third of it.
  int dra_health_timeout_seconds = 30;
  std::string gpu_device_class = "gpu.nvidia.com";  // "none": no GPU pairing template
  bool extended_resource_name = false;
  bool go_compatible = false;    // validate: also the Go plugin's and the webhook's rules
  bool dry_run = false;          // remove-stale-resources: say, change nothing
  std::string render_namespace;  // the claim templates' namespace ("": kubectl's current one)
  // The DRA front end (configList entries with "frontend": "dra"): which node it publishes
  // for and how it reaches the API server (in a pod: the service-account defaults).
  std::string node_name;  // default: $NODE_NAME (the downward API)
  std::string
      kube_api_server;  // default: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
  std::string kube_ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string kube_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  // Positional arguments after the command; the Go plugin ignores them, so do we (main warns).
  std::vector<std::string> positional;
  // Non-fatal findings, one line each, for main to say once at start (stderr, or the log when
  // running): RDMADP_* environment names no flag reads (EnvNameWarnings).
  std::vector<std::string> warnings;
};

// Reads one environment variable (nullopt: unset).
using EnvFn = std::function<std::optional<std::string>(const std::string& name)>;

// Parses argv[1..]. A first positional `discover`, `validate`, `render`, `pods` or
// `remove-stale-resources` selects that
// command; any other positional argument is an error (with "did you mean" for a mistyped
// command). Errors are one line naming the flag: `flag provided but not defined: -foo`.
// Every flag but --help and --version may also come from the environment, RDMADP_ and its
// name upper-cased with '_' for '-' (RDMADP_DEV_ROOT for --dev-root): the DaemonSet sets
// the daemon's paths there, so `kubectl exec ... discover` and `validate` in its pod see the
// same node and config. A flag on the command line wins over the environment: its
// RDMADP_ variable is then not read at all, so a bad value there is no error. `env_names`:
// the RDMADP_* names present in the environment (the caller lists them: this parser reads
// no global state); each that no flag reads becomes a line of Options::warnings.
// --metrics-address and --health-address are checked by syntax (HOST:PORT, :PORT,
// [IPv6]:PORT, port 0..65535) and must not take one port; whether it can be bound is the
// run's to find out.
absl::StatusOr<Options> ParseFlags(const std::vector<std::string_view>& args,
                                   const EnvFn& env = nullptr,
                                   const std::vector<std::string>& env_names = {});

// Whether `name` starts with RDMADP_, in any case (getenv is exact, so "rdmadp_dev_root" is
// read by no flag: worth a warning too).
bool IsRdmadpEnvName(std::string_view name);

// One warning per distinct RDMADP_* name in `env_names` that no flag reads, naming the
// nearest flag's variable ("did you mean RDMADP_DEV_ROOT (--dev-root)?" for RDMADP_DEVROOT);
// RDMADP_HELP and RDMADP_VERSION are said to be command-line only. Other names are skipped.
std::vector<std::string> EnvNameWarnings(const std::vector<std::string>& env_names);

// RDMADP_DEV_ROOT for "dev-root".
std::string EnvName(std::string_view flag);

// Complete usage text, one block per flag with its default.
std::string Usage(std::string_view program);

}  // namespace rdmadp::cli
