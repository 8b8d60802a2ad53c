#include "pkg/cli/flags.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "pkg/text/cat.h"
#include "pkg/text/edit_distance.h"
#include "pkg/text/json.h"

namespace rdmadp::cli {
namespace {

// One row per flag: the same table drives parsing and --help, so they cannot disagree.
struct FlagSpec {
  std::string_view name;
  std::string_view value_name;  // empty for boolean flags
  std::string_view help;
  std::function<std::string(const Options&)> default_text;
  std::function<absl::Status(Options&, std::string_view)> set;
};

absl::StatusOr<bool> ParseBool(std::string_view flag, std::string_view v) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") return true;
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") {
    return false;
  }
  return absl::InvalidArgumentError(
      Cat("invalid boolean value \"", v, "\" for -", flag, ": use true or false"));
}

absl::Status NonEmpty(std::string_view flag, std::string_view v) {
  if (v.empty()) return absl::InvalidArgumentError(Cat("-", flag, ": must not be empty"));
  return absl::OkStatus();
}

// A flag that takes one of a few words: OK when `value` is among `allowed`, else the usage
// error listing them as a sentence ("use debug, info, warning or error"). It quotes
// `as_typed` when given: a value normalised before the check is shown as the user wrote it.
absl::Status OneOf(std::string_view flag, std::string_view value,
                   std::initializer_list<std::string_view> allowed,
                   std::optional<std::string_view> as_typed = std::nullopt) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return absl::OkStatus();
  std::string words;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (i > 0) words += i + 1 == allowed.size() ? " or " : ", ";
    words += allowed.begin()[i];
  }
  return absl::InvalidArgumentError(
      Cat("invalid value \"", as_typed.value_or(value), "\" for -", flag, ": use ", words));
}

std::function<absl::Status(Options&, std::string_view)> SetString(std::string Options::*field,
                                                                  std::string_view flag) {
  return [field, flag](Options& o, std::string_view v) {
    if (auto s = NonEmpty(flag, v); !s.ok()) return s;
    o.*field = std::string(v);
    return absl::OkStatus();
  };
}

std::function<std::string(const Options&)> ShowString(std::string Options::*field) {
  return [field](const Options& o) { return o.*field; };
}

// A boolean flag on `field`; a "no-..." flag (`negated`) stores the opposite of its value.
std::function<std::string(const Options&)> ShowBool(bool Options::*field, bool negated = false) {
  return [field, negated](const Options& o) {
    return std::string(o.*field != negated ? "true" : "false");
  };
}

std::function<absl::Status(Options&, std::string_view)> SetBool(bool Options::*field,
                                                                std::string_view flag,
                                                                bool negated = false) {
  return [field, flag, negated](Options& o, std::string_view v) {
    auto b = ParseBool(flag, v);
    if (!b.ok()) return b.status();
    o.*field = *b != negated;
    return absl::OkStatus();
  };
}

// A whole number of seconds in [low, high] on `field`.
std::function<absl::Status(Options&, std::string_view)> SetSeconds(int Options::*field,
                                                                   std::string_view flag, int low,
                                                                   int high) {
  return [field, flag, low, high](Options& o, std::string_view v) {
    int n = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || ptr != v.data() + v.size() || n < low || n > high) {
      return absl::InvalidArgumentError(
          Cat("invalid value \"", v, "\" for -", flag, ": use ", low, "..", high));
    }
    o.*field = n;
    return absl::OkStatus();
  };
}

std::function<std::string(const Options&)> ShowInt(int Options::*field) {
  return [field](const Options& o) { return std::to_string(o.*field); };
}

// --- Listen addresses (--metrics-address, --health-address) ---
// What metrics::HttpEndpoint takes (http_endpoint.cpp ParseAddress, then getaddrinfo), checked
// here by syntax alone so that a typo is a usage error at start: the endpoint retries every
// failure to listen, which suits a busy port but made a malformed address a retry for ever.

// A listen address split into its parts; `host` without brackets, "" for every address.
struct ListenAddress {
  std::string_view host;
  int port = 0;
};

