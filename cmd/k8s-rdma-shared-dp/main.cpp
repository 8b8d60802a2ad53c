// k8s-rdma-shared-dp: flags, wiring, nothing else.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>  // environ

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cmd/k8s-rdma-shared-dp/node_resource_command.h"
#include "cmd/k8s-rdma-shared-dp/pods_command.h"
#include "pkg/cdi/memlock_hook.h"
#include "pkg/cli/flags.h"
#include "pkg/config/config.h"
#include "pkg/config/go_compat.h"
#include "pkg/config/k8s_names.h"
#include "pkg/deviceplugin/front_end.h"
#include "pkg/dra/front_end.h"
#include "pkg/dra/render/device_classes.h"
#include "pkg/dra/render/yaml_output.h"
#include "pkg/fd/files.h"
#include "pkg/kube/rest_client.h"
#include "pkg/log/log.h"
#include "pkg/loop/event_loop.h"
#include "pkg/loop/malloc_setup.h"
#include "pkg/manager/manager.h"
#include "pkg/netlink/rdma_netns.h"
#include "pkg/observe/rdma_use_observer.h"
#include "pkg/report/discover_report.h"
#include "pkg/rpc/grpc_runtime.h"
#include "pkg/sysfs/scanner.h"
#include "pkg/text/cat.h"
#include "pkg/text/escape.h"
#include "pkg/text/json.h"

namespace {

using namespace rdmadp;

log::Level ParseLevel(const std::string& s) {
  if (s == "debug") return log::Level::kDebug;
  if (s == "warning") return log::Level::kWarn;
  if (s == "error") return log::Level::kError;
  return log::Level::kInfo;
}

// Shared mode is required: every pod gets the same host RDMA devices. Exclusive mode is
// fatal; a kernel without RDMA netlink (no ib_core) is only worth a warning.
bool CheckRdmaNetnsMode() {
  const netlink::NetnsQuery q = netlink::QueryRdmaNetnsMode();
  using Outcome = netlink::NetnsQuery::Outcome;
  switch (q.outcome) {
    case Outcome::kMode:
      if (q.mode == netlink::NetnsMode::kExclusive) {
        log::Error(
            "RDMA subsystem network namespace mode is exclusive: RDMA devices cannot be shared "
            "between pods. Switch to shared mode (`rdma system set netns shared`, or the ib_core "
            "module parameter netns_mode=1) or use an exclusive-mode setup with rdma-cni");
        return false;
      }
      log::Info(Cat("RDMA subsystem network namespace mode: ", netlink::NetnsModeName(q.mode)));
      return true;
    case Outcome::kOldKernel:
      log::Info("kernel too old to report the RDMA netns mode (before 5.2: always shared)");
      return true;
    case Outcome::kNoRdmaNetlink:
      log::Warn(
          Cat("cannot check the RDMA netns mode: ", q.detail, " (is ib_core loaded? continuing)"));
      return true;
    case Outcome::kError:
      break;
  }
  log::Error(Cat("cannot get the RDMA subsystem network namespace mode: ", q.detail));
  return false;
}

// Writes `text` to stderr, one line per line of it (prefixed), each line's control
// characters escaped as the daemon's log escapes them (text/escape.h): a value from the file
// cannot start a forged line or reach the terminal (H11 of the hardening round at 050f44e).
void Say(std::string_view text, std::string_view prefix = "") {
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::fprintf(stderr, "%.*s%s\n", static_cast<int>(prefix.size()), prefix.data(),
                 EscapeControls(text.substr(start, end - start)).c_str());
    start = end + 1;
  }
}

// The device-plugin front end's checks that depend on the flags as well as the config
// (socket paths under the kubelet root; in CDI mode the CDI kinds), for `validate`, which
// runs offline: the DRA front end's environment checks (node name) need the running pod.
config::EntryChecks ModeChecks(const cli::Options& opts) {
  return [&opts](const config::Config& c, const std::vector<size_t>& indices) {
    auto problems = deviceplugin::ConfigProblems(
        {.registration_mode = opts.registration_mode, .use_cdi = opts.use_cdi},
        opts.kubelet_root_dir, c, indices);
    // Every DRA check that needs no pod (the node's name comes from the DaemonSet's
    // downward API): what a start would skip for the driver name and socket paths.
    for (auto& p : dra::DriverProblems(opts.dra_driver_name, opts.kubelet_root_dir, c, indices)) {
      problems.push_back(std::move(p));
    }
    return problems;
  };
}

