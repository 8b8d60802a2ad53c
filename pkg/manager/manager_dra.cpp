// Manager: the DRA front end. One driver instance serves every configList entry with
// "frontend": "dra": its pools become one DraView (slices, devices, CDI specs, health),
// published to the API server by the SlicePublisher and served to the kubelet by the
// DraServer, registered through plugins_registry with the same state machine as a device
// plugin in watcher mode (without the device plugin's stream expectations). Loop thread
// only, except the Prepare/Unprepare functions, which run on the DraServer's worker.
#include <sys/stat.h>

#include "pkg/cdi/spec_files.h"
#include "pkg/config/k8s_names.h"
#include "pkg/fd/files.h"
#include "pkg/log/log.h"
#include "pkg/manager/manager_internal.h"
#include "pkg/pool/pool_model.h"

namespace rdmadp::manager {
namespace {

// Well inside the kubelet's 30 s: a device not reported for that long turns "Unknown".
constexpr milliseconds kHealthHeartbeat{10000};
constexpr int64_t kHealthTimeoutSeconds = 30;
constexpr size_t kMaxHealthMessage = 1024;

namespace drav1 = server::drav1;

// Prepare's claim GETs end this long before the kubelet's deadline, so that the answer
// still reaches it.
constexpr milliseconds kDeadlineMargin{500};

// `cancelled`: the server is being torn down (set before the clients are cancelled, so a
// GET that starts after the cancel sees it here).
drav1::NodePrepareResourcesResponse Prepare(const drav1::NodePrepareResourcesRequest& req,
                                            const dra::DraViewPtr& view, kube::RestClient* claims,
                                            std::chrono::system_clock::time_point deadline,
                                            const std::atomic<bool>& cancelled) {
  drav1::NodePrepareResourcesResponse resp;
  if (claims != nullptr) claims->ResetCancel();
  for (const auto& c : req.claims()) {
    auto& out = (*resp.mutable_claims())[c.uid()];
    const std::string name = Cat(c.namespace_(), "/", c.name());
    if (claims == nullptr || !view) {
      out.set_error(Cat("cannot prepare ResourceClaim ", name,
                        ": the DRA driver has no API server connection (see its log)"));
      continue;
    }
    const auto left = std::chrono::duration_cast<milliseconds>(
        deadline - std::chrono::system_clock::now() - kDeadlineMargin);
    if (cancelled || left.count() <= 0) {
      // Nobody waits for this answer any more: the claim is not fetched (the kubelet
      // retries the whole batch).
      out.set_error(Cat("cannot prepare ResourceClaim ", name, ": ",
                        cancelled ? "the DRA driver is stopping"
                                  : "the kubelet's deadline passed before it was read"));
      continue;
    }
    // The names go into the URL: only what Kubernetes can name (DNS-1123 subdomains; a
    // namespace is even narrower) is asked for, so "../" never reaches another API path
    // with our token.
    const std::string bad_namespace = config::DnsSubdomainProblem(c.namespace_());
    const std::string bad_name = config::DnsSubdomainProblem(c.name());
    if (!bad_namespace.empty() || !bad_name.empty()) {
      out.set_error(Cat(
          "cannot prepare ResourceClaim ", name, ": ",
          !bad_namespace.empty() ? Cat("namespace: ", bad_namespace) : Cat("name: ", bad_name)));
      log::Warn(out.error());
      continue;
    }
    auto r = claims->Call(
        "GET",
        Cat("/apis/resource.k8s.io/v1/namespaces/", c.namespace_(), "/resourceclaims/", c.name()),
        "", std::min(left, kube::kCallTimeout));
    if (!r.ok() || r->code != 200) {
      out.set_error(Cat("reading ResourceClaim ", name, ": ",
                        r.ok() ? Cat("HTTP ", r->code) : std::string(r.status().message())));
      log::Warn(out.error());
      continue;
    }
    auto devices =
        dra::PrepareClaim(nlohmann::json::parse(r->body, nullptr, false), c.uid(), *view);
    if (!devices.ok()) {
      out.set_error(std::string(devices.status().message()));
      log::Warn(out.error());
      continue;
    }
    std::vector<std::string> described;
    for (const auto& d : *devices) {
      auto* dev = out.add_devices();
      for (const auto& request : d.request_names) dev->add_request_names(request);
      dev->set_pool_name(d.pool);
      dev->set_device_name(d.device);
      for (const auto& id : d.cdi_ids) dev->add_cdi_device_ids(id);
      if (!d.share_id.empty()) dev->set_share_id(d.share_id);  // v1: echoed, as the kubelet expects
      described.push_back(
          Cat(d.pool, "/", d.device, d.share_id.empty() ? "" : Cat(" (share ", d.share_id, ")")));
    }
    log::Info(Cat("prepared ResourceClaim ", name, " (", c.uid(),
                  "): ", described.empty() ? "no device of ours" : Join(described, ", ")));
  }
  return resp;
}

// Nothing to undo: Prepare leaves no state behind (the CDI specs are per HCA and stay).
drav1::NodeUnprepareResourcesResponse Unprepare(const drav1::NodeUnprepareResourcesRequest& req) {
  drav1::NodeUnprepareResourcesResponse resp;
  for (const auto& c : req.claims()) (*resp.mutable_claims())[c.uid()];
  return resp;
}

}  // namespace

void Manager::SyncDra(const sysfs::NodeInventory& inventory) {
  std::vector<pool::PoolModel> pools;
  for (const auto& rc : config_.resources) {
    if (rc.frontend == config::Frontend::kDra) pools.push_back(pool::SelectPool(rc, inventory));
  }
  if (pools.empty() && !dra_) return;
  if (!dra_) {
    dra_ = std::make_unique<DraDriver>();
    if (options_.kube_api_server.empty()) {
      dra_->api_problem = "no API server configured (--kube-api-server)";
      ReportProblem(log::Level::kError, "dra",
                    "DRA front end: no API server (KUBERNETES_SERVICE_HOST is not set and "
                    "--kube-api-server is empty): ResourceSlices are not published and "
                    "Prepare fails; run it in a pod or set --kube-api-server");
    }
  }
  if (!dra_->publisher && !options_.kube_api_server.empty()) StartDraApi();
  dra_->pools = std::move(pools);
  PublishDra();
}

void Manager::PublishDra() {
  const std::vector<pool::PoolModel>& pools = dra_->pools;
  dra::SliceContext ctx;
  ctx.driver = options_.dra_driver;
  ctx.node_name = options_.node_name;
  ctx.auto_model = dra_->auto_model;
  auto view = std::make_shared<const dra::DraView>(dra::BuildDraView(pools, ctx));
  for (const auto& p : view->problems) {
    if (known_problems_.insert(p).second) ReportProblem(log::Level::kWarn, "config", p);
  }
  // Before any slice or Prepare names a device. An HCA whose spec cannot be written (a full
  // or read-only /var/run/cdi) would fail at container creation: it is published as
  // unhealthy (tainted, or left out where the server drops taints), its health stream says
  // why, and /readyz says not ready, until a rescan writes the spec (issue 31 item 10).
  const std::map<std::string, std::string> unwritable = SyncDraCdiSpecs(*view);
  dra_->cdi_problem.clear();
  if (!unwritable.empty()) {
    std::vector<pool::PoolModel> marked = pools;
    for (auto& pool : marked) {
      for (auto& hca : pool.hcas) {
        const auto it = unwritable.find(
            Cat("k8s-rdma-shared-dp_dra_", dra::HcaDeviceName(hca.function.address), ".json"));
        if (it == unwritable.end()) continue;
        hca.healthy = false;
        hca.health_reason = it->second;
        if (dra_->cdi_problem.empty()) dra_->cdi_problem = it->second;
      }
    }
    view = std::make_shared<const dra::DraView>(dra::BuildDraView(marked, ctx));
  }
  {
    std::lock_guard lock(dra_->shared->mu);
    dra_->shared->view = view;
  }
  if (dra_->publisher) dra_->publisher->Publish(view->pools);
  const bool wanted = !pools.empty();
  if (wanted && !dra_->active) {
    dra_->active = true;
    dra_->fsm = std::make_unique<lifecycle::RegistrationFsm>(Cat("DRA driver ", ctx.driver),
                                                             &tokens_, /*expect_stream=*/false);
    dra_->timer = std::make_unique<Timer>(*loop_, [this] {
      if (dra_) DriveDra(lifecycle::Event::Timer(dra_->timer_token));
    });
    dra_->heartbeat = std::make_unique<Timer>(*loop_, [this] { PublishDraHealth(); });
    dra_->heartbeat->ArmPeriodic(kHealthHeartbeat);
    WatchSocketDirs();  // plugins_registry, watched now in any registration mode
    DriveDra(lifecycle::Event::Start(lifecycle::Mode::kWatcher));
  } else if (!wanted && dra_->active) {
    log::Info(Cat("DRA driver ", ctx.driver,
                  ": no DRA entry left; deregistering and deleting "
                  "its ResourceSlices"));
    DriveDra(lifecycle::Event::Stop());
    dra_->active = false;
    dra_->heartbeat.reset();
    dra_->timer.reset();
    dra_->fsm.reset();
  }
  for (const auto& pool : view->pools) {
    size_t devices = 0;
    for (const auto& s : pool.slices) devices += s["spec"]["devices"].size();
    log::Debug(Cat("DRA pool ", pool.pool_name, ": ", devices, " device(s) in ", pool.slices.size(),
                   " slice(s)"));
  }
  PublishDraHealth();
}

void Manager::StartDraApi() {
  const kube::ApiConfig api{options_.kube_api_server, options_.kube_ca_file,
                            options_.kube_token_file, "k8s-rdma-shared-dp/" + options_.version};
  std::vector<std::shared_ptr<kube::RestClient>> clients;
  absl::Status claims = absl::OkStatus();
  for (int i = 0; i < server::kDraWorkers && claims.ok(); ++i) {
    auto client = kube::RestClient::Create(api);
    if (client.ok()) {
      clients.push_back(std::move(*client));
    } else {
      claims = client.status();
    }
  }
  dra::PublisherOptions po;
  po.api = api;
  po.driver = options_.dra_driver;
  po.node_name = options_.node_name;
  po.on_capabilities = [this](dra::ServerCapabilities caps) {
    loop_->Post([this, caps] {
      if (stopping_ || !dra_) return;
      const auto model =
          caps.consumable_capacity ? config::DeviceModel::kPerHca : config::DeviceModel::kSlots;
      if (dra_->auto_model == model) return;
      log::Info(Cat(
          "DRA: the API server ",
          caps.consumable_capacity ? "keeps" : "does not keep (DRAConsumableCapacity off)",
          " consumable capacity; deviceModel \"auto\" publishes ", config::DeviceModelName(model)));
      dra_->auto_model = model;
      PublishDra();
    });
  };
  po.on_info = [](std::string line) { log::Info("DRA front end: " + line); };
  po.on_problem = [this](std::string p) {
    loop_->Post([this, p = std::move(p)] {
      if (!stopping_) ReportProblem(log::Level::kWarn, "dra", "DRA front end: " + p);
    });
  };
  auto publisher = claims.ok() ? dra::SlicePublisher::Start(po)
                               : absl::StatusOr<std::unique_ptr<dra::SlicePublisher>>(claims);
  if (!publisher.ok()) {
    // Retried at every rescan and reload; reported once per distinct problem.
    dra_->api_problem = std::string(publisher.status().message());
    const std::string p = Cat("DRA front end: ", dra_->api_problem);
    if (known_problems_.insert(p).second) ReportProblem(log::Level::kError, "dra", p);
    if (!dra_->api_retry) {
      dra_->api_retry = std::make_unique<Timer>(*loop_, [this] {
        if (dra_ && !dra_->publisher && !stopping_) StartDraApi();
        if (dra_ && dra_->publisher) PublishDra();
      });
    }
    dra_->api_retry->ArmOnce(dra_->api_backoff.Next());
    return;
  }
  dra_->api_problem.clear();
  dra_->api_backoff.Reset();
  {
    std::lock_guard lock(dra_->shared->mu);
    dra_->shared->claims = std::move(clients);
  }
  dra_->publisher = std::move(*publisher);
}

std::map<std::string, std::string> Manager::SyncDraCdiSpecs(const dra::DraView& view) {
  std::map<std::string, std::string> wanted;
  for (const auto& spec : view.cdi_specs) wanted[spec.file_name] = spec.json;
  if (!dra_->stale_specs_checked) {
    // Specs of HCAs gone while the plugin was down: nobody else removes them (issue 31
    // item 18). Only this front end's own file names are touched.
    dra_->stale_specs_checked = true;
    for (const std::string& name : fd::ListDir(options_.cdi_spec_dir)) {
      if (!name.starts_with("k8s-rdma-shared-dp_dra_") || !name.ends_with(".json")) continue;
      if (wanted.count(name) != 0) continue;
      if (cdi::RemoveSpec(options_.cdi_spec_dir, name).ok()) {
        log::Info(Cat("DRA: removed the CDI spec of an HCA no longer published: ",
                      options_.cdi_spec_dir, "/", name));
      }
    }
  }
  std::map<std::string, std::string> unwritable;  // file name -> why
  for (const auto& [name, json] : wanted) {
    auto it = dra_->specs_written.find(name);
    if (it != dra_->specs_written.end() && it->second == json) continue;
    if (auto st = cdi::WriteSpecAtomically(options_.cdi_spec_dir, name, json); !st.ok()) {
      const std::string why = Cat("CDI spec not written: ", std::string(st.message()));
      unwritable[name] = why;
      const std::string p = Cat("DRA front end: ", why);
      if (known_problems_.insert(p).second) ReportProblem(log::Level::kError, "cdi", p);
      continue;
    }
    dra_->specs_written[name] = json;
  }
  for (auto it = dra_->specs_written.begin(); it != dra_->specs_written.end();) {
    if (wanted.count(it->first) != 0) {
      ++it;
      continue;
    }
    (void)cdi::RemoveSpec(options_.cdi_spec_dir, it->first);
    it = dra_->specs_written.erase(it);
  }
  return unwritable;
}

void Manager::PublishDraHealth() {
  if (!dra_ || !dra_->server) return;
  const dra::DraViewPtr view = dra_->shared->Get();
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
    h->set_health_check_timeout_seconds(kHealthTimeoutSeconds);
    h->set_message(device.health_message.substr(0, kMaxHealthMessage));
    Append(key, device.pool, "/", device.name, device.healthy ? " ok " : " bad ",
           device.health_message, "\n");
  }
  if (key != dra_->health_key) {
    log::Debug(Cat("DRA health changed: ", list.devices_size(), " device(s)"));
    dra_->health_key = key;
  }
  dra_->server->PublishHealth(std::make_shared<const std::string>(list.SerializeAsString()));
}