bool IsIpv4(std::string_view host) {
  // inet_aton: the numeric forms getaddrinfo takes ("127.0.0.1", also "127.1"). It would
  // also take "127.0.0.1 junk", which getaddrinfo does not: only its characters get to it.
  if (host.empty() ||
      host.find_first_not_of("0123456789abcdefABCDEFxX.") != std::string_view::npos) {
    return false;
  }
  in_addr unused{};
  return ::inet_aton(std::string(host).c_str(), &unused) != 0;
}

// An IPv6 literal, with an optional zone ("fe80::1%eth0") as getaddrinfo takes it.
bool IsIpv6(std::string_view host) {
  std::string_view zone;
  if (const auto percent = host.find('%'); percent != std::string_view::npos) {
    zone = host.substr(percent + 1);
    host = host.substr(0, percent);
    if (zone.empty() || zone.size() > 15) return false;  // an interface name or index
    for (char c : zone) {
      if (std::isgraph(static_cast<unsigned char>(c)) == 0 || c == '/' || c == ']') return false;
    }
  }
  in6_addr unused{};
  return !host.empty() && host.find('\0') == std::string_view::npos &&
         ::inet_pton(AF_INET6, std::string(host).c_str(), &unused) == 1;
}

// A host name getaddrinfo could look up: dot-separated labels of letters, digits, '-' and '_'
// (hosts files allow it), none empty, longer than 63 or with '-' at an end; at most 253
// characters and one optional final dot. All digits and dots is an IPv4 address or nothing.
bool IsHostName(std::string_view host) {
  if (host.ends_with('.')) host.remove_suffix(1);
  if (host.empty() || host.size() > 253) return false;
  if (host.find_first_not_of("0123456789.") == std::string_view::npos) return false;
  size_t start = 0;
  while (start <= host.size()) {
    size_t dot = host.find('.', start);
    if (dot == std::string_view::npos) dot = host.size();
    const std::string_view label = host.substr(start, dot - start);
    start = dot + 1;
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '_') return false;
    }
  }
  return true;
}

// HOST:PORT, :PORT or [IPv6]:PORT (also [IPv4]:PORT and an unbracketed IPv6 literal, which
// the endpoint has always taken); PORT 0..65535, 0 for any free one. The reason when not.
absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view address) {
  ListenAddress out;
  std::string_view port;
  if (address.starts_with('[')) {
    const auto close = address.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError("no ']' after the IPv6 address (use [IPv6]:PORT)");
    }
    out.host = address.substr(1, close - 1);
    const std::string_view rest = address.substr(close + 1);
    if (!rest.starts_with(':')) {
      return absl::InvalidArgumentError("no :PORT after ']' (use [IPv6]:PORT, e.g. [::1]:10109)");
    }
    port = rest.substr(1);
    if (!out.host.empty() && !IsIpv6(out.host) && !IsIpv4(out.host)) {
      return absl::InvalidArgumentError(
          Cat(QuotedExcerpt(out.host), " in brackets is not an IP address"));
    }
  } else {
    const auto colon = address.rfind(':');
    if (colon == std::string_view::npos) {
      return absl::InvalidArgumentError("use HOST:PORT, :PORT or [IPv6]:PORT (e.g. :10109)");
    }
    out.host = address.substr(0, colon);
    port = address.substr(colon + 1);
    const bool ok = out.host.empty() || IsIpv4(out.host) || IsHostName(out.host) ||
                    (out.host.find(':') != std::string_view::npos && IsIpv6(out.host));
    if (!ok) {
      return absl::InvalidArgumentError(
          Cat("host ", QuotedExcerpt(out.host),
              " is neither an IP address nor a host name (an IPv6 address goes in brackets: "
              "[::1]:10109)"));
    }
  }
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (port.empty() || port.size() > 5 || ec != std::errc() || end != port.data() + port.size() ||
      !std::isdigit(static_cast<unsigned char>(port.front())) || out.port > 65535) {
    return absl::InvalidArgumentError(
        Cat("port ", QuotedExcerpt(port), " is not a number 0..65535 (0: any free port)"));
  }
  return out;
}

