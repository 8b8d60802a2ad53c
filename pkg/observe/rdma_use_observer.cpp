#include "pkg/observe/rdma_use_observer.h"

#include <unistd.h>

#include "pkg/text/cat.h"

namespace rdmadp::observe {
namespace {

std::string Name(const usage::ContainerAllocations& held) {
  return Cat(held.pod_namespace, "/", held.pod, "/", held.container);
}

std::string Minutes(usage::Clock::duration d) {
  return Cat(std::chrono::duration_cast<std::chrono::minutes>(d).count(), " min");
}

void AddObjects(const std::map<std::string, usage::RdmaCgroupCounts>& counts,
                metrics::ContainerRdmaView& c) {
  for (const auto& [hca, n] : counts) {
    c.objects.push_back({hca, "hca_handle", n.hca_handle});
    c.objects.push_back({hca, "hca_object", n.hca_object});
  }
}

metrics::ContainerRdmaView ContainerView(const usage::ContainerUse& use, const usage::OurHcas& hcas,
                                         bool unused) {
  metrics::ContainerRdmaView c{.pod_namespace = use.held.pod_namespace,
                               .pod = use.held.pod,
                               .container = use.held.container,
                               .resources = hcas.ResourcesOf(use.held),
                               .unused = unused,
                               .objects = {}};
  AddObjects(use.counts, c);
  return c;
}

metrics::ContainerRdmaView ForeignView(const usage::ForeignUse& f) {
  metrics::ContainerRdmaView c;
  if (f.names) {
    c.pod_namespace = f.names->pod_namespace;
    c.pod = f.names->pod;
    c.container = f.names->container;
  } else {
    c.container = Cat("id:", f.cgroup.container_id.substr(0, 12));
  }
  AddObjects(f.counts, c);
  for (const auto& [hca, n] : f.qps) c.objects.push_back({hca, "qp", n});
  return c;
}

// Who writes the Events: the node's name, else the host's (the device-plugin DaemonSet
// runs in the host network namespace, where they are one).
std::string ReportingInstance(const std::string& node_name) {
  if (!node_name.empty()) return node_name;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "unknown-node";
  return host;
}

// What an unused container is told, in the log line and the Event's note.
std::string UnusedNote(const usage::ContainerUse& use, const OurDevices& ours,
                       usage::UseSource source) {
  const std::string hcas = use.hcas.empty() ? "no HCA of this node" : Join(use.hcas, ",");
  return Cat("has held ", Join(ours.hcas.ResourcesOf(use.held), ","), " (", hcas, ") for ",
             Minutes(use.sample.age),
             " and uses none of it: no QP and no verbs object beyond contexts (source: ",
             usage::UseSourceName(source),
             "); NCCL or UCX may have fallen back to TCP (docs/observability.md)");
}

}  // namespace

std::string_view EventResultName(EventResult r) {
  switch (r) {
    case EventResult::kCreated:
      return "created";
    case EventResult::kExists:
      return "exists";
    case EventResult::kHeld:
      return "held";
    case EventResult::kFailed:
      return "failed";
  }
  return "?";
}

RdmaUseObserver::RdmaUseObserver(frontend::Host& host, ObserverOptions options, ReadUseFn read)
    : host_(host),
      options_(std::move(options)),
      read_(read
                ? std::move(read)
                : ReadUseFn([sources = options_.sources,
                             kubelet = std::make_shared<usage::PodResourcesClient>(
                                 options_.sources.pod_resources_socket)](
                                const OurDevices& ours, std::chrono::system_clock::time_point now) {
                    return ReadNodeUse(ours, sources, *kubelet, now);
                  })),
      reporting_instance_(ReportingInstance(options_.node_name)),
      thread_([this] { Work(); }) {
  loop::AssertOnLoop(host_.Loop());
  alarm_ = host_.Loop().NewAlarm([this] { Tick(); });
  for (usage::Verdict v : {usage::Verdict::kInGrace, usage::Verdict::kUsed, usage::Verdict::kUnused,
                           usage::Verdict::kUnknown}) {
    view_.verdicts[std::string(usage::VerdictName(v))] = 0;  // every series from the start
  }
  if (options_.events_api) {
    for (EventResult r : {EventResult::kCreated, EventResult::kExists, EventResult::kFailed}) {
      view_.events[std::string(EventResultName(r))] = 0;
    }
    view_.events["dropped"] = 0;
  }
}

RdmaUseObserver::~RdmaUseObserver() { Stop(); }

void RdmaUseObserver::Apply(const config::Config& config, const sysfs::NodeInventory& inventory,
                            std::string_view /*reason*/) {
  loop::AssertOnLoop(host_.Loop());
  const bool first = ours_ == nullptr;
  ours_ = std::make_shared<const OurDevices>(
      OurDevicesOn(config, inventory, options_.node_name, options_.dra_driver));
  if (first && alarm_) {
    alarm_->ArmPeriodic(options_.interval);
    Tick();  // the first sample now: a restart of ours shows the node at once
  }
}

void RdmaUseObserver::Tick() {
  loop::AssertOnLoop(host_.Loop());
  if (sampling_ || ours_ == nullptr) return;  // the last one is still reading: not doubled
  sampling_ = true;
  sync::MutexLock lock(mu_);
  request_ = ours_;
  wake_.notify_one();
}

void RdmaUseObserver::Work() {
  while (true) {
    std::shared_ptr<const OurDevices> ours;
    {
      sync::MutexLock lock(mu_);
      wake_.wait(lock.unique(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || request_ || events_added_;
      });
      if (stopping_) return;
      ours = std::move(request_);
      request_ = nullptr;
      events_added_ = false;
    }
    SendEvents();
    if (ours == nullptr) continue;
    const auto start = std::chrono::steady_clock::now();
    const auto wall = std::chrono::system_clock::now();
    auto use = std::make_shared<NodeUse>(read_(*ours, wall));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double unix_seconds = std::chrono::duration<double>(wall.time_since_epoch()).count();
    host_.Loop().Post([this, alive = alive_, use, ours, seconds, unix_seconds] {
      if (*alive) Sampled(*use, *ours, seconds, unix_seconds);
    });
  }
}

// `ours`: what the sample was read for (a reload since changes the next one).
void RdmaUseObserver::Sampled(const NodeUse& use, const OurDevices& ours, double seconds,
                              double unix_seconds) {
  loop::AssertOnLoop(host_.Loop());
  sampling_ = false;
  if (host_.Stopping()) return;
  ++view_.samples;
  if (!use.list_ok) ++view_.failed_samples;
  view_.last_sample_seconds = seconds;
  view_.last_sample_unix_seconds = unix_seconds;
  view_.ports.clear();
  for (const sysfs::PortCounters& p : use.ports) {
    view_.ports.push_back({p.hca, p.port, p.counters, p.hw_counters});
  }
  SayListState(use);
  SayNewProblems(use.view.problems);
  // A failed List says nothing of who holds what: the verdicts stand until one succeeds
  // (an empty round would forget every container and start its grace again).
  if (!use.list_ok) return;
  std::map<std::string, usage::UseSample> round;
  std::map<std::string, usage::Clock::duration> graces;
  std::map<std::string, const usage::ContainerUse*> by_key;
  for (const usage::ContainerUse& c : use.view.containers) {
    const std::string key = usage::UseKey(c);
    round[key] = c.sample;
    graces[key] = ours.GraceOf(c.held, options_.grace);
    by_key[key] = &c;
  }
  for (const auto& change : book_.Round(host_.Loop().Now(), round, options_.grace, graces)) {
    Say(change, *by_key.at(change.key), ours);
    if (change.after.verdict == usage::Verdict::kUnused && options_.events_api) {
      QueueEvent(*by_key.at(change.key),
                 UnusedNote(*by_key.at(change.key), ours, change.after.source));
    }
  }
  for (auto& [verdict, n] : view_.verdicts) n = 0;
  view_.containers.clear();
  view_.foreign.clear();
  for (const usage::ContainerUse& c : use.view.containers) {
    const usage::Verdict verdict = book_.entries().at(usage::UseKey(c)).judgement.verdict;
    ++view_.verdicts[std::string(usage::VerdictName(verdict))];
    if (view_.containers.size() < metrics::kMaxRdmaUseContainers) {
      view_.containers.push_back(ContainerView(c, ours.hcas, verdict == usage::Verdict::kUnused));
    }
  }
  for (const usage::ForeignUse& f : use.view.foreign) {
    if (view_.foreign.size() == metrics::kMaxRdmaUseContainers) break;
    view_.foreign.push_back(ForeignView(f));
  }
  if (!use.view.host_qps.empty()) {  // the host's own processes: container="host"
    metrics::ContainerRdmaView host{.pod_namespace = "",
                                    .pod = "",
                                    .container = "host",
                                    .resources = {},
                                    .unused = false,
                                    .objects = {}};
    for (const auto& [hca, n] : use.view.host_qps) host.objects.push_back({hca, "qp", n});
    view_.foreign.push_back(std::move(host));
  }
}

// The kubelet's API failing is one line when it starts, whatever gRPC's words for it each
// time, and one when it is read again.
void RdmaUseObserver::SayListState(const NodeUse& use) {
  if (!use.list_ok && !list_failing_) {
    host_.ReportProblem(log::Level::kWarn, "usage",
                        Cat(use.list_error, "; the verdicts stand until it can be read"),
                        {.resource = {}, .hca = {}, .event = "rdma-use"});
  } else if (use.list_ok && list_failing_) {
    log::Info("the kubelet's pod-resources API is read again",
              {.resource = {}, .hca = {}, .event = "rdma-use"});
  }
  list_failing_ = !use.list_ok;
}

// Each problem once while it lasts: said when it first appears, again only after a sample
// without it (memory: the last sample's problems, which the reads' caps bound).
void RdmaUseObserver::SayNewProblems(const std::vector<std::string>& problems) {
  std::set<std::string> now(problems.begin(), problems.end());
  for (const std::string& p : now) {
    if (!problems_said_.contains(p)) {
      host_.ReportProblem(log::Level::kWarn, "usage", p,
                          {.resource = {}, .hca = {}, .event = "rdma-use"});
    }
  }
  problems_said_ = std::move(now);
}

// One line per container and verdict change: a warning when it turns unused.
void RdmaUseObserver::Say(const usage::VerdictBook::Change& change, const usage::ContainerUse& use,
                          const OurDevices& ours) const {
  const std::string who = Name(use.held);
  const std::string hcas = use.hcas.empty() ? "no HCA of this node" : Join(use.hcas, ",");
  const std::string resources = Join(ours.hcas.ResourcesOf(use.held), ",");
  const log::Fields fields{.resource = resources, .hca = {}, .event = "rdma-use"};
  const usage::Judgement& j = change.after;
  switch (j.verdict) {
    case usage::Verdict::kUnused:
      log::Warn(Cat("container ", who, " ", UnusedNote(use, ours, j.source)), fields);
      break;
    case usage::Verdict::kUsed:
      log::Info(Cat("container ", who, " uses ", resources, " (", hcas,
                    "; source: ", usage::UseSourceName(j.source), ")"),
                fields);
      break;
    case usage::Verdict::kInGrace:
      log::Info(Cat("container ", who, " holds ", resources, " (", hcas,
                    ") and uses none of it yet; judged after ",
                    Minutes(ours.GraceOf(use.held, options_.grace)),
                    " (unusedGraceSeconds, or --rdma-unused-grace)"),
                fields);
      break;
    case usage::Verdict::kUnknown:
      log::Info(
          Cat("container ", who, " holds ", resources, ": its use cannot be read: ", use.missing),
          fields);
      break;
  }
}

void RdmaUseObserver::QueueEvent(const usage::ContainerUse& use, std::string note) {
  if (!use.names) return;  // no UID to name the pod by (the verdict is never unused so)
  UnusedEvent e{.pod_namespace = use.held.pod_namespace,
                .pod = use.held.pod,
                .pod_uid = use.names->pod_uid,
                .container = use.held.container,
                .container_id = use.names->container_id,
                .note = Cat("Container ", use.held.container, " ", note)};
  sync::MutexLock lock(mu_);
  if (events_.size() >= kMaxPendingEvents) {
    ++view_.events["dropped"];
    return;
  }
  events_.push_back(std::move(e));
  events_added_ = true;
  wake_.notify_one();
}

void RdmaUseObserver::SendEvents() {
  if (!options_.events_api) return;
  std::map<EventResult, uint64_t> results;
  std::vector<std::string> errors;
  while (true) {
    UnusedEvent e;
    {
      sync::MutexLock lock(mu_);
      if (events_.empty() || stopping_) break;
      e = events_.front();
    }
    EventResult result = EventResult::kFailed;
    std::string error;
    if (sender_ == nullptr) {
      auto api = options_.events_api();
      if (api.ok()) {
        sender_ = std::make_unique<EventSender>(
            std::move(*api), options_.events_clock ? options_.events_clock : [] {
              return std::chrono::steady_clock::now();
            });
      } else {
        error = std::string(api.status().message());
      }
    }
    if (sender_ != nullptr) {
      result = sender_->Send(e, reporting_instance_, std::chrono::system_clock::now(), &error);
    }
    if (result == EventResult::kHeld) break;  // its turn comes again
    {
      sync::MutexLock lock(mu_);
      events_.pop_front();
    }
    ++results[result];
    if (!error.empty()) {
      errors.push_back(
          Cat("RDMAUnused Event on pod ", e.pod_namespace, "/", e.pod, " not written: ", error));
    }
  }
  if (results.empty()) return;
  host_.Loop().Post([this, alive = alive_, results, errors] {
    if (*alive) EventsSent(results, errors);
  });
}

// Each way of failing is said once (bounded: the first kMaxPendingEvents kinds).
void RdmaUseObserver::EventsSent(const std::map<EventResult, uint64_t>& results,
                                 const std::vector<std::string>& errors) {
  loop::AssertOnLoop(host_.Loop());
  for (const auto& [result, n] : results) view_.events[std::string(EventResultName(result))] += n;
  for (const std::string& error : errors) {
    if (event_errors_said_.size() >= kMaxPendingEvents || event_errors_said_.contains(error)) {
      continue;
    }
    event_errors_said_.insert(error);
    host_.ReportProblem(log::Level::kWarn, "usage", error,
                        {.resource = {}, .hca = {}, .event = "rdma-use"});
  }
}

void RdmaUseObserver::Collect(metrics::View& view) const {
  loop::AssertOnLoop(host_.Loop());
  view.rdma_use = view_;
}

void RdmaUseObserver::Stop() {
  if (alarm_) alarm_->Disarm();
  *alive_ = false;
  {
    sync::MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace rdmadp::observe