void Manager::StopDra() {
  if (!dra_) return;
  if (dra_->fsm) DriveDra(lifecycle::Event::Stop());
  dra_->publisher.reset();  // the slices stay: a restarted instance takes them over
  dra_.reset();
}

void Manager::DriveDra(const lifecycle::Event& event) {
  if (!dra_ || !dra_->fsm) return;
  using Kind = lifecycle::Action::Kind;
  lifecycle::Facts facts{.now = lifecycle::Clock::now(),
                         .kubelet_socket = SocketIdOf(KubeletSocket())};
  const lifecycle::Phase before = dra_->fsm->phase();
  const std::vector<lifecycle::Action> actions = dra_->fsm->Handle(event, facts);
  log::Debug(Cat("DRA driver: ", lifecycle::Describe(event), " in ", lifecycle::PhaseName(before),
                 " -> ", lifecycle::PhaseName(dra_->fsm->phase())));
  for (const lifecycle::Action& action : actions) {
    switch (action.kind) {
      case Kind::kServe:
        DriveDra(ServeDra(action.token));
        break;
      case Kind::kDropServer:
        dra_->server.reset();
        break;
      case Kind::kArmTimer:
        dra_->timer_token = action.token;
        dra_->timer->ArmOnce(std::max(action.delay, milliseconds(1)));
        break;
      case Kind::kDisarmTimer:
        dra_->timer->Disarm();
        dra_->timer_token = 0;
        break;
      case Kind::kLog:
        if (action.level == lifecycle::Action::Level::kWarn) {
          ReportProblem(log::Level::kWarn, "registration", action.message);
        } else {
          log::Write(action.level == lifecycle::Action::Level::kInfo ? log::Level::kInfo
                                                                     : log::Level::kDebug,
                     action.message);
        }
        break;
      case Kind::kRegister:  // kubelet.sock registration: not how a DRA driver registers
      case Kind::kCancelRegister:
        break;
    }
  }
}