std::function<absl::Status(Options&, std::string_view)> SetListenAddress(
    std::string Options::*field, std::string_view flag) {
  return [field, flag](Options& o, std::string_view v) {
    if (!v.empty()) {  // empty: off
      if (auto parsed = ParseListenAddress(v); !parsed.ok()) {
        return absl::InvalidArgumentError(Cat("invalid value ", QuotedExcerpt(v), " for -", flag,
                                              ": ", std::string(parsed.status().message())));
      }
    }
    o.*field = std::string(v);
    return absl::OkStatus();
  };
}

// The wildcard hosts: "" and "::" take every address (IPv4 too: IPV6_V6ONLY is off),
// "0.0.0.0" every IPv4 one.
bool TakesEveryAddress(std::string_view host) { return host.empty() || host == "::"; }

// Both listeners would want one socket: the same port (not 0: each gets a free one) where
// their hosts overlap. The second bind would fail and be retried for ever.
absl::Status ListenersProblem(const Options& o) {
  if (o.metrics_address.empty() || o.health_address.empty()) return absl::OkStatus();
  const auto metrics = ParseListenAddress(o.metrics_address);
  const auto health = ParseListenAddress(o.health_address);
  if (!metrics.ok() || !health.ok()) return absl::OkStatus();  // each said by its setter
  if (metrics->port != health->port || metrics->port == 0) return absl::OkStatus();
  const std::string_view a = metrics->host, b = health->host;
  const bool overlap = a == b || TakesEveryAddress(a) || TakesEveryAddress(b) ||
                       (a == "0.0.0.0" && IsIpv4(b)) || (b == "0.0.0.0" && IsIpv4(a));
  if (!overlap) return absl::OkStatus();
  return absl::InvalidArgumentError(
      Cat("invalid value ", QuotedExcerpt(o.health_address),
          " for -health-address: it takes the port of -metrics-address ",
          QuotedExcerpt(o.metrics_address),
          "; give the probes a port of their own (the DaemonSet: 127.0.0.1:10110)"));
}

