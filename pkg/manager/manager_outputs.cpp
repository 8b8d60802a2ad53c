// Manager: what it produces besides the gRPC servers. CDI spec files, metrics views,
// recorded problems, and the link-up step.

#include "pkg/cdi/cdi_spec.h"
#include "pkg/cdi/spec_files.h"
#include "pkg/fd/files.h"
#include "pkg/log/log.h"
#include "pkg/manager/manager_internal.h"
#include "pkg/netlink/link_up.h"
#include "pkg/server/socket_path.h"

namespace rdmadp::manager {

void Manager::BringLinksUp() {
  std::set<std::string> links;
  for (const auto& [name, res] : resources_) {
    for (const auto& hca : res->snapshot->hcas()) {
      const sysfs::PciFunction& fn = hca.function;
      if (!fn.if_name.empty()) links.insert(fn.if_name);
    }
  }
  for (const auto& link : links) {
    if (auto status = netlink::SetLinkUp(link); !status.ok()) {
      ReportProblem(log::Level::kWarn, "link",
                    Cat(std::string(status.message()), " (pass --no-link-up to skip this step)"));
    }
  }
}

void Manager::DropServer(Resource& res) {
  if (res.server) res.allocations_before += res.server->allocations();
  if (res.server) res.rejections_before += res.server->allocate_rejections();
  res.server.reset();
}

void Manager::ReportProblem(log::Level level, std::string_view error_class,
                            const std::string& message) {
  log::Write(level, message);
  ++counters_.errors;
  ++counters_.errors_by_class[std::string(error_class)];
  counters_.last_error_class = error_class;
  counters_.last_error_unix_seconds =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

metrics::View Manager::BuildView() const {
  metrics::View v;
  v.version = options_.version;
  v.registration_mode =
      auto_deciding_ ? "auto (deciding)" : std::string(cli::RegistrationModeName(mode_));
  for (const auto& [name, res] : resources_) {
    metrics::ResourceView r;
    const auto& adv = res->snapshot->advertised();
    r.resource = res->config.FullName();
    r.hcas = static_cast<int64_t>(res->snapshot->hcas().size());
    r.slots = adv.slots;
    r.healthy_slots = adv.healthy && res->cdi_problem.empty() ? adv.slots : 0;
    r.problem = res->cdi_problem;
    r.registered = res->fsm->registered();
    r.open_streams = res->server ? static_cast<int64_t>(res->server->open_streams()) : 0;
    r.allocations = res->allocations_before + (res->server ? res->server->allocations() : 0);
    r.registrations = res->fsm->registrations();
    r.registration_failures = res->fsm->registration_failures();
    r.socket_recreations = res->fsm->socket_recreations();
    r.allocate_rejections =
        res->rejections_before + (res->server ? res->server->allocate_rejections() : 0);
    v.resources.push_back(std::move(r));
  }
  for (const auto& entry : skipped_)
    v.skipped_entries.push_back({entry.index, entry.resource_name});
  if (dra_ && dra_->active) v.dra = BuildDraView();
  v.counters = counters_;
  v.process = metrics::ReadProcess(start_time_seconds_);
  return v;
}

metrics::DraView Manager::BuildDraView() const {
  metrics::DraView d;
  d.driver = options_.dra_driver;
  d.registered = dra_->fsm && dra_->fsm->registered();
  d.registrations = dra_->fsm ? dra_->fsm->registrations() : 0;
  d.api_problem = dra_->api_problem;
  d.cdi_problem = dra_->cdi_problem;
  if (dra_->publisher) {
    const dra::PublisherStats s = dra_->publisher->stats();
    if (d.api_problem.empty()) d.api_problem = s.problem;
    d.slices_synced = s.synced;
    d.slices_in_sync = s.in_sync;
    d.slice_writes = s.writes_by_verb_code;
    d.write_budget_waits = s.budget_waits;
    d.api_failures = s.failures;
    for (const auto& field : s.dropped_fields) {
      d.dropped_fields.emplace_back(field, dra::GateDropping(field));
    }
  } else if (d.api_problem.empty()) {
    d.api_problem = "no API client yet (see the log)";
  }
  const auto& sh = *dra_->shared;
  d.prepares = sh.prepares;
  d.prepare_failures = sh.prepare_failures;
  d.prepare_calls = sh.prepare_calls;
  d.prepare_seconds_sum = static_cast<double>(sh.prepare_nanos.load()) / 1e9;
  d.unprepares = sh.unprepares;
  return d;
}

std::optional<metrics::View> Manager::CollectFromLoop() {
  struct Box {
    std::optional<metrics::View> view;
  };
  auto gate = collect_gate_;
  auto box = std::make_shared<Box>();
  loop_->Post([this, gate, box] {
    metrics::View v = BuildView();
    std::lock_guard lock(gate->mu);
    box->view = std::move(v);
    gate->cv.notify_all();
  });
  std::unique_lock lock(gate->mu);
  gate->cv.wait_for(lock, std::chrono::seconds(1), [&] { return box->view || gate->closed; });
  return box->view;
}

pool::SnapshotPtr Manager::Served(const Resource& res) const {
  return res.cdi_problem.empty() ? res.snapshot : pool::PoolSnapshot::AllUnhealthy(res.snapshot);
}

void Manager::SyncCdiSpec(Resource& res) {
  if (!options_.use_cdi) return;
  if (res.cdi_written && *res.cdi_written == res.snapshot->advertised()) return;
  const std::string file = cdi::SpecFileName(res.config);
  if (res.snapshot->hcas().empty()) {
    // CDI >= 1.0 rejects a spec without devices at every refresh of the spec dirs; with
    // no HCA, Allocate names no CDI device either.
    if (auto s = cdi::RemoveSpec(options_.cdi_spec_dir, file); !s.ok()) {
      ReportProblem(log::Level::kError, "cdi",
                    Cat(res.config.FullName(), ": ", std::string(s.message()),
                        "; will retry at the next rescan"));
      return;  // an empty pool names no CDI device: nothing to mark
    }
    if (res.cdi_written) {
      log::Info(Cat(res.config.FullName(), ": pool is empty; CDI spec ", options_.cdi_spec_dir, "/",
                    file, " removed"));
    }
    res.cdi_written = res.snapshot->advertised();
    return;
  }
  if (auto s = cdi::WriteSpecAtomically(options_.cdi_spec_dir, file, cdi::SpecJson(*res.snapshot));
      !s.ok()) {
    // Keep serving, but every slot Unhealthy until a rescan writes the spec: a pod admitted
    // now would fail at container creation. Never end a stream over CDI I/O.
    const bool first = res.cdi_problem.empty();
    res.cdi_problem = Cat("its CDI spec could not be written: ", std::string(s.message()));
    if (first) {
      ReportProblem(log::Level::kError, "cdi",
                    Cat(res.config.FullName(), ": ", std::string(s.message()),
                        "; every slot is Unhealthy until a rescan writes it (free space in, or "
                        "make writable, ",
                        options_.cdi_spec_dir, ")"));
    }
    return;
  }
  if (!res.cdi_problem.empty()) log::Info(Cat(res.config.FullName(), ": CDI spec written again"));
  res.cdi_problem.clear();
  res.cdi_written = res.snapshot->advertised();
  log::Info(Cat(res.config.FullName(), ": CDI spec ", options_.cdi_spec_dir, "/", file,
                " written (", res.snapshot->hcas().size(), " device(s), kind ", res.cdi_naming.kind,
                ")"));
}

bool Manager::AnotherInstanceServes(const std::string& resource_name) const {
  const std::string own = server::SocketFileName(resource_name, instance_id_);
  for (const std::string& file : fd::ListDir(SocketDir())) {
    if (file == own || !file.starts_with(resource_name + "-") || !file.ends_with(".sock")) {
      continue;
    }
    if (file.size() == own.size() && server::SocketHasListener(Cat(SocketDir(), "/", file))) {
      return true;
    }
  }
  return false;
}

void Manager::RemoveCdiSpec(const Resource& res) {
  if (!options_.use_cdi) return;
  if (AnotherInstanceServes(res.config.resource_name)) {
    log::Info(Cat(res.config.FullName(), ": another instance serves it; keeping its CDI spec"));
    return;
  }
  if (auto s = cdi::RemoveSpec(options_.cdi_spec_dir, cdi::SpecFileName(res.config)); !s.ok()) {
    log::Warn(std::string(s.message()));
  }
}

}  // namespace rdmadp::manager
