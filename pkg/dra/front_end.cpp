// The DRA front end: the config's DRA entries over the latest scan become one view, its CDI
// specs, its slices (through the publisher) and the health the kubelet is streamed.
#include "pkg/dra/front_end.h"

#include "pkg/cdi/memlock_hook.h"
#include "pkg/cdi/spec_files.h"
#include "pkg/dra/prepare/claim_metadata.h"
#include "pkg/fd/files.h"
#include "pkg/log/log.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {
namespace {

using std::chrono::milliseconds;

constexpr size_t kMaxHealthMessage = 1024;

void LogSlices(const DraView& view) {
  if (!log::Enabled(log::Level::kDebug)) return;
  for (const auto& pool : view.pools) {
    size_t devices = 0;
    for (const auto& s : pool.slices) devices += s["spec"]["devices"].size();
    log::Debug(Cat("DRA pool ", pool.pool_name, ": ", devices, " device(s) in ", pool.slices.size(),
                   " slice(s)"));
  }
}

}  // namespace

DraFrontEnd::DraFrontEnd(frontend::Host& host, FrontEndOptions options)
    : host_(host), options_(std::move(options)) {}

DraFrontEnd::~DraFrontEnd() { Stop(); }

std::vector<std::string> DraFrontEnd::Problems(const config::Config& config,
                                               const std::vector<size_t>& indices) const {
  return ConfigProblems(options_, host_.Dirs().root, config, indices);
}

void DraFrontEnd::Apply(const config::Config& config, const sysfs::NodeInventory& inventory,
                        std::string_view /*reason*/) {
  loop::AssertOnLoop(host_.Loop());
  std::vector<pool::PoolModel> pools;
  for (const auto& rc : config.resources) {
    if (rc.frontend == config::Frontend::kDra) pools.push_back(pool::SelectPool(rc, inventory));
  }
  if (pools.empty() && !created_) return;
  if (!created_) {
    created_ = true;
    if (options_.kube_api_server.empty()) {
      api_problem_ = "no API server configured (--kube-api-server)";
      host_.ReportProblem(log::Level::kError, "dra",
                          "DRA front end: no API server (KUBERNETES_SERVICE_HOST is not set and "
                          "--kube-api-server is empty): ResourceSlices are not published and "
                          "Prepare fails; run it in a pod or set --kube-api-server",
                          {.resource = options_.driver, .hca = {}, .event = "dra"});
    }
  }
  if (!publisher_ && !options_.kube_api_server.empty()) StartApi();
  pools_ = std::move(pools);
  Publish();
}

void DraFrontEnd::Publish() {
  loop::AssertOnLoop(host_.Loop());
  SliceContext ctx;
  ctx.driver = options_.driver;
  ctx.node_name = options_.node_name;
  ctx.memlock_hook = options_.memlock_hook;
  ctx.consumable_capacity = caps_ ? std::optional<bool>(caps_->consumable_capacity) : std::nullopt;
  ViewPtr view = RenderView(ctx);
  view = WriteCdiSpecs(std::move(view), ctx);
  shared_->set_view(view);  // what Prepare reads from now on: before any slice names a device of it
  // Claims' status first: once a slice of this view is written, their check is due.
  if (auto status = shared_->status()) status->SetView(view);
  if (publisher_) publisher_->Publish(view->pools, caps_);
  LogSlices(*view);
  ServeWhileWanted(!pools_.empty());
  PublishHealth();
}