// Entries whose `memlock` these flags would not apply, one line each (the running daemon
// says the same on /readyz and in rdma_shared_dp_memlock_applied): for `validate` and
// `discover`, run in the plugin's pod (kubectl exec) where the hook's directory is mounted.
std::vector<std::string> MemlockNotApplied(const cli::Options& opts,
                                           const config::LoadedConfig& loaded) {
  std::vector<std::string> lines;
  const std::string& hook = opts.memlock_hook_path;
  const std::string dir = hook.substr(0, hook.rfind('/'));
  struct stat st {};
  const bool dir_there =
      !hook.empty() && ::stat(dir.empty() ? "/" : dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  // What the install would refuse (a directory on the way others can write, a symlink):
  // the same rule, without installing.
  const absl::Status install = dir_there ? cdi::HookDirectoryProblem(hook) : absl::OkStatus();
  for (size_t i = 0; i < loaded.config.resources.size(); ++i) {
    const config::ResourceConfig& rc = loaded.config.resources[i];
    if (!rc.memlock) continue;
    std::string why;
    if (rc.frontend == config::Frontend::kDevicePlugin && !opts.use_cdi) {
      why =
          "memlock needs CDI (--use-cdi); with DeviceSpecs its containers keep the runtime's "
          "RLIMIT_MEMLOCK";
    } else if (hook.empty()) {
      why = "--memlock-hook-path is empty, so no hook is installed";
    } else if (!dir_there) {
      why = Cat(dir, " does not exist to install the hook in (mount the host's ", dir,
                " at the same path: images/components/memlock)");
    } else if (!install.ok()) {
      why = Cat("the hook would not be installed: ", std::string(install.message()));
    }
    if (why.empty()) continue;
    const size_t index = i < loaded.indices.size() ? loaded.indices[i] : i;
    lines.push_back(
        Cat("configList[", index, "].memlock (", rc.FullName(), ") would not be applied: ", why));
  }
  return lines;
}

// `validate`: the daemon's own config checks, nothing started.
// Each resource costs a few descriptors (socket, gRPC's epoll and wakeups, streams); a low
// soft limit (`ulimit -n 32`) would fail resources one by one. Use what the hard limit allows.
void RaiseFdLimit() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) {
      log::Debug(Cat("raised the open-file limit from ", before, " to ", limit.rlim_cur));
    }
  }
}