const std::vector<FlagSpec>& Specs() {
  static const std::vector<FlagSpec> kSpecs = {
      {"config-file", "PATH",
       "Config file: JSON (the Go plugin's format) or YAML, chosen by content.",
       ShowString(&Options::config_file), SetString(&Options::config_file, "config-file")},
      {"kubelet-root-dir", "DIR",
       "Kubelet root directory; sockets live in DIR/device-plugins (kubelet mode) or "
       "DIR/plugins_registry (watcher mode).",
       ShowString(&Options::kubelet_root_dir),
       SetString(&Options::kubelet_root_dir, "kubelet-root-dir")},
      {"registration-mode", "kubelet|watcher|auto",
       "How to register: kubelet = Register on DIR/device-plugins/kubelet.sock; watcher = "
       "socket in DIR/plugins_registry for the kubelet's plugin watcher; auto = watcher if "
       "the kubelet calls GetInfo in time, else kubelet.sock.",
       [](const Options& o) { return std::string(RegistrationModeName(o.registration_mode)); },
       [](Options& o, std::string_view v) {
         if (auto s = OneOf("registration-mode", v, {"kubelet", "watcher", "auto"}); !s.ok()) {
           return s;
         }
         o.registration_mode = v == "kubelet"   ? RegistrationMode::kKubelet
                               : v == "watcher" ? RegistrationMode::kWatcher
                                                : RegistrationMode::kAuto;
         return absl::OkStatus();
       }},
      {"auto-detect-timeout", "SECONDS",
       "In auto mode, how long to wait for the kubelet's plugin watcher to call GetInfo "
       "before falling back to kubelet.sock registration.",
       ShowInt(&Options::auto_detect_timeout_seconds),
       SetSeconds(&Options::auto_detect_timeout_seconds, "auto-detect-timeout", 1, 600)},
      {"config-error-interval", "SECONDS",
       "How often a config entry left out as invalid is logged again at error level, while it "
       "stays out (for clusters that watch logs, not probes: network-operator's DaemonSet has "
       "no readiness probe).",
       ShowInt(&Options::config_error_interval_seconds),
       SetSeconds(&Options::config_error_interval_seconds, "config-error-interval", 1, 3600)},
      {"sysfs-root", "DIR", "Root under which every sysfs path is resolved.",
       ShowString(&Options::sysfs_root), SetString(&Options::sysfs_root, "sysfs-root")},
      {"dev-root", "DIR",
       "Root under which /dev existence checks are resolved; device paths handed to "
       "containers stay /dev/infiniband/<name>.",
       ShowString(&Options::dev_root), SetString(&Options::dev_root, "dev-root")},
      {"use-cdi", "", "Expose devices through CDI specs instead of DeviceSpecs.",
       ShowBool(&Options::use_cdi), SetBool(&Options::use_cdi, "use-cdi")},
      {"cdi-spec-dir", "DIR",
       "Directory for the CDI specs this plugin writes: the device plugin's with -use-cdi, the "
       "DRA front end's always.",
       ShowString(&Options::cdi_spec_dir), SetString(&Options::cdi_spec_dir, "cdi-spec-dir")},
      {"memlock-hook-path", "PATH",
       "Where to install the CDI hook that raises RLIMIT_MEMLOCK for entries with \"memlock\" "
       "(a host path, mounted at the same path: images/components/memlock); CDI specs name it. "
       "Installed at start when its directory exists; empty: never.",
       ShowString(&Options::memlock_hook_path),
       [](Options& o, std::string_view v) {
         if (!v.empty() && !v.starts_with("/")) {
           return absl::InvalidArgumentError(
               Cat("-memlock-hook-path: \"", v, "\" is not an absolute path (or empty: never)"));
         }
         o.memlock_hook_path = std::string(v);
         return absl::OkStatus();
       }},
      {"no-link-up", "",
       "Do not set the netdevs of selected HCAs administratively up at start "
       "(the Go plugin always does).",
       ShowBool(&Options::link_up, true), SetBool(&Options::link_up, "no-link-up", true)},
      {"no-topology", "",
       "Advertise slots without NUMA nodes, as the Go plugin does: the kubelet's Topology "
       "Manager (single-numa-node, restricted) then never refuses a pod over this plugin's "
       "resources.",
       ShowBool(&Options::topology, true), SetBool(&Options::topology, "no-topology", true)},
      {"watch-config", "",
       "Reload when the config file changes (a ConfigMap edit reaches every node within about a "
       "minute). --watch-config=false: only SIGHUP, or a restart, reloads (default true).",
       ShowBool(&Options::watch_config), SetBool(&Options::watch_config, "watch-config")},
      {"metrics-address", "HOST:PORT",
       "Serve Prometheus metrics on /metrics and probes on /healthz and /readyz "
       "(the DaemonSet: :10109); off when empty. HOST:PORT, :PORT (every address) or "
       "[IPv6]:PORT; port 0 picks a free one. A malformed address is a usage error; a port "
       "that cannot be bound is logged and retried.",
       ShowString(&Options::metrics_address),
       SetListenAddress(&Options::metrics_address, "metrics-address")},
      {"health-address", "HOST:PORT",
       "Serve /healthz and /readyz on a listener of their own, so that a busy or taken "
       "metrics port never fails the kubelet's probes (the DaemonSet: 127.0.0.1:10110); off "
       "when empty. Same forms as --metrics-address, and not its port.",
       ShowString(&Options::health_address),
       SetListenAddress(&Options::health_address, "health-address")},
      {"log-level", "debug|info|warning|error", "Minimum level of log lines on stderr.",
       ShowString(&Options::log_level),
       [](Options& o, std::string_view v) {
         std::string level(v);
         for (char& c : level) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
         if (level == "warn") level = "warning";
         // `v` too: the error quotes the value as typed, not lowercased.
         auto s = OneOf("log-level", level, {"debug", "info", "warning", "error"}, v);
         if (!s.ok()) return s;
         o.log_level = level;
         return absl::OkStatus();
       }},
      {"log-format", "text|json", "Log line format.", ShowString(&Options::log_format),
       [](Options& o, std::string_view v) {
         if (auto s = OneOf("log-format", v, {"text", "json"}); !s.ok()) return s;
         o.log_format = std::string(v);
         return absl::OkStatus();
       }},
      {"pod-resources-socket", "PATH",
       "pods and --rdma-usage-interval: the kubelet's pod-resources socket (default: "
       "DIR/pod-resources/kubelet.sock "
       "of --kubelet-root-dir).",
       ShowString(&Options::pod_resources_socket),
       SetString(&Options::pod_resources_socket, "pod-resources-socket")},
      {"cgroup-root", "DIR",
       "pods and --rdma-usage-interval: where the host's cgroup v2 tree is seen "
       "(images/components/usage mounts it "
       "read-only at /host/sys/fs/cgroup).",
       ShowString(&Options::cgroup_root), SetString(&Options::cgroup_root, "cgroup-root")},
      {"container-logs-dir", "DIR",
       "pods and --rdma-usage-interval: where the host's /var/log/containers is seen: the "
       "kubelet's links there name "
       "each container's pod, UID and container ID (only their names are read).",
       ShowString(&Options::container_logs_dir),
       SetString(&Options::container_logs_dir, "container-logs-dir")},
      {"rdma-usage-interval", "SECONDS",
       "Sample per-container RDMA use every SECONDS (10..3600) and export it as metrics "
       "(rdma_shared_dp_pod_rdma_*), with a warning line when a container turns unused; 0: "
       "never (needs images/components/usage's mounts; docs/observability.md).",
       ShowInt(&Options::rdma_usage_interval_seconds),
       [](Options& o, std::string_view v) {
         if (v == "0") {
           o.rdma_usage_interval_seconds = 0;
           return absl::OkStatus();
         }
         if (auto s = SetSeconds(&Options::rdma_usage_interval_seconds, "rdma-usage-interval", 10,
                                 3600)(o, v);
             !s.ok()) {
           return absl::InvalidArgumentError(Cat(std::string(s.message()), " (or 0: never)"));
         }
         return absl::OkStatus();
       }},
      {"rdma-usage-qps", "",
       "pods and --rdma-usage-interval: also count each container's queue pairs from the "
       "kernel's NETLINK_RDMA dumps (exact, but needs the plugin's pod in the host PID "
       "namespace: images/components/usage-qps; QPs made through mlx5 DevX are not listed "
       "there, the cgroup's objects count them).",
       ShowBool(&Options::rdma_usage_qps), SetBool(&Options::rdma_usage_qps, "rdma-usage-qps")},
      {"rdma-unused-events", "",
       "--rdma-usage-interval: also write one Kubernetes Event (reason RDMAUnused) on the pod "
       "of a container that turns unused, with the device-plugin front end alone (it needs "
       "the API server: --kube-api-server or the in-cluster service account, and "
       "images/components/usage-events' RBAC); always on while a configList entry uses DRA.",
       ShowBool(&Options::rdma_unused_events),
       SetBool(&Options::rdma_unused_events, "rdma-unused-events")},
      {"rdma-unused-grace", "SECONDS",
       "pods and --rdma-usage-interval: how long a container may hold this plugin's devices "
       "with no QP and no verbs object beyond contexts before it is said to leave them unused.",
       ShowInt(&Options::rdma_unused_grace_seconds),
       SetSeconds(&Options::rdma_unused_grace_seconds, "rdma-unused-grace", 1, 86400)},
      {"output", "table|json", "Output format of the discover and pods commands.",
       ShowString(&Options::output),
       [](Options& o, std::string_view v) {
         if (auto s = OneOf("output", v, {"table", "json"}); !s.ok()) return s;
         o.output = std::string(v);
         return absl::OkStatus();
       }},
      {"dra-driver-name", "NAME",
       "The DRA driver name: what the DRA front end registers and publishes as, and what the "
       "render command's DeviceClasses select (a DNS subdomain).",
       ShowString(&Options::dra_driver_name),
       SetString(&Options::dra_driver_name, "dra-driver-name")},
      {"dra-health-timeout", "SECONDS",
       "How long the kubelet keeps a DRA device's health without a report before it shows "
       "the device Unknown in pod status (the health stream's health_check_timeout_seconds). "
       "The driver reports every third of it, changed or not.",
       ShowInt(&Options::dra_health_timeout_seconds),
       SetSeconds(&Options::dra_health_timeout_seconds, "dra-health-timeout", 3, 3600)},
      {"gpu-device-class", "NAME",
       "render: the GPU DeviceClass of the GPU + HCA pairing template (same PCIe root), a "
       "DNS subdomain; \"none\" leaves the template out.",
       ShowString(&Options::gpu_device_class),
       SetString(&Options::gpu_device_class, "gpu-device-class")},
      {"extended-resource-name", "",
       "render: the DeviceClasses also serve pods that ask for the resource name as an "
       "extended resource (limits: rdma/<name>: 1; Kubernetes 1.34+ with DRAExtendedResource). "
       "The device plugin must then not serve that name on the same nodes.",
       ShowBool(&Options::extended_resource_name),
       SetBool(&Options::extended_resource_name, "extended-resource-name")},
      {"go-compatible", "",
       "validate: also check that the Go plugin (k8s-rdma-shared-dev-plugin) and "
       "network-operator's admission webhook accept the file and read it as this plugin does "
       "(strict JSON, their keys and types; docs/upgrading.md), so a rollback is safe.",
       ShowBool(&Options::go_compatible), SetBool(&Options::go_compatible, "go-compatible")},
      {"dry-run", "",
       "remove-stale-resources: print what would be removed and the JSON patch, change "
       "nothing.",
       ShowBool(&Options::dry_run), SetBool(&Options::dry_run, "dry-run")},
      {"namespace", "NS",
       "render: the namespace of the ResourceClaimTemplates (the workloads' namespace; "
       "default: none, so kubectl applies them to its current namespace).",
       ShowString(&Options::render_namespace), SetString(&Options::render_namespace, "namespace")},
      {"node-name", "NAME",
       "DRA front end: the node whose ResourceSlices this instance publishes (default: "
       "$NODE_NAME, set from the downward API by images/overlays/dra).",
       ShowString(&Options::node_name), SetString(&Options::node_name, "node-name")},
      {"kube-api-server", "URL",
       "DRA front end and RDMAUnused Events: the API server (default: "
       "https://$KUBERNETES_SERVICE_HOST:"
       "$KUBERNETES_SERVICE_PORT, as in every pod).",
       ShowString(&Options::kube_api_server),
       SetString(&Options::kube_api_server, "kube-api-server")},
      {"kube-ca-file", "PATH",
       "DRA front end and RDMAUnused Events: the CA bundle that signs the API server's "
       "certificate.",
       ShowString(&Options::kube_ca_file), SetString(&Options::kube_ca_file, "kube-ca-file")},
      {"kube-token-file", "PATH",
       "DRA front end and RDMAUnused Events: the bearer token (re-read when it changes, and "
       "after a 401).",
       ShowString(&Options::kube_token_file),
       SetString(&Options::kube_token_file, "kube-token-file")},
      {"version", "", "Print the version and exit (alias -v).",
       [](const Options&) { return std::string("false"); },
       [](Options& o, std::string_view v) {
         auto b = ParseBool("version", v);
         if (!b.ok()) return b.status();
         if (*b) o.command = Command::kVersion;
         return absl::OkStatus();
       }},
      {"help", "", "Print this help and exit (alias -h).",
       [](const Options&) { return std::string("false"); },
       [](Options& o, std::string_view v) {
         auto b = ParseBool("help", v);
         if (!b.ok()) return b.status();
         if (*b) o.command = Command::kHelp;
         return absl::OkStatus();
       }},
  };
  return kSpecs;
}