DraFrontEnd::ViewPtr DraFrontEnd::RenderView(const SliceContext& ctx) {
  const std::vector<pool::PoolModel>& pools = pools_;
  auto view = std::make_shared<const DraView>(BuildDraView(pools, ctx));
  for (const auto& p : view->problems) {
    host_.ReportOnce(log::Level::kWarn, "config", p,
                     {.resource = options_.driver, .hca = {}, .event = "config"});
  }
  // A memlock that is not applied is never silent: the hook is checked again at every spec
  // write (H5 at 050f44e: one gone or on a noexec mount was never said).
  for (const auto& pool : pools) {
    if (!pool.resource.memlock) continue;
    const std::string why = cdi::MemlockHookProblem(options_.memlock_hook);
    if (why.empty()) continue;
    host_.ReportOnce(log::Level::kWarn, "config",
                     Cat(pool.resource.FullName(), ": memlock is not applied: ", why),
                     {.resource = pool.resource.FullName(), .hca = {}, .event = "config"});
  }
  for (const auto& f : view->fallbacks) {
    // Said once, not counted as an error: the pool serves its full count, as configured.
    if (!fallbacks_said_.insert(f.resource).second) continue;
    log::Warn(Cat("DRA: ", f.resource, " has deviceModel \"", config::DeviceModelName(f.configured),
                  "\" but this API server does not keep consumable capacity (feature gate "
                  "DRAConsumableCapacity, on by default from 1.36): publishing it as \"",
                  config::DeviceModelName(f.published),
                  "\" (rdmaHcaMax devices), which serves as many claims; enable the gate to "
                  "publish it as configured"),
              {.resource = f.resource, .hca = {}, .event = "dra"});
  }
  fallbacks_ = view->fallbacks;
  return view;
}

DraFrontEnd::ViewPtr DraFrontEnd::WriteCdiSpecs(ViewPtr view, SliceContext& ctx) {
  // Before any slice or Prepare names a device. An HCA whose spec cannot be written (a full
  // or read-only /var/run/cdi) would fail at container creation: it is published as
  // unhealthy (tainted, or left out where the server drops taints), its health stream says
  // why, and /readyz says not ready, until a rescan writes the spec (docs/reliability.md,
  // "Capacity and data").
  const std::map<std::string, std::string> unwritable = SyncCdiSpecs(*view);
  cdi_problem_.clear();
  if (unwritable.empty()) return view;
  std::vector<pool::PoolModel> marked = pools_;
  for (auto& pool : marked) {
    for (auto& hca : pool.hcas) {
      const auto it = unwritable.find(
          Cat("k8s-rdma-shared-dp_dra_", HcaDeviceName(hca.function.address), ".json"));
      if (it == unwritable.end()) continue;
      hca.healthy = false;
      hca.health_reason = it->second;
      ctx.cdi_unwritable.insert(hca.function.address);
      if (cdi_problem_.empty()) cdi_problem_ = it->second;
    }
  }
  return std::make_shared<const DraView>(BuildDraView(marked, ctx));
}

void DraFrontEnd::ServeWhileWanted(bool wanted) {
  if (wanted && !active_) {
    active_ = true;
    fsm_ = std::make_unique<lifecycle::RegistrationFsm>(Cat("DRA driver ", options_.driver),
                                                        &host_.Tokens(), /*expect_stream=*/false);
    timer_ = std::make_unique<frontend::RegistrationTimer>(
        host_.Loop(), [this](uint64_t token) { Drive(lifecycle::Event::Timer(token)); });
    heartbeat_ = host_.Loop().NewAlarm([this] { PublishHealth(); });
    // Well inside the timeout: a device not reported for that long turns "Unknown".
    heartbeat_->ArmPeriodic(std::chrono::duration_cast<milliseconds>(options_.health_timeout) / 3);
    Drive(lifecycle::Event::Start(lifecycle::Mode::kWatcher));
  } else if (!wanted && active_) {
    log::Info(Cat("DRA driver ", options_.driver,
                  ": no DRA entry left; deregistering and deleting "
                  "its ResourceSlices"));
    Drive(lifecycle::Event::Stop());
    active_ = false;
    heartbeat_.reset();
    timer_.reset();
    fsm_.reset();
  }
}