lifecycle::Event Manager::ServeDra(uint64_t server_token) {
  dra_->server.reset();
  const std::string plugins = Cat(options_.kubelet_root_dir, "/plugins");
  if (!PathExists(PluginsRegistryDir()) || !PathExists(plugins)) {
    // Watched (the kubelet root, or its nearest ancestor): the directory's appearance is
    // the trigger, at once; only an unwatchable root falls back to the retry timer.
    WatchSocketDirs();
    const bool watched = root_dir_watch_ >= 0 || ancestor_watch_ >= 0;
    return lifecycle::Event::ServeFailed(
        server_token, watched,
        Cat(PluginsRegistryDir(), " or ", plugins,
            " does not exist yet (is the kubelet running, and is --kubelet-root-dir right?)"));
  }
  const std::string dir = Cat(plugins, "/", options_.dra_driver);
  if (::mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) {
    return lifecycle::Event::ServeFailed(server_token, false,
                                         Cat("cannot create ", dir, ": ", std::strerror(errno)));
  }
  CleanStaleSockets(dir, "dra-", ".sock");
  CleanStaleSockets(PluginsRegistryDir(), options_.dra_driver + "-", "-reg.sock");
  server::DraServerOptions o;
  o.driver = options_.dra_driver;
  o.endpoint_path = Cat(dir, "/dra-", instance_id_, ".sock");
  o.registration_path =
      Cat(PluginsRegistryDir(), "/", options_.dra_driver, "-", instance_id_, "-reg.sock");
  auto post = [this](lifecycle::Event e) {
    loop_->Post([this, e = std::move(e)] {
      if (!stopping_) DriveDra(e);
    });
  };
  o.watcher.on_get_info = [post, server_token] { post(lifecycle::Event::GetInfo(server_token)); };
  o.watcher.on_status = [post, server_token](bool ok, const std::string& error) {
    post(lifecycle::Event::Notify(server_token, ok, error, WallNowNs()));
  };
  // This server's teardown: no claim GET may start after it, and running ones end.
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  o.cancel = [shared = dra_->shared, cancelled] {
    *cancelled = true;
    for (int i = 0; i < server::kDraWorkers; ++i) {
      if (auto client = shared->Claims(i)) client->Cancel();
    }
  };
  o.prepare = [shared = dra_->shared, cancelled](const auto& req, int worker, auto deadline) {
    const auto start = std::chrono::steady_clock::now();
    auto resp = Prepare(req, shared->Get(), shared->Claims(worker).get(), deadline, *cancelled);
    uint64_t failed = 0;
    for (const auto& [uid, claim] : resp.claims()) failed += claim.error().empty() ? 0 : 1;
    shared->prepares += static_cast<uint64_t>(req.claims_size());
    shared->prepare_failures += failed;
    shared->prepare_calls += 1;
    shared->prepare_nanos +=
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - start)
                                  .count());
    return resp;
  };
  o.unprepare = [shared = dra_->shared](const auto& req) {
    shared->unprepares += static_cast<uint64_t>(req.claims_size());
    return Unprepare(req);
  };
  auto started = server::DraServer::Start(std::move(o), std::make_shared<const std::string>());
  if (!started.ok()) {
    return lifecycle::Event::ServeFailed(server_token, false,
                                         std::string(started.status().message()));
  }
  dra_->server = std::move(*started);
  log::Info(Cat("DRA driver ", options_.dra_driver, ": serving on ", dra_->server->endpoint_path(),
                ", registration ", dra_->server->registration_path()));
  PublishDraHealth();
  return lifecycle::Event::ServeOk(server_token);
}

}  // namespace rdmadp::manager