// Installs the memlock hook at --memlock-hook-path when that directory exists (the DaemonSet
// mounts it from the host with images/components/memlock), whether or not an entry uses it
// now, so that a reload adding `memlock` finds it. Returns the installed path, "" when there
// is none; entries with `memlock` and no hook get one error line naming them all.
std::string InstallMemlockHook(const cli::Options& opts, const config::LoadedConfig& loaded) {
  std::vector<std::string> users;  // every entry with memlock, named
  for (size_t i = 0; i < loaded.config.resources.size(); ++i) {
    if (loaded.config.resources[i].memlock) {
      users.push_back(Cat("configList[", i < loaded.indices.size() ? loaded.indices[i] : i,
                          "].memlock (", loaded.config.resources[i].FullName(), ")"));
    }
  }
  const std::string user = Join(users, ", ");
  const std::string& path = opts.memlock_hook_path;
  if (path.empty()) {
    if (!user.empty()) {
      log::Error(Cat(user,
                     ": not applied: --memlock-hook-path is empty, so no hook is "
                     "installed; its containers keep the runtime's RLIMIT_MEMLOCK"));
    }
    return "";
  }
  const std::string dir = path.substr(0, path.rfind('/'));
  struct stat st {};
  if (::stat(dir.empty() ? "/" : dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    if (!user.empty()) {
      log::Error(Cat(user, ": not applied: ", dir,
                     " does not exist to install the hook in (mount the host's ", dir,
                     " at the same path: images/components/memlock); its containers keep the "
                     "runtime's RLIMIT_MEMLOCK"));
    }
    return "";
  }
  if (auto s = cdi::InstallMemlockHook(cdi::BundledMemlockHook(), path); !s.ok()) {
    log::Error(Cat(user.empty() ? std::string("memlock") : user,
                   ": the hook is not installed: ", std::string(s.message()),
                   user.empty() ? ""
                                : "; its containers keep the "
                                  "runtime's RLIMIT_MEMLOCK"));
    return "";
  }
  log::Info(Cat("memlock hook installed at ", path));
  // Installed is not runnable: a noexec mount fails every container of the pool (H5).
  if (const std::string why = cdi::MemlockHookProblem(path); !why.empty()) {
    log::Error(Cat(user.empty() ? std::string("memlock") : user, ": ", why));
  }
  return path;
}

int ValidateForUs(const cli::Options& opts);

// `validate --go-compatible`: the Go plugin's and network-operator's webhook's reading of
// the file (config/go_compat.h); true when both accept it as we read it.
bool GoCompatible(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;  // said above
  const std::optional<std::string> text = fd::ReadFile(path, config::kMaxConfigBytes);
  if (!text) return false;
  const auto problems = config::GoCompatProblems(*text);
  for (const auto& p : problems) Say(p);
  if (problems.empty()) {
    std::printf("%s: the Go plugin and network-operator's webhook accept it as written\n",
                path.c_str());
  } else {
    std::fprintf(stderr, "%s: not safe for a rollback to the Go plugin (%zu problem(s))\n",
                 path.c_str(), problems.size());
  }
  return problems.empty();
}

int RunValidate(const cli::Options& opts) {
  const int ours = ValidateForUs(opts);
  const bool go_ok = !opts.go_compatible || GoCompatible(opts.config_file);
  return ours == 0 && go_ok ? 0 : 1;
}

int ValidateForUs(const cli::Options& opts) {
  auto loaded = config::LoadConfigFile(opts.config_file, ModeChecks(opts));
  if (!loaded.ok()) {
    Say(std::string(loaded.status().message()));
    std::fprintf(stderr, "%s: invalid; nothing would start\n", opts.config_file.c_str());
    return 1;
  }
  for (const auto& w : loaded->warnings) Say(w, "warning: ");
  for (const auto& w : MemlockNotApplied(opts, *loaded)) Say(w, "warning: ");
  const config::Config& c = loaded->config;
  if (!loaded->skipped.empty()) {
    // The same entries a start skips: the daemon runs the same checks (main below).
    for (const auto& entry : loaded->skipped) {
      for (const auto& p : entry.problems) Say(p);
    }
    for (const auto& entry : loaded->skipped) {
      Say(Cat(entry.Label(), " would be skipped at start; the other entries would serve"));
    }
    std::fprintf(stderr, "%s: invalid (%zu of %zu entries)\n", opts.config_file.c_str(),
                 loaded->skipped.size(), loaded->skipped.size() + c.resources.size());
    return 1;
  }
  std::printf("%s: valid; %zu resource(s), periodic rescan %s\n", opts.config_file.c_str(),
              c.resources.size(),
              c.periodic_update_interval_seconds == 0
                  ? "off"
                  : Cat("every ", c.periodic_update_interval_seconds, " s").c_str());
  for (const auto& rc : c.resources) {
    std::string extras;
    for (config::EnvHint hint : rc.env_hints) {
      Append(extras, extras.empty() ? "; env hints: " : ", ", config::EnvHintName(hint));
    }
    if (rc.skip_unusable) Append(extras, "; functions that cannot serve a pod left out");
    if (rc.PerHcaDevices()) {
      std::printf(
          "  %s: deviceModel perHca, %lld device(s) per HCA (IDs <PCI address>-<share>)%s\n",
          rc.FullName().c_str(), static_cast<long long>(rc.rdma_hca_max), extras.c_str());
    } else {
      std::printf("  %s: %lld slot(s)%s\n", rc.FullName().c_str(),
                  static_cast<long long>(rc.rdma_hca_max), extras.c_str());
    }
  }
  return 0;
}

// `discover`: what this node has and where it would land, without serving anything.
int RunDiscover(const cli::Options& opts) {
  config::Config config;
  report::ConfigFindings findings;
  if (auto loaded = config::LoadConfigFile(opts.config_file, ModeChecks(opts)); loaded.ok()) {
    config = loaded->config;
    findings.skipped = loaded->skipped;
    findings.problems = loaded->warnings;
    for (auto& line : MemlockNotApplied(opts, *loaded))
      findings.problems.push_back(std::move(line));
  } else {
    findings.problems.push_back(Cat(std::string(loaded.status().message()),
                                    " (pools not shown: fix the config or pass --config-file)"));
    Say(findings.problems.back());
  }
  const sysfs::NodeInventory inventory = sysfs::Scanner(opts.sysfs_root, opts.dev_root).Scan();
  const std::string out = opts.output == "json"
                              ? report::DiscoverJson(inventory, config, findings)
                              : report::DiscoverTable(inventory, config, findings);
  std::fputs(out.c_str(), stdout);
  return 0;
}

// The DaemonSet's service account in images/overlays/dra (the admission policy matches it).
constexpr const char* kServiceAccount = "rdma-shared-dp";

// `render`: the DRA objects for the config's DRA resources; the config must be fully valid.
int RunRender(const cli::Options& opts) {
  auto loaded = config::LoadConfigFile(opts.config_file);
  if (!loaded.ok()) {
    Say(std::string(loaded.status().message()));
    std::fprintf(stderr, "%s: invalid; nothing rendered\n", opts.config_file.c_str());
    return 1;
  }
  for (const auto& w : loaded->warnings) Say(w, "warning: ");
  bool invalid = false;
  for (const auto& entry : loaded->skipped) {
    for (const auto& p : entry.problems) Say(p);
    invalid = true;
  }
  // Flag values are echoed quoted (QuotedExcerpt): a newline in one must not break the line.
  const std::string driver_problem = config::DnsSubdomainProblem(opts.dra_driver_name);
  if (!driver_problem.empty()) {
    std::fprintf(stderr, "-dra-driver-name: %s %s (e.g. rdma.example.com)\n",
                 QuotedExcerpt(opts.dra_driver_name).c_str(), driver_problem.c_str());
    invalid = true;
  }
  if (!opts.render_namespace.empty()) {
    if (const std::string why = config::DnsLabelProblem(opts.render_namespace); !why.empty()) {
      std::fprintf(stderr, "-namespace: %s %s\n", QuotedExcerpt(opts.render_namespace).c_str(),
                   why.c_str());
      invalid = true;
    }
  }
  // The GPU + HCA template names this class: an invalid name would be applied and then
  // never allocate.
  if (opts.gpu_device_class != "none") {
    if (const std::string why = config::DnsSubdomainProblem(opts.gpu_device_class); !why.empty()) {
      std::fprintf(stderr,
                   "-gpu-device-class: %s %s (a DeviceClass name, e.g. gpu.nvidia.com; none: "
                   "no GPU + HCA template)\n",
                   QuotedExcerpt(opts.gpu_device_class).c_str(), why.c_str());
      invalid = true;
    }
  }
  // Each DeviceClass is named <resourceName as a DNS label>.<driver>: both parts valid, the
  // whole can still pass the 253 characters of a Kubernetes name (63 + 1 + 253 = 317).
  for (size_t i = 0; driver_problem.empty() && i < loaded->config.resources.size(); ++i) {
    const config::ResourceConfig& rc = loaded->config.resources[i];
    if (rc.frontend != config::Frontend::kDra) continue;
    const std::string name = dra::DeviceClassName(rc, opts.dra_driver_name);
    if (const std::string why = config::DnsSubdomainProblem(name); !why.empty()) {
      const size_t index = i < loaded->indices.size() ? loaded->indices[i] : i;
      std::fprintf(stderr,
                   "-dra-driver-name: the DeviceClass name %s of configList[%zu] (%s): %s; "
                   "shorten --dra-driver-name or the resourceName\n",
                   QuotedExcerpt(name).c_str(), index, rc.resource_name.c_str(), why.c_str());
      invalid = true;
    }
  }
  for (const auto& p : dra::ClassNameProblems(loaded->config, opts.dra_driver_name)) {
    std::fprintf(stderr, "%s\n", p.c_str());
    invalid = true;
  }
  if (opts.extended_resource_name) {
    for (const auto& p : dra::ExtendedResourceProblems(loaded->config, loaded->indices)) {
      std::fprintf(stderr, "%s\n", p.c_str());
      invalid = true;
    }
  }
  if (invalid) return 1;
  dra::ClassOptions options;
  options.driver = opts.dra_driver_name;
  options.extended_resource = opts.extended_resource_name;
  options.claim_namespace = opts.render_namespace;
  if (opts.gpu_device_class != "none") options.gpu_device_class = opts.gpu_device_class;
  std::vector<nlohmann::json> objects = dra::RenderDeviceClasses(loaded->config, options);
  if (objects.empty()) {
    std::fprintf(stderr,
                 "%s: no configList entry has \"frontend\": \"dra\"; nothing to render "
                 "(render prints the DRA objects of the entries served through DRA)\n",
                 opts.config_file.c_str());
    return 1;
  }
  for (auto& o : dra::RenderAdmissionPolicy(opts.dra_driver_name, kServiceAccount)) {
    objects.push_back(std::move(o));
  }
  std::fputs(dra::ToYamlDocuments(objects).c_str(), stdout);
  return 0;
}

// The RDMADP_* names in this process's environment (any case), for ParseFlags to warn about
// the ones no flag reads: a misspelled RDMADP_DEVROOT used to be ignored without a word.
std::vector<std::string> RdmadpEnvNames() {
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::string_view name = text.substr(0, text.find('='));
    if (cli::IsRdmadpEnvName(name)) names.emplace_back(name);
  }
  return names;
}