void DraFrontEnd::StartApi() {
  const kube::ApiConfig api{options_.kube_api_server, options_.kube_ca_file,
                            options_.kube_token_file, options_.user_agent};
  std::vector<std::shared_ptr<kube::RestClient>> clients;
  absl::Status claims = absl::OkStatus();
  for (int i = 0; i < kDraWorkers && claims.ok(); ++i) {
    auto client = kube::RestClient::Create(api);
    if (client.ok()) {
      clients.push_back(std::move(*client));
    } else {
      claims = client.status();
    }
  }
  PublisherOptions po;
  po.api = api;
  po.driver = options_.driver;
  po.node_name = options_.node_name;
  po.on_capabilities = [this](ServerCapabilities caps) {
    host_.Loop().Post([this, caps] {
      if (host_.Stopping() || !created_) return;
      if (caps_ == caps) return;
      if (!caps_ || caps_->consumable_capacity != caps.consumable_capacity) {
        log::Info(
            Cat("DRA: the API server ",
                caps.consumable_capacity ? "keeps" : "does not keep (DRAConsumableCapacity off)",
                " consumable capacity; deviceModel \"auto\" publishes ",
                caps.consumable_capacity ? "perHca" : "slots"));
      }
      caps_ = caps;
      Publish();  // the publisher writes only a wish stamped with these capabilities
    });
  };
  po.on_info = [](const std::string& line) { log::Info("DRA front end: " + line); };
  po.on_problem = [this](std::string p) {
    host_.Loop().Post([this, p = std::move(p)] {
      if (!host_.Stopping())
        host_.ReportProblem(log::Level::kWarn, "dra", "DRA front end: " + p,
                            {.resource = options_.driver, .hca = {}, .event = "dra"});
    });
  };
  po.write_budget = write_budget_;
  StatusWriterOptions so;
  so.driver = options_.driver;
  so.connect = [api]() -> absl::StatusOr<std::unique_ptr<kube::ApiTransport>> {
    auto client = kube::RestClient::Create(api);
    if (!client.ok()) return client.status();
    return std::unique_ptr<kube::ApiTransport>(std::move(*client));
  };
  so.write_budget = write_budget_;
  so.on_info = po.on_info;
  so.on_problem = po.on_problem;
  auto status = claims.ok() ? ClaimStatusWriter::Start(std::move(so))
                            : absl::StatusOr<std::unique_ptr<ClaimStatusWriter>>(claims);
  if (!status.ok()) claims = status.status();
  auto publisher = claims.ok() ? SlicePublisher::Start(po)
                               : absl::StatusOr<std::unique_ptr<SlicePublisher>>(claims);
  if (!publisher.ok()) {
    // Retried at every rescan and reload; reported once per distinct problem.
    api_problem_ = std::string(publisher.status().message());
    const std::string p = Cat("DRA front end: ", api_problem_);
    host_.ReportOnce(log::Level::kError, "dra", p,
                     {.resource = options_.driver, .hca = {}, .event = "dra"});
    if (!api_retry_) {
      api_retry_ = host_.Loop().NewAlarm([this] {
        if (!publisher_ && !host_.Stopping()) StartApi();
        if (publisher_) Publish();
      });
    }
    api_retry_->ArmOnce(api_backoff_.Next());
    return;
  }
  api_problem_.clear();
  api_backoff_.Reset();
  shared_->set_claims(std::move(clients));
  // The claims this driver prepared before a restart of ours: kept true from now on too.
  const MetadataDirs dirs{options_.driver, Cat(host_.Dirs().Plugins(), "/", options_.driver),
                          options_.cdi_spec_dir};
  for (auto& c : ListPreparedClaims(dirs, kMaxTrackedClaims)) {
    (*status)->Recovered(std::move(c.namespace_), std::move(c.name), std::move(c.uid));
  }
  shared_->set_status(std::move(*status));
  publisher_ = std::move(*publisher);
}

std::map<std::string, std::string> DraFrontEnd::SyncCdiSpecs(const DraView& view) {
  std::map<std::string, std::string> wanted;
  for (const auto& spec : view.cdi_specs) wanted[spec.file_name] = spec.json;
  // A spec wanted again is written below, never removed: its pending removal is dropped
  // (it is in no specs_written_, so it is written whatever the file holds).
  std::erase_if(cdi_unremoved_, [&](const std::string& name) { return wanted.count(name) != 0; });
  RetryCdiRemovals();  // at every Publish (every rescan) at the latest
  if (!stale_specs_checked_) {
    // Specs of HCAs gone while the plugin was down: nobody else removes them (docs/dra.md,
    // "Using it"). Only this front end's own file names are touched.
    stale_specs_checked_ = true;
    for (const std::string& name : fd::ListDir(options_.cdi_spec_dir)) {
      if (!name.starts_with("k8s-rdma-shared-dp_dra_") || !name.ends_with(".json")) continue;
      if (wanted.count(name) != 0) continue;
      if (RemoveCdiSpec(name)) {
        log::Info(Cat("DRA: removed the CDI spec of an HCA no longer published: ",
                      options_.cdi_spec_dir, "/", name));
      }
    }
  }
  std::map<std::string, std::string> unwritable;  // file name -> why
  for (const auto& [name, json] : wanted) {
    auto it = specs_written_.find(name);
    if (it != specs_written_.end() && it->second == json) continue;
    if (auto st = cdi::WriteSpecAtomically(options_.cdi_spec_dir, name, json); !st.ok()) {
      const std::string why = Cat("CDI spec not written: ", std::string(st.message()));
      unwritable[name] = why;
      const std::string p = Cat("DRA front end: ", why);
      host_.ReportOnce(log::Level::kError, "cdi", p,
                       {.resource = options_.driver, .hca = {}, .event = "cdi"});
      continue;
    }
    specs_written_[name] = json;
  }
  for (auto it = specs_written_.begin(); it != specs_written_.end();) {
    if (wanted.count(it->first) != 0) {
      ++it;
      continue;
    }
    // Not written any more either way: one that stays is in cdi_unremoved_ until it goes.
    RemoveCdiSpec(it->first);
    it = specs_written_.erase(it);
  }
  ArmCdiRetry();
  return unwritable;
}

