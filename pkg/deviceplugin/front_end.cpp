// The device-plugin front end: applying the config and scans, kubelet-directory events, the
// metrics view, shutdown.
#include "pkg/deviceplugin/front_end.h"

#include "pkg/cdi/cdi_spec.h"
#include "pkg/cdi/memlock_hook.h"
#include "pkg/deviceplugin/allocated_ids.h"
#include "pkg/deviceplugin/front_end_internal.h"
#include "pkg/fd/files.h"
#include "pkg/log/log.h"
#include "pkg/pool/pod_env.h"
#include "pkg/pool/selector.h"
#include "pkg/rpc/socket_path.h"
#include "pkg/text/cat.h"
#include "pkg/usage/pod_resources.h"

namespace rdmadp::deviceplugin {
namespace {

// Where sockets go in `mode` under the kubelet root (auto: either).
std::vector<std::string> SocketDirs(const std::string& kubelet_root_dir,
                                    frontend::RegistrationMode mode) {
  std::vector<std::string> dirs;
  if (mode != frontend::RegistrationMode::kWatcher) {
    dirs.push_back(kubelet_root_dir + "/device-plugins");
  }
  if (mode != frontend::RegistrationMode::kKubelet) {
    dirs.push_back(kubelet_root_dir + "/plugins_registry");
  }
  return dirs;
}

std::string Describe(const pool::PoolSnapshot& snap) {
  const auto& adv = snap.advertised();
  std::vector<std::string> hcas;
  for (const auto& hca : snap.hcas()) {
    const sysfs::PciFunction& fn = hca.function;
    hcas.push_back(fn.if_name.empty() ? fn.address : Cat(fn.address, "/", fn.if_name));
  }
  std::string out = Cat(snap.resource().FullName(), ": ", hcas.size(), " HCA(s)");
  if (!hcas.empty()) Append(out, " [", Join(hcas, " "), "]");
  if (adv.per_hca) {
    Append(out, ", perHca: ", adv.shares_per_hca, " device(s) per HCA, ", adv.healthy_slots, " of ",
           adv.slots, " Healthy");
  } else {
    Append(out, ", ", adv.slots, " slot(s), ", adv.healthy ? "Healthy" : "Unhealthy");
  }
  Append(out, ", ", adv.device_paths.size(), " device node(s)");
  if (!adv.numa_nodes.empty()) Append(out, ", NUMA [", Join(adv.numa_nodes, ","), "]");
  if (snap.topology_dropped()) Append(out, " (topology dropped: message over 4 MiB)");
  return out;
}

// Why no pod can get this pool now, worded to lead to the fix ("" when one can): an empty
// pool names the functions its selectors match that are not usable, an unhealthy one each
// HCA's port states.
std::string Unusable(const pool::PoolSnapshot& snap, const sysfs::NodeInventory& inventory) {
  std::vector<std::string> why;
  if (snap.hcas().empty()) {
    for (const auto& fn : inventory.functions) {
      if (!fn.rdma_capable && pool::Matches(snap.resource().selectors, fn)) {
        why.push_back(Cat(fn.address, ": ", fn.not_rdma_reason));
      }
    }
    if (why.empty()) {
      return "no RDMA device matches its selectors; registering with 0 devices (run with "
             "--log-level=debug to see what was found)";
    }
    return Cat(why.size(), " function(s) match its selectors but none can serve a pod (",
               Join(why, "; "), "); registering with 0 devices");
  }
  if (snap.advertised().healthy) return "";
  for (const auto& hca : snap.hcas()) {
    why.push_back(Cat(hca.function.address, ": ", hca.health_reason));
  }
  return Cat("every HCA is unhealthy, so the kubelet admits no pod (", Join(why, "; "), ")");
}

// A pool too large for its _INFO variable (pool/pod_env.h) is said when _INFO goes and when
// it is back, not at every rescan that rebuilds the snapshot (a port changing state in a
// 300-HCA pool would repeat it): `said` is whether it is out as last said.
void SayIfInfoLeftOut(const pool::PoolSnapshot& snap, bool& said) {
  const bool left_out = !snap.info_left_out().empty();
  if (left_out == said) return;
  said = left_out;
  const std::string name = snap.resource().FullName();  // outlives the fields that view it
  const log::Fields fields{.resource = name, .hca = {}, .event = "pool"};
  if (left_out) {
    log::Warn(snap.info_left_out(), fields);
  } else {
    log::Info(
        Cat(name, ": ", pool::PciDeviceEnvName(name), "_INFO is in the pods' environment again"),
        fields);
  }
}

// A RoCE variable the entry asks for and the pods do not get (pool/pod_env.h RoceEnv) is
// said once when it goes missing (a line naming each port's value) and once when every one
// is back, not at each rescan.
// perHca: fewer shares advertised than asked (the kubelet's message limit), said when it
// starts and when it changes, not at each rescan.
void SayIfSharesCut(const pool::PoolSnapshot& snap, std::string& said) {
  if (snap.shares_cut() == said) return;
  said = snap.shares_cut();
  if (!said.empty()) {
    const std::string name = snap.resource().FullName();
    log::Warn(said, {.resource = name, .hca = {}, .event = "pool"});
  }
}

void SayIfRoceNotSet(const pool::PoolSnapshot& snap, std::vector<std::string>& said) {
  if (snap.roce_not_set() == said) return;
  const std::string name = snap.resource().FullName();
  const log::Fields fields{.resource = name, .hca = {}, .event = "pool"};
  for (const auto& line : snap.roce_not_set()) {
    if (std::find(said.begin(), said.end(), line) == said.end()) log::Warn(line, fields);
  }
  if (snap.roce_not_set().empty()) {
    log::Info(Cat(name, ": the RoCE variables it asks for are in the pods' environment again"),
              fields);
  }
  said = snap.roce_not_set();
}

}  // namespace

DevicePluginFrontEnd::DevicePluginFrontEnd(frontend::Host& host, FrontEndOptions options)
    : host_(host), options_(std::move(options)) {}

DevicePluginFrontEnd::~DevicePluginFrontEnd() { Stop(); }

std::vector<std::string> DevicePluginFrontEnd::Problems(const config::Config& config,
                                                        const std::vector<size_t>& indices) const {
  loop::AssertOnLoop(host_.Loop());
  std::vector<std::string> problems = ConfigProblems(options_, host_.Dirs().root, config, indices);
  for (size_t i = 0; i < config.resources.size(); ++i) {
    const config::ResourceConfig& rc = config.resources[i];
    auto it = resources_.find(rc.resource_name);
    if (rc.frontend != config::Frontend::kDevicePlugin || it == resources_.end() ||
        it->second->config.PerHcaDevices() == rc.PerHcaDevices()) {
      continue;
    }
    if (std::string why = ModelSwitchProblem(it->second->config, rc); !why.empty()) {
      problems.push_back(
          Cat("config: configList[", indices.empty() ? i : indices[i], "].deviceModel: ", why));
    }
  }
  return problems;
}

std::string DevicePluginFrontEnd::CheckpointPath() const {
  return Cat(host_.Dirs().DevicePlugins(), "/", kKubeletCheckpointFile);
}

std::string DevicePluginFrontEnd::ModelSwitchProblem(const config::ResourceConfig& running,
                                                     const config::ResourceConfig& wanted) const {
  const std::string path = CheckpointPath();
  const std::string name = running.FullName();
  auto held = ReadCheckpointAllocations(path, name);
  const std::string change = Cat("switching ", name, " from \"", running.ModelName(), "\" to \"",
                                 wanted.ModelName(), "\" is refused");
  constexpr std::string_view kKept = "they would change meaning; the running version keeps serving";
  if (!held.ok()) {
    return Cat(change, ": which of its devices the kubelet holds is not known (",
               std::string(held.status().message()), "); the running version keeps serving");
  }
  if (held->ids.empty()) return "";
  // The checkpoint keeps a finished pod's IDs until the kubelet next writes it (an
  // allocation, a device list update), which a drained node may not do for a long time: the
  // pod-resources API says which containers hold them now. One bounded call, on a reload
  // that switches a model only.
  const std::string socket = host_.Dirs().root + "/pod-resources/kubelet.sock";
  std::string unanswered;
  if (fd::PathExists(socket)) {
    auto list =
        usage::ListOurAllocations(socket, kPodResourcesTimeout, {{name}, ""}, kMaxHoldersNamed + 1);
    if (list.ok()) {
      std::vector<std::string> holders;
      for (const auto& c : list->containers) {
        auto it = c.device_ids.find(name);
        if (it != c.device_ids.end() && !it->second.empty()) {
          holders.push_back(Cat(c.pod_namespace, "/", c.pod, "/", c.container));
        }
      }
      if (holders.empty()) return "";
      if (holders.size() > kMaxHoldersNamed) holders.back() = "...";
      return Cat(change, " while containers hold its devices (", Join(holders, ", "), "): ", kKept,
                 ". Delete those pods (or drain the node), then reload");
    }
    unanswered = Cat("; the kubelet's pod-resources API did not say which of them still run (",
                     std::string(list.status().message()), ")");
  } else {
    unanswered =
        Cat("; a finished pod's IDs stay there until the kubelet next allocates a "
            "device, and mounting its pod-resources directory (images/components/usage) "
            "lets the plugin count only running pods");
  }
  return Cat(change, " while the kubelet's checkpoint holds ", held->ids.size(),
             " of its device IDs for ", held->pod_uids.size(), " pod(s) (", path, "): ", kKept,
             ". Delete those pods (or drain the node), then reload", unanswered);
}

std::string DevicePluginFrontEnd::OtherModelHeld(const config::ResourceConfig& rc) const {
  auto held = ReadCheckpointAllocations(CheckpointPath(), rc.FullName());
  if (!held.ok()) return "";  // nothing known to say; a switch on reload says why
  const bool per_hca = rc.PerHcaDevices();
  const auto other = std::count_if(held->ids.begin(), held->ids.end(), [&](const std::string& id) {
    return pool::LooksPerHca(id) != per_hca;
  });
  if (other == 0) return "";
  return Cat(rc.FullName(), ": the kubelet's checkpoint holds ", other, " device ID(s) of the \"",
             per_hca ? "slots" : "perHca", "\" model, given before deviceModel became \"",
             rc.ModelName(), "\" across a restart: those pods keep ",
             per_hca ? "the whole pool" : "their HCAs", " while new pods get ",
             per_hca ? "their IDs' HCAs only" : "the whole pool", " (",
             "docs/per-hca-devices.md, \"Switching an existing entry between models\")");
}

std::string DevicePluginFrontEnd::SocketDir() const {
  return WatcherMode() ? host_.Dirs().PluginsRegistry() : host_.Dirs().DevicePlugins();
}

void DevicePluginFrontEnd::ChooseMode() {
  mode_ = options_.registration_mode;
  if (mode_ == frontend::RegistrationMode::kAuto) {
    // Decided by what the kubelet does, never by whether a directory exists: a missing
    // plugins_registry only rules the watcher out.
    if (fd::PathExists(host_.Dirs().PluginsRegistry())) {
      mode_ = frontend::RegistrationMode::kWatcher;
      auto_deciding_ = true;
      auto_timer_ = host_.Loop().NewAlarm([this] {
        DecideAutoMode(frontend::RegistrationMode::kKubelet,
                       Cat("the kubelet's plugin watcher did not call GetInfo within ",
                           options_.auto_detect_timeout.count(), " ms"));
      });
      auto_timer_->ArmOnce(options_.auto_detect_timeout);
    } else {
      mode_ = frontend::RegistrationMode::kKubelet;
      log::Info(
          Cat("auto: ", host_.Dirs().PluginsRegistry(), " does not exist; using kubelet.sock"));
    }
  }
  log::Info(Cat("instance ", host_.InstanceId(), ": registration mode ",
                frontend::RegistrationModeName(options_.registration_mode),
                auto_deciding_ ? " (trying watcher)" : "", ", sockets in ", SocketDir()));
}

void DevicePluginFrontEnd::RemoveDeadSockets() const {
  // <resourceName>-<8 hex>.sock, for a configured resource.
  rpc::RemoveDeadSockets(
      SocketDir(), host_.InstanceId(),
      [this](const std::string& file) -> std::optional<std::string> {
        if (!file.ends_with(".sock") || file.size() < 14) return std::nullopt;
        const std::string stem = file.substr(0, file.size() - 5);
        const auto dash = stem.rfind('-');
        if (dash == std::string::npos || configured_.count(stem.substr(0, dash)) == 0) {
          return std::nullopt;
        }
        return stem.substr(dash + 1);
      });
}

// What the kubelet sees of a resource (its name, socket, slots, selectors) is the same: a
// change of what its pods are told (envHints) or of which functions it leaves out
// (skipUnusable) is a new snapshot on the running server, not a re-registration.
namespace {
// An Allocate answer has devices, mounts, env and annotations, no hook and no rlimit.
constexpr std::string_view kMemlockNeedsCdi =
    "memlock needs CDI (--use-cdi); with DeviceSpecs its containers keep the runtime's "
    "RLIMIT_MEMLOCK";

// Said when an entry starts or its memlock changes: a memlock that is not applied is never
// silent.
void WarnIfMemlockNotApplied(const config::ResourceConfig& rc, const FrontEndOptions& options) {
  if (rc.memlock && !options.use_cdi) {
    log::Warn(Cat(rc.FullName(), ": ", kMemlockNeedsCdi),
              {.resource = rc.FullName(), .hca = {}, .event = "config"});
  } else if (rc.memlock) {
    // The hook checked again (H5 at 050f44e: one gone or on a noexec mount was never said).
    if (const std::string why = cdi::MemlockHookProblem(options.memlock_hook); !why.empty()) {
      log::Warn(Cat(rc.FullName(), ": memlock is not applied: ", why),
                {.resource = rc.FullName(), .hca = {}, .event = "config"});
    }
  }
}

bool SameServer(config::ResourceConfig a, const config::ResourceConfig& b) {
  a.env_hints = b.env_hints;
  a.skip_unusable = b.skip_unusable;
  a.memlock = b.memlock;  // the CDI spec's content, rewritten by SyncCdiSpec
  return a == b;
}
}  // namespace

void DevicePluginFrontEnd::Apply(const config::Config& config,
                                 const sysfs::NodeInventory& inventory, std::string_view reason) {
  loop::AssertOnLoop(host_.Loop());
  configured_.clear();
  for (const auto& rc : config.resources) {
    if (rc.frontend == config::Frontend::kDevicePlugin) configured_.insert(rc.resource_name);
  }
  if (!started_) {
    started_ = true;
    ChooseMode();
    RemoveDeadSockets();
  }
  for (const auto& rc : config.resources) {
    if (rc.frontend != config::Frontend::kDevicePlugin) continue;
    auto it = resources_.find(rc.resource_name);
    if (it != resources_.end() && SameServer(it->second->config, rc)) {  // keeps its streams
      Resource& res = *it->second;
      if (res.config.memlock != rc.memlock) WarnIfMemlockNotApplied(rc, options_);
      res.config = rc;  // envHints, skipUnusable, memlock: the next snapshot's content only
      res.snapshot = BuildSnapshot(res, inventory);
      SyncCdiSpec(res);  // before publishing, so Allocate never names a device the spec lacks
      if (res.server && res.server->Publish(Served(res))) {
        log::Info(Cat("pool changed (", reason, "): ", Describe(*res.snapshot)),
                  {.resource = rc.FullName(), .hca = {}, .event = "pool"});
      }
      WarnIfUnusable(res, inventory);
      SayIfInfoLeftOut(*res.snapshot, res.info_left_out);
      SayIfRoceNotSet(*res.snapshot, res.roce_not_set);
      SayIfSharesCut(*res.snapshot, res.shares_cut);
      if (!res.other_model_held.empty()) {  // read again until those pods are gone
        res.other_model_held = OtherModelHeld(rc);
        if (res.other_model_held.empty()) {
          log::Info(Cat(rc.FullName(), ": the kubelet holds no ID of the other deviceModel now"));
        }
      }
      continue;
    }
    if (it != resources_.end()) {
      log::Info(Cat(rc.FullName(), ": config changed; restarting its server"));
      StopResource(it, cdi::SpecFileName(it->second->config) == cdi::SpecFileName(rc));
    }
    StartResource(rc, inventory);
  }
  for (auto it = resources_.begin(); it != resources_.end();) {
    if (configured_.count(it->first) == 0) {
      log::Info(Cat(it->second->config.FullName(), ": removed from the config; stopping"));
      StopResource(it++);
    } else {
      ++it;
    }
  }
}

pool::SnapshotPtr DevicePluginFrontEnd::BuildSnapshot(const Resource& res,
                                                      const sysfs::NodeInventory& inventory) const {
  return pool::PoolSnapshot::Build(res.config, inventory,
                                   options_.use_cdi ? &res.cdi_naming : nullptr, res.snapshot,
                                   options_.topology);
}

pool::SnapshotPtr DevicePluginFrontEnd::Served(const Resource& res) {
  return res.cdi_problem.empty() ? res.snapshot : pool::PoolSnapshot::AllUnhealthy(res.snapshot);
}

void DevicePluginFrontEnd::StartResource(const config::ResourceConfig& rc,
                                         const sysfs::NodeInventory& inventory) {
  auto res = std::make_unique<Resource>();
  res->config = rc;
  res->cdi_naming = {cdi::Kind(rc), cdi::AnnotationKey(rc)};
  res->snapshot = BuildSnapshot(*res, inventory);
  SyncCdiSpec(*res);  // before the server exists: the spec precedes any ListAndWatch answer
  log::Info(Describe(*res->snapshot), {.resource = rc.FullName(), .hca = {}, .event = "pool"});
  WarnIfMemlockNotApplied(rc, options_);
  WarnIfUnusable(*res, inventory);
  SayIfInfoLeftOut(*res->snapshot, res->info_left_out);
  SayIfRoceNotSet(*res->snapshot, res->roce_not_set);
  SayIfSharesCut(*res->snapshot, res->shares_cut);
  res->other_model_held = OtherModelHeld(rc);
  if (!res->other_model_held.empty()) {
    log::Warn(res->other_model_held, {.resource = rc.FullName(), .hca = {}, .event = "config"});
  }
  res->fsm = std::make_unique<lifecycle::RegistrationFsm>(rc.FullName(), &host_.Tokens());
  const std::string name = rc.resource_name;
  res->timer =
      std::make_unique<frontend::RegistrationTimer>(host_.Loop(), [this, name](uint64_t token) {
        if (auto it = resources_.find(name); it != resources_.end()) {
          Drive(*it->second, lifecycle::Event::Timer(token));
        }
      });
  Resource& ref = *res;
  resources_[name] = std::move(res);
  Drive(ref, lifecycle::Event::Start(WatcherMode() ? lifecycle::Mode::kWatcher
                                                   : lifecycle::Mode::kKubelet));
}

void DevicePluginFrontEnd::WarnIfUnusable(Resource& res, const sysfs::NodeInventory& inventory) {
  std::string why = Unusable(*res.snapshot, inventory);
  if (why == res.unusable) return;                 // said already (or usable, as before)
  const std::string name = res.config.FullName();  // outlives the fields that view it
  const log::Fields fields{.resource = name, .hca = {}, .event = "pool"};
  if (!why.empty()) log::Warn(Cat(res.config.FullName(), ": ", why), fields);
  if (why.empty()) log::Info(Cat(res.config.FullName(), ": usable again"), fields);
  res.unusable = std::move(why);
}

void DevicePluginFrontEnd::StopResource(ResourceMap::iterator it, bool keep_spec) {
  Drive(*it->second, lifecycle::Event::Stop());  // our socket goes before we look for others
  if (!keep_spec) RemoveCdiSpec(*it->second);
  resources_.erase(it);
}

void DevicePluginFrontEnd::DropServer(Resource& res) {
  if (res.server) res.allocations_before += res.server->allocations();
  if (res.server) res.rejections_before += res.server->allocate_rejections();
  res.server.reset();
}

void DevicePluginFrontEnd::Stop() {
  loop::AssertOnLoop(host_.Loop());
  // Registrations first (they may be mid-RPC), then every server, which ends its streams and
  // removes our own sockets and nothing else.
  for (auto& [name, res] : resources_) res->registration.reset();
  while (!resources_.empty()) StopResource(resources_.begin());
  auto_timer_.reset();
  kubelet_channel_.reset();
}

void DevicePluginFrontEnd::OnKubeletEvent(const frontend::KubeletEvent& event) {
  loop::AssertOnLoop(host_.Loop());
  using Kind = frontend::KubeletEvent::Kind;
  switch (event.kind) {
    case Kind::kDirsAppeared:
      for (auto& [name, res] : resources_) {
        // What happened in a directory before its watch existed is found by looking: our
        // socket removed, kubelet.sock created (the machine looks at that one).
        if (res->server && !fd::PathExists(res->server->socket_path())) {
          Drive(*res, lifecycle::Event::OwnSocketDeleted());
        }
        Drive(*res, lifecycle::Event::SocketDirAppeared());
      }
      return;
    case Kind::kKubeletSocketCreated:
      if (!WatcherMode()) ++kubelet_restarts_;
      for (auto& [name, res] : resources_) Drive(*res, lifecycle::Event::KubeletSocketCreated());
      return;
    case Kind::kFileDeleted:
      break;
  }
  if (event.dir != SocketDir()) return;
  const std::string& file = event.file;
  for (auto& [rname, res] : resources_) {
    if (!res->server) continue;
    const std::string own = fd::BaseName(res->server->socket_path());
    if (own != file && file.starts_with(res->config.resource_name + "-") &&
        file.ends_with(".sock") &&
        file.find('-', res->config.resource_name.size() + 1) == std::string::npos) {
      // Another instance of this resource went (the old pod of a rolling update). The
      // kubelet's view is whatever list was written last, maybe that instance's (a v1.37
      // kubelet promotes the survivor without asking it again; a v1.24 one ignores the old
      // stream's end): ours is sent again, so the view becomes ours at once.
      log::Info(Cat(res->config.FullName(), ": another instance's socket ", file,
                    " went away; sending our device list again"));
      res->server->Resend();
      continue;
    }
    // Our own re-creation replaces the file too; only a socket that is still gone was lost.
    if (own != file || fd::PathExists(res->server->socket_path())) continue;
    Drive(*res, lifecycle::Event::OwnSocketDeleted());
  }
}

void DevicePluginFrontEnd::Collect(metrics::View& view) const {
  loop::AssertOnLoop(host_.Loop());
  view.registration_mode =
      auto_deciding_ ? "auto (deciding)" : std::string(frontend::RegistrationModeName(mode_));
  view.counters.kubelet_restarts += kubelet_restarts_;
  for (const auto& [name, res] : resources_) {
    metrics::ResourceView r;
    const auto& adv = res->snapshot->advertised();
    r.resource = res->config.FullName();
    r.hcas = static_cast<int64_t>(res->snapshot->hcas().size());
    r.slots = adv.slots;
    r.healthy_slots = res->cdi_problem.empty() ? adv.healthy_slots : 0;
    if (!res->snapshot->shares_cut().empty()) r.notes.push_back(res->snapshot->shares_cut());
    if (!res->other_model_held.empty()) r.notes.push_back(res->other_model_held);
    r.problem = res->cdi_problem;
    r.env_not_set = res->snapshot->roce_not_set();
    r.registered = res->fsm->registered();
    r.open_streams = res->server ? static_cast<int64_t>(res->server->open_streams()) : 0;
    r.allocations = res->allocations_before + (res->server ? res->server->allocations() : 0);
    r.registrations = res->fsm->registrations();
    r.registration_failures = res->fsm->registration_failures();
    r.socket_recreations = res->fsm->socket_recreations();
    r.serve_retries = res->fsm->serve_retries();
    r.register_retries = res->fsm->register_retries();
    r.allocate_rejections =
        res->rejections_before + (res->server ? res->server->allocate_rejections() : 0);
    view.resources.push_back(std::move(r));
    if (const auto& memlock = res->config.memlock) {
      view.memlock.push_back({res->config.FullName(), *memlock,
                              options_.use_cdi ? cdi::MemlockHookProblem(options_.memlock_hook)
                                               : std::string(kMemlockNeedsCdi)});
    }
  }
}

std::vector<std::string> ConfigProblems(const FrontEndOptions& options,
                                        const std::string& kubelet_root_dir,
                                        const config::Config& config,
                                        const std::vector<size_t>& indices) {
  auto problems = config::SocketPathProblems(
      config, SocketDirs(kubelet_root_dir, options.registration_mode), indices);
  if (options.use_cdi) {
    for (auto& p : cdi::KindProblems(config, indices)) problems.push_back(std::move(p));
  }
  return problems;
}

}  // namespace rdmadp::deviceplugin