// RDMAUnused Events (docs/observability.md): written while some entry uses DRA (whose RBAC
// has them) or with --rdma-unused-events, to the API server the DRA front end uses. Said at
// start when asked for and impossible, never silently off.
observe::ObserverOptions WithUnusedEvents(observe::ObserverOptions use, const cli::Options& opts,
                                          const config::LoadedConfig& loaded, kube::ApiConfig api) {
  const bool dra = std::any_of(
      loaded.config.resources.begin(), loaded.config.resources.end(),
      [](const config::ResourceConfig& rc) { return rc.frontend == config::Frontend::kDra; });
  if (!opts.rdma_unused_events && !dra) return use;
  if (opts.rdma_usage_interval_seconds == 0) {
    if (opts.rdma_unused_events) {
      log::Warn("--rdma-unused-events writes nothing without --rdma-usage-interval");
    }
    return use;
  }
  if (api.server.empty()) {
    log::Warn(
        "RDMAUnused Events are not written: no API server (--kube-api-server, or "
        "KUBERNETES_SERVICE_HOST as in every pod); the metrics and the log still say it");
    return use;
  }
  use.events_api = [api]() -> absl::StatusOr<std::unique_ptr<kube::ApiTransport>> {
    auto client = kube::RestClient::Create(api);
    if (!client.ok()) return client.status();
    return std::unique_ptr<kube::ApiTransport>(std::move(*client));
  };
  log::Info(Cat("RDMAUnused Events go to ", api.server, " (events.k8s.io/v1, as ",
                use.node_name.empty() ? std::string("this host") : use.node_name, ")"));
  return use;
}

}  // namespace