bool DraFrontEnd::RemoveCdiSpec(const std::string& name) {
  const absl::Status st = cdi::RemoveSpec(options_.cdi_spec_dir, name);
  if (st.ok()) {
    if (cdi_unremoved_.erase(name) != 0) {
      log::Info(Cat("DRA: the stale CDI spec ", options_.cdi_spec_dir, "/", name,
                    " could be removed at last"));
    }
    return true;
  }
  // Said when it starts failing, not at every retry nor for every errno it goes through (an
  // EBUSY, then an EACCES): once per file until it is removed or wanted again. Nothing that
  // serves is touched: the spec names a device no longer published, which no claim names.
  if (cdi_unremoved_.insert(name).second) {
    host_.ReportProblem(log::Level::kError, "cdi",
                        Cat("DRA front end: ", std::string(st.message()),
                            "; it names a device no longer published: tried again at every "
                            "rescan and with back-off until it is removed"),
                        {.resource = options_.driver, .hca = {}, .event = "cdi"});
  }
  return false;
}

void DraFrontEnd::RetryCdiRemovals() {
  // A copy: RemoveCdiSpec erases what it removes.
  for (const std::string& name : std::set<std::string>(cdi_unremoved_)) RemoveCdiSpec(name);
}

void DraFrontEnd::ArmCdiRetry() {
  if (cdi_unremoved_.empty()) {
    if (cdi_retry_armed_) cdi_retry_->Disarm();
    cdi_retry_armed_ = false;
    cdi_backoff_.Reset();  // the next failure starts over at 1 s
    return;
  }
  if (cdi_retry_armed_) return;  // a rescan's retry does not put the timer's off
  if (!cdi_retry_) {
    cdi_retry_ = host_.Loop().NewAlarm([this] {
      cdi_retry_armed_ = false;
      // Stopped (created_ false): the next Apply's Publish tries again and re-arms.
      if (host_.Stopping() || !created_) return;
      RetryCdiRemovals();
      ArmCdiRetry();
    });
  }
  cdi_retry_->ArmOnce(cdi_backoff_.Next());
  cdi_retry_armed_ = true;
}

void DraFrontEnd::PublishHealth() {
  if (!server_) return;
  const DraViewPtr view = shared_->view();
  if (!view) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  v1::NodeWatchResourcesResponse list;
  std::string key;
  for (const auto& [id, device] : view->devices) {
    auto* h = list.add_devices();
    h->mutable_device()->set_pool_name(device.pool);
    h->mutable_device()->set_device_name(device.name);
    h->set_health(device.healthy ? v1::HEALTHY : v1::UNHEALTHY);
    h->set_last_updated_time(now);
    h->set_health_check_timeout_seconds(options_.health_timeout.count());
    h->set_message(device.health_message.substr(0, kMaxHealthMessage));
    Append(key, device.pool, "/", device.name, device.healthy ? " ok " : " bad ",
           device.health_message, "\n");
  }
  if (key != health_key_) {
    log::Debug(Cat("DRA health changed: ", list.devices_size(), " device(s)"));
    health_key_ = key;
  }
  server_->PublishHealth(std::make_shared<const std::string>(list.SerializeAsString()));
}