// A positional argument that is not a command: never run the daemon on a typo.
absl::Status UnexpectedArgument(std::string_view arg, bool first) {
  std::string hint;
  for (std::string_view command :
       {"discover", "validate", "render", "pods", "remove-stale-resources"}) {
    if (first && EditDistance(arg, command) <= 2) hint = Cat("; did you mean `", command, "`?");
  }
  if (hint.empty() && (arg == "true" || arg == "false")) {
    hint = "; boolean flags take their value after '=', e.g. --use-cdi=true";
  }
  if (hint.empty()) {
    hint =
        "; the commands are `discover`, `validate`, `render`, `pods` and "
        "`remove-stale-resources`, flags start with -";
  }
  return absl::InvalidArgumentError(Cat("unexpected argument \"", arg, "\"", hint));
}

const FlagSpec* Find(std::string_view name) {
  if (name == "v") name = "version";
  if (name == "h") name = "help";
  for (const auto& spec : Specs()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

}  // namespace

std::string EnvName(std::string_view flag) {
  std::string out = "RDMADP_";
  for (char c : flag) out += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return out;
}

absl::StatusOr<Options> ParseFlags(const std::vector<std::string_view>& args, const EnvFn& env,
                                   const std::vector<std::string>& env_names) {
  Options options;
  // The command line is read first and set aside: a flag it gives is not read from the
  // environment at all, so a bad RDMADP_ value it overrides is no error (the DaemonSet's
  // environment and a `kubectl exec ... --flag=...` must not fight).
  struct Given {
    const FlagSpec* spec;
    std::string_view value;
  };
  std::vector<Given> given;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      for (++i; i < args.size(); ++i) options.positional.emplace_back(args[i]);
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      options.positional.emplace_back(arg);
      continue;
    }
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::optional<std::string_view> value;
    if (auto eq = body.find('='); eq != std::string_view::npos) {
      value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    const FlagSpec* spec = Find(body);
    if (spec == nullptr || body.empty() || body[0] == '-') {
      return absl::InvalidArgumentError(Cat("flag provided but not defined: -", body));
    }
    if (!value) {
      if (spec->value_name.empty()) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(Cat("flag needs an argument: -", spec->name));
      }
    }
    given.push_back({spec, *value});
  }
  for (const auto& spec : Specs()) {
    if (!env || spec.name == "help" || spec.name == "version") continue;
    if (std::any_of(given.begin(), given.end(), [&](const Given& g) { return g.spec == &spec; })) {
      continue;
    }
    const std::string name = EnvName(spec.name);
    if (const auto value = env(name); value) {
      if (auto status = spec.set(options, *value); !status.ok()) {
        return absl::InvalidArgumentError(
            Cat("environment ", name, ": ", std::string(status.message())));
      }
    }
  }
  options.warnings = EnvNameWarnings(env_names);
  Command requested = Command::kRun;
  for (const Given& g : given) {
    if (auto status = g.spec->set(options, g.value); !status.ok()) return status;
    // --help wins over --version wins over running, whatever the order given.
    if (options.command == Command::kHelp) requested = Command::kHelp;
    if (options.command == Command::kVersion && requested != Command::kHelp) {
      requested = Command::kVersion;
    }
  }
  options.command = requested;
  if (requested == Command::kRun && !options.positional.empty()) {
    if (options.positional.front() == "discover") options.command = Command::kDiscover;
    if (options.positional.front() == "validate") options.command = Command::kValidate;
    if (options.positional.front() == "render") options.command = Command::kRender;
    if (options.positional.front() == "pods") options.command = Command::kPods;
    if (options.positional.front() == "remove-stale-resources") {
      options.command = Command::kRemoveStaleResources;
    }
    if (options.command != Command::kRun) options.positional.erase(options.positional.begin());
  }
  if (requested == Command::kRun && !options.positional.empty()) {
    return UnexpectedArgument(options.positional.front(), options.command == Command::kRun);
  }
  if (requested == Command::kRun) {  // every command but --help and --version
    if (auto status = ListenersProblem(options); !status.ok()) return status;
  }
  return options;
}