int main(int argc, char** argv) {
  // Block lifecycle signals before any thread exists, so every thread inherits the mask
  // and only the event loop's signalfd receives them, even during start-up.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGQUIT, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  // One malloc arena unless the operator chose otherwise (malloc_setup.h).
  loop::SetUpMalloc();
  // Backup polling and Abseil's deadlock detector off: each costs wake-ups or memory while
  // idle (grpc_runtime.h). Before gRPC starts or threads exist.
  rpc::PrepareGrpcRuntime();

  const std::string program = argc > 0 ? argv[0] : "k8s-rdma-shared-dp";
  std::vector<std::string_view> args(argv + 1, argv + argc);
  auto parsed = cli::ParseFlags(
      args,
      [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
      },
      RdmadpEnvNames());
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n%s", std::string(parsed.status().message()).c_str(),
                 cli::Usage(program).c_str());
    return 2;
  }
  const cli::Options& opts = *parsed;
  if (opts.command == cli::Command::kHelp) {
    std::fputs(cli::Usage(program).c_str(), stdout);
    return 0;
  }
  if (opts.command == cli::Command::kVersion) {
    std::printf("k8s-rdma-shared-dp version:%s, commit:%s, date:%s\n", RDMADP_VERSION,
                RDMADP_COMMIT, RDMADP_DATE);
    return 0;
  }
  // The flags' warnings (RDMADP_* names no flag reads), once: on stderr for a command, in
  // the log (its format) for the daemon.
  if (opts.command != cli::Command::kRun) {
    for (const auto& w : opts.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  if (opts.command == cli::Command::kValidate) return RunValidate(opts);
  if (opts.command == cli::Command::kDiscover) return RunDiscover(opts);
  if (opts.command == cli::Command::kRender) return RunRender(opts);
  if (opts.command == cli::Command::kPods) return RunPods(opts);
  if (opts.command == cli::Command::kRemoveStaleResources) return RunRemoveStaleResources(opts);
  log::SetLevel(ParseLevel(opts.log_level));
  log::SetFormat(opts.log_format == "json" ? log::Format::kJson : log::Format::kText);
  log::Info(Cat("starting k8s-rdma-shared-dp version ", RDMADP_VERSION, " (", RDMADP_COMMIT, ")"));
  for (const auto& w : opts.warnings) log::Warn(w);

  const char* node_env = std::getenv("NODE_NAME");
  const std::string node_name =
      !opts.node_name.empty() ? opts.node_name : (node_env != nullptr ? node_env : "");
  // Each front end's own options; the manager keeps only its own.
  deviceplugin::FrontEndOptions dp{
      .registration_mode = opts.registration_mode,
      .auto_detect_timeout = std::chrono::seconds(opts.auto_detect_timeout_seconds),
      .use_cdi = opts.use_cdi,
      .cdi_spec_dir = opts.cdi_spec_dir,
      .topology = opts.topology};
  dra::FrontEndOptions dra{.driver = opts.dra_driver_name,
                           .node_name = node_name,
                           .kube_api_server = opts.kube_api_server,
                           .kube_ca_file = opts.kube_ca_file,
                           .kube_token_file = opts.kube_token_file,
                           .user_agent = Cat("k8s-rdma-shared-dp/", RDMADP_VERSION),
                           .cdi_spec_dir = opts.cdi_spec_dir,
                           .health_timeout = std::chrono::seconds(opts.dra_health_timeout_seconds)};
  if (dra.kube_api_server.empty()) {
    if (auto api = kube::InClusterConfig([](const char* n) { return std::getenv(n); }, "", "");
        api.ok()) {
      dra.kube_api_server = api->server;
    }
  }
  // The config is admitted before anything touches the host (the netns check, the memlock
  // hook), with the front ends' own checks: the functions their Problems() run, which the
  // manager asks at every reload. An entry with a problem is skipped; when none is left,
  // nothing starts.
  auto loaded = config::LoadConfigFile(
      opts.config_file, [&](const config::Config& c, const std::vector<size_t>& indices) {
        auto problems = deviceplugin::ConfigProblems(dp, opts.kubelet_root_dir, c, indices);
        for (auto& p : dra::ConfigProblems(dra, opts.kubelet_root_dir, c, indices)) {
          problems.push_back(std::move(p));
        }
        return problems;
      });
  if (!loaded.ok()) {
    log::Error(std::string(loaded.status().message()));
    log::Error(Cat("invalid config ", opts.config_file, "; nothing was started"));
    return 1;
  }
  for (const auto& w : loaded->warnings) log::Warn(w);
  for (const auto& entry : loaded->skipped) {
    for (const auto& p : entry.problems) log::Error(p);
    log::Error(Cat(entry.Label(), " skipped: it is invalid; the other ",
                   loaded->config.resources.size(),
                   " resource(s) start (/readyz stays 503 until the ConfigMap is fixed)"));
  }
  if (!CheckRdmaNetnsMode()) return 1;

  RaiseFdLimit();
  dp.memlock_hook = dra.memlock_hook = InstallMemlockHook(opts, *loaded);
  if (opts.use_cdi) log::Info(Cat("CDI enabled: specs in ", opts.cdi_spec_dir));
  manager::ManagerOptions mo{
      .config_file = opts.config_file,
      .kubelet_root_dir = opts.kubelet_root_dir,
      .sysfs_root = opts.sysfs_root,
      .dev_root = opts.dev_root,
      .link_up = opts.link_up,
      .watch_config = opts.watch_config,
      .metrics_address = opts.metrics_address,
      .health_address = opts.health_address,
      .version = RDMADP_VERSION,
      .config_error_interval = std::chrono::seconds(opts.config_error_interval_seconds)};
  const observe::ObserverOptions use_options =
      WithUnusedEvents(UseObserverOptions(opts, node_name), opts, *loaded,
                       kube::ApiConfig{dra.kube_api_server, opts.kube_ca_file, opts.kube_token_file,
                                       dra.user_agent});
  auto loop = loop::EventLoop::Create();
  if (!loop.ok()) {
    log::Error(Cat("cannot set up the event loop: ", std::string(loop.status().message())));
    return 1;
  }
  manager::Manager manager(
      std::move(*loop), std::move(mo),
      [&](frontend::Host& host) {
        std::vector<std::unique_ptr<frontend::FrontEnd>> front_ends;
        front_ends.push_back(std::make_unique<deviceplugin::DevicePluginFrontEnd>(host, dp));
        front_ends.push_back(std::make_unique<dra::DraFrontEnd>(host, dra));
        if (opts.rdma_usage_interval_seconds > 0) {
          front_ends.push_back(std::make_unique<observe::RdmaUseObserver>(host, use_options));
        }
        return front_ends;
      },
      std::move(loaded->config), std::move(loaded->skipped));
  return manager.Run();
}