void DraFrontEnd::Collect(metrics::View& view) const {
  loop::AssertOnLoop(host_.Loop());
  if (!active_) return;
  metrics::DraView& d = view.dra.emplace();
  d.driver = options_.driver;
  d.registered = fsm_ && fsm_->registered();
  d.registrations = fsm_ ? fsm_->registrations() : 0;
  d.api_problem = api_problem_;
  d.cdi_problem = cdi_problem_;
  if (publisher_) {
    const PublisherStats s = publisher_->stats();
    if (d.api_problem.empty()) d.api_problem = s.problem;
    d.slices_synced = s.synced;
    d.slices_in_sync = s.in_sync;
    d.slice_writes = s.writes_by_verb_code;
    d.write_budget_waits = s.budget_waits;
    d.api_failures = s.failures;
    for (const auto& field : s.dropped_fields)
      d.dropped_fields.emplace_back(field, GateDropping(field));
  }
  if (const auto status = shared_->status()) {
    const StatusWriterStats s = status->stats();
    d.claim_status_applies = s.applies_by_code;
    d.claim_status_problem = s.problem;
    d.claim_status_pending = s.pending;
    d.claim_status_given_up = s.given_up_claims;
    if (s.field_dropped) {
      d.dropped_fields.emplace_back("ResourceClaim status.devices", std::string(kDeviceStatusGate));
    }
  }
  for (const auto& f : fallbacks_) {
    d.model_fallbacks.push_back({f.resource, std::string(config::DeviceModelName(f.configured)),
                                 std::string(config::DeviceModelName(f.published))});
  }
  if (!publisher_ && d.api_problem.empty()) {
    d.api_problem = "no API client yet (see the log)";
  }
  const DriverShared& sh = *shared_;
  d.prepares = sh.prepares;
  d.prepare_failures = sh.prepare_failures;
  d.prepare_calls = sh.prepare_calls;
  d.prepare_seconds_sum = static_cast<double>(sh.prepare_nanos.load()) / 1e9;
  d.unprepares = sh.unprepares;
  for (const auto& pool : pools_) {
    if (!pool.resource.memlock) continue;
    view.memlock.push_back({pool.resource.FullName(), *pool.resource.memlock,
                            cdi::MemlockHookProblem(options_.memlock_hook)});
  }
}

namespace {

// One line per DRA entry of `config`, naming it, for one `why`.
std::vector<std::string> PerDraEntry(const std::string& why, const config::Config& config,
                                     const std::vector<size_t>& indices) {
  std::vector<std::string> problems;
  if (why.empty()) return problems;
  for (size_t i = 0; i < config.resources.size(); ++i) {
    if (config.resources[i].frontend != config::Frontend::kDra) continue;
    const size_t index = indices.empty() ? i : indices[i];
    problems.push_back(Cat("config: configList[", index, "].frontend: ", why));
  }
  return problems;
}

}  // namespace

std::vector<std::string> DriverProblems(const std::string& driver,
                                        const std::string& kubelet_root_dir,
                                        const config::Config& config,
                                        const std::vector<size_t>& indices) {
  std::string why;
  if (auto p = config::DnsSubdomainProblem(driver); !p.empty()) {
    why = Cat("--dra-driver-name \"", driver, "\" ", p);
  } else if (const std::string reg =
                 Cat(kubelet_root_dir, "/plugins_registry/", driver, "-12345678-reg.sock");
             reg.size() > config::kMaxUnixSocketPath) {
    why = Cat("the DRA registration socket ", reg, " would be ", reg.size(),
              " characters; unix sockets allow ", config::kMaxUnixSocketPath,
              ": shorten --dra-driver-name");
  }
  return PerDraEntry(why, config, indices);
}

std::vector<std::string> ConfigProblems(const FrontEndOptions& options,
                                        const std::string& kubelet_root_dir,
                                        const config::Config& config,
                                        const std::vector<size_t>& indices) {
  if (options.node_name.empty()) {
    return PerDraEntry(
        "the DRA front end needs the node's name: set NODE_NAME from the downward API "
        "(images/overlays/dra does) or --node-name",
        config, indices);
  }
  return DriverProblems(options.driver, kubelet_root_dir, config, indices);
}

}  // namespace rdmadp::dra