std::vector<std::string> EnvNameWarnings(const std::vector<std::string>& env_names) {
  std::vector<std::string> warnings;
  std::set<std::string_view> said;
  for (const std::string& name : env_names) {
    if (!IsRdmadpEnvName(name) || !said.insert(std::string_view(name)).second) continue;
    // Quoted only when it holds what a log line must not (the environment allows any byte).
    const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isgraph(static_cast<unsigned char>(c)) != 0;
    });
    const std::string shown = plain ? name : QuotedExcerpt(name);
    const FlagSpec* nearest = nullptr;
    size_t best = 0;
    bool exact = false;
    for (const auto& spec : Specs()) {
      const std::string known = EnvName(spec.name);
      if (known == name) {
        exact = true;
        nearest = &spec;
        break;
      }
      if (spec.name == "help" || spec.name == "version") continue;
      if (const size_t d = EditDistance(name, known); nearest == nullptr || d < best) {
        best = d;
        nearest = &spec;
      }
    }
    if (exact && nearest->name != "help" && nearest->name != "version") continue;  // a flag's
    if (exact) {
      warnings.push_back(Cat("environment ", shown, ": -", nearest->name,
                             " is read from the command line only; ignored"));
    } else if (best <= 3) {
      warnings.push_back(Cat("environment ", shown, ": no flag reads it, ignored; did you mean ",
                             EnvName(nearest->name), " (--", nearest->name, ")?"));
    } else {
      warnings.push_back(Cat("environment ", shown,
                             ": no flag reads it, ignored (RDMADP_<FLAG> sets --<flag>; the "
                             "nearest is ",
                             EnvName(nearest->name), ", for --", nearest->name, ")"));
    }
  }
  return warnings;
}

bool IsRdmadpEnvName(std::string_view name) {
  constexpr std::string_view kPrefix = "RDMADP_";
  if (name.size() < kPrefix.size()) return false;
  for (size_t i = 0; i < kPrefix.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(name[i])) != kPrefix[i]) return false;
  }
  return true;
}

std::string Usage(std::string_view program) {
  std::string out = Cat(
      "Usage: ", program, " [flags]\n\n",
      "Kubernetes node agent that shares the node's RDMA HCAs among pods: one resource\n"
      "per config entry, served as a device plugin (rdmaHcaMax share slots) or, with\n"
      "\"frontend\": \"dra\", through DRA (ResourceSlices published for --node-name, the\n"
      "kubelet's DRA plugin API). Flags take one or two dashes and -flag=value or\n"
      "-flag value.\n\n"
      "Commands:\n"
      "  (none)     run the device plugin and, for DRA entries, the DRA driver\n"
      "  discover   print this node's PCI network functions, their RDMA char devices, NUMA\n"
      "             nodes, port states and the pools they land in (--output table|json)\n"
      "  validate   check --config-file and exit 0 (valid) or 1, with the daemon's messages\n"
      "  render     print, as YAML for kubectl apply, the DeviceClasses and "
      "ResourceClaimTemplates\n"
      "             of --config-file's DRA entries (templates in --namespace) and the admission\n"
      "             policy for --dra-driver-name; exit 1 if no entry has \"frontend\": \"dra\"\n"
      "  pods       print each container holding this plugin's devices, the RDMA objects its\n"
      "             processes hold on its HCAs and whether it uses them (--output table|json);\n"
      "             exit 1 if the kubelet's pod-resources socket cannot be read\n"
      "  remove-stale-resources\n"
      "             remove from --node-name's status the extended resources of --config-file's\n"
      "             DRA entries that a device plugin left at 0 (Kubernetes 1.34's scheduler\n"
      "             then never serves them through DRA); exit 1 if one is still served or its\n"
      "             plugin left under 5 minutes ago (--dry-run: print, change nothing)\n"
      "\nFlags:\n");
  const Options defaults;
  for (const auto& spec : Specs()) {
    Append(out, "  --", spec.name);
    if (!spec.value_name.empty()) Append(out, " ", spec.value_name);
    Append(out, "\n      ", spec.help);
    if (!spec.value_name.empty()) {
      Append(out, " (default \"", spec.default_text(defaults), "\")");
    }
    Append(out, "\n");
  }
  Append(out,
         "\nSignals: SIGHUP reloads the config and rescans; SIGTERM, SIGINT and SIGQUIT "
         "stop the servers,\nremove the plugin's sockets and exit 0.\n"
         "Exit status: 0 ok, 1 runtime or config error, 2 bad flags.\n"
         "Environment: RDMADP_<FLAG> sets a flag's default (RDMADP_DEV_ROOT=/host/dev for "
         "--dev-root);\nthe command line wins (a flag given there is not read from the "
         "environment at all); an RDMADP_\nname that no flag reads is warned about. The image "
         "and the DaemonSet set "
         "GLIBC_TUNABLES=glibc.malloc.tcache_count=0 "
         "and\nMALLOC_ARENA_MAX=1 (MALLOC_ARENA_MAX acts as 1 when unset); "
         "GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS\nis set to 0 where the operator has not "
         "set it.\n");
  return out;
}

}  // namespace rdmadp::cli
