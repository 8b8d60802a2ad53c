#include "pkg/dra/status/status_writer.h"

#include "pkg/dra/slices/slice_writer.h"
#include "pkg/dra/status/interface_addresses.h"
#include "pkg/kube/json_read.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {
namespace {

constexpr size_t kMaxStatusProblemsSaid = 64;

// The request's wait at most: the daemon's shutdown ends it anyway (Shutdown).
constexpr std::chrono::milliseconds kCallTimeout{10000};  // a GET or an apply

std::string ClaimName(const PreparedClaim& c) { return Cat(c.namespace_, "/", c.name); }

}  // namespace

absl::StatusOr<std::unique_ptr<ClaimStatusWriter>> ClaimStatusWriter::Start(
    StatusWriterOptions options) {
  if (!options.connect || !options.write_budget) {
    return absl::InvalidArgumentError("claim status writer: no transport or write budget");
  }
  auto api = options.connect();
  if (!api.ok()) return api.status();
  std::unique_ptr<ClaimStatusWriter> w(new ClaimStatusWriter(std::move(options)));
  w->api_ = std::move(*api);
  w->thread_ = std::thread([raw = w.get()] { raw->Loop(); });
  return w;
}

ClaimStatusWriter::ClaimStatusWriter(StatusWriterOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : kube::SteadyThreadClock()),
      retry_(options_.jitter, options_.spread, options_.phase) {}

ClaimStatusWriter::~ClaimStatusWriter() {
  {
    sync::MutexLock lock(mu_);
    stopping_ = true;
  }
  clock_.NotifyAll(changed_);
  if (api_) api_->Shutdown();
  if (thread_.joinable()) thread_.join();
}

void ClaimStatusWriter::Prepared(PreparedClaim claim) {
  std::string told;
  {
    sync::MutexLock lock(mu_);
    const std::string uid = claim.uid;
    auto it = tracked_.find(uid);
    if (it == tracked_.end()) {
      if (tracked_.size() >= kMaxTrackedClaims) {
        ++stats_.untracked;
        told = Problem(Cat("more than ", kMaxTrackedClaims,
                           " prepared claims: the device status of ResourceClaim ",
                           ClaimName(claim), " is not written"));
      } else {
        tracked_[uid] = Tracked{std::move(claim), false};
        pending_.insert(uid);
        addresses_stale_ = true;
      }
    } else {
      // Prepared again (a kubelet restart replays it): what we wrote last stands unless the
      // claim says otherwise now.
      const bool same = it->second.claim.devices == claim.devices;
      if (!same || !SameReport(it->second.claim.reported, claim.reported)) {
        it->second.claim = std::move(claim);
      }
      it->second.given_up = false;
      pending_.insert(uid);
      addresses_stale_ = true;
    }
  }
  if (!told.empty() && options_.on_problem) options_.on_problem(told);
  clock_.NotifyAll(changed_);
}

void ClaimStatusWriter::Recovered(std::string namespace_, std::string name, std::string uid) {
  {
    sync::MutexLock lock(mu_);
    if (tracked_.count(uid) != 0 || recover_.size() >= kMaxTrackedClaims) return;
    PreparedClaim c;
    c.namespace_ = std::move(namespace_);
    c.name = std::move(name);
    c.uid = std::move(uid);
    recover_.push_back(std::move(c));
  }
  clock_.NotifyAll(changed_);
}

bool ClaimStatusWriter::Recover(const PreparedClaim& wanted) {
  api_->ResetCancel();
  const auto r = api_->Call("GET",
                            Cat("/apis/resource.k8s.io/v1/namespaces/", wanted.namespace_,
                                "/resourceclaims/", wanted.name),
                            "", kCallTimeout);
  const long code = r.ok() ? r->code : 0;
  sync::MutexLock lock(mu_);
  if (stopping_) return false;
  if (code != 200 && code != 404) {
    not_before_ = retry_.Failed(clock_.Now(), {code, r.ok() ? r->retry_after_seconds : 0});
    recover_.push_back(wanted);  // its turn comes again after the wait
    return true;
  }
  retry_.Succeeded();
  if (code == 404 || tracked_.count(wanted.uid) != 0) return true;
  const auto claim = nlohmann::json::parse(r->body, nullptr, false);
  if (kube::Str(kube::Obj(claim, "metadata"), "uid") != wanted.uid) return true;  // re-created
  PreparedClaim c = wanted;
  const nlohmann::json* results = kube::Arr(
      kube::Obj(kube::Obj(kube::Obj(claim, "status"), "allocation"), "devices"), "results");
  for (const auto& result : results != nullptr ? *results : nlohmann::json::array()) {
    if (kube::Str(result, "driver") != options_.driver) continue;
    c.devices.push_back(
        {kube::Str(result, "pool"), kube::Str(result, "device"), kube::Str(result, "shareID")});
  }
  if (c.devices.empty() || tracked_.size() >= kMaxTrackedClaims) return true;  // deallocated
  c.reported = ReportedEntries(claim, options_.driver, c.devices);
  tracked_[c.uid] = Tracked{c, false};
  pending_.insert(c.uid);
  ++stats_.recovered;
  return true;
}

void ClaimStatusWriter::Unprepared(const std::string& uid) {
  sync::MutexLock lock(mu_);
  tracked_.erase(uid);
  pending_.erase(uid);
  std::erase_if(recover_, [&](const PreparedClaim& c) { return c.uid == uid; });
}

void ClaimStatusWriter::SetView(DraViewPtr view) {
  {
    sync::MutexLock lock(mu_);
    view_ = std::move(view);
    addresses_stale_ = true;  // read again once for this pass
    for (const auto& [uid, t] : tracked_) {
      if (!t.given_up) pending_.insert(uid);
    }
  }
  clock_.NotifyAll(changed_);
}

StatusWriterStats ClaimStatusWriter::stats() const {
  sync::MutexLock lock(mu_);
  StatusWriterStats s = stats_;
  s.tracked = tracked_.size();
  s.pending = pending_.size() + recover_.size() + (checking_ ? 1 : 0);
  for (const auto& [uid, t] : tracked_) s.given_up_claims += t.given_up ? 1 : 0;
  return s;
}

std::string ClaimStatusWriter::Problem(const std::string& line) {
  stats_.problem = line;
  if (said_.size() >= kMaxStatusProblemsSaid) said_.clear();
  return said_.insert(line).second ? line : "";
}

bool ClaimStatusWriter::AwaitTurn(sync::MutexLock& lock, std::string* uid,
                                  std::optional<PreparedClaim>* recover) {
  for (;;) {
    if (stopping_) return false;
    const auto now = clock_.Now();
    if (!recover_.empty() && now >= not_before_) {
      *recover = std::move(recover_.front());
      recover_.pop_front();
      checking_ = true;
      return true;
    }
    kube::RetrySchedule::Time until = not_before_;
    if (stats_.field_dropped) until = std::max(until, recheck_at_);
    if (view_ && !pending_.empty() && now >= until) {
      // Round the set from the last one checked: a claim that keeps failing (its retry
      // re-queues it) never holds up the others.
      auto next = pending_.upper_bound(last_checked_);
      if (next == pending_.end()) next = pending_.begin();
      *uid = *next;
      last_checked_ = *next;
      pending_.erase(next);
      checking_ = true;
      return true;
    }
    if (!recover_.empty()) {
      clock_.WaitUntil(changed_, lock.unique(), not_before_);
    } else if (view_ && !pending_.empty()) {
      clock_.WaitUntil(changed_, lock.unique(), until);
    } else {
      clock_.Wait(changed_, lock.unique());
    }
  }
}

void ClaimStatusWriter::Loop() {
  for (;;) {
    std::string uid;
    std::optional<PreparedClaim> recover;
    {
      sync::MutexLock lock(mu_);
      checking_ = false;
      if (!AwaitTurn(lock, &uid, &recover)) return;
    }
    if (recover ? !Recover(*recover) : !Check(uid)) return;
  }
}

bool ClaimStatusWriter::Check(const std::string& uid) {
  PreparedClaim claim;
  DraViewPtr view;
  bool read_addresses = false;
  {
    sync::MutexLock lock(mu_);
    auto it = tracked_.find(uid);
    if (it == tracked_.end() || it->second.given_up) return true;
    claim = it->second.claim;
    view = view_;
    std::swap(read_addresses, addresses_stale_);
  }
  if (read_addresses) {
    // Once per pass (a view change, a Prepare): getifaddrs dumps every address of the host.
    addresses_ = options_.addresses ? options_.addresses() : ReadInterfaceAddresses();
  }
  const auto wall = options_.wall ? options_.wall() : std::chrono::system_clock::now();
  nlohmann::json entries = DeviceStatusEntries(claim, *view, addresses_);
  StampTransitions(entries, claim.reported, RfcTime(wall));
  if (entries == claim.reported) {
    sync::MutexLock lock(mu_);
    ++stats_.unchanged;
    return true;
  }
  {
    sync::MutexLock lock(mu_);
    const auto now = clock_.Now();
    const auto at = options_.write_budget->Take(now, kStatusBudgetReserve);
    if (at > now) ++stats_.budget_waits;
    kube::WaitUntil(clock_, changed_, lock.unique(), at,
                    [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; });
    if (stopping_) return false;
    // Unprepared while it waited: nothing of ours is written after that.
    if (tracked_.count(uid) == 0) return true;
  }
  api_->ResetCancel();
  const auto r = api_->Call("PATCH", ClaimStatusPath(claim, options_.driver),
                            // A netdev's name is bytes: never a throw on this thread.
                            ClaimStatusApply(claim, entries)
                                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                            kCallTimeout);
  const long code = r.ok() ? r->code : 0;
  const auto answered = clock_.Now();
  std::string info;
  std::string told;
  {
    sync::MutexLock lock(mu_);
    if (stopping_) return false;
    ++stats_.applies_by_code[code];
    auto it = tracked_.find(uid);
    if (code == 200) {
      retry_.Succeeded();
      said_.clear();
      stats_.problem.clear();  // a claim still given up shows as given_up_claims
      const auto answer = nlohmann::json::parse(r->body, nullptr, false);
      const nlohmann::json kept = ReportedEntries(answer, options_.driver, claim.devices);
      if (!kept.empty() || entries.empty()) {
        // Kept: what we applied is the report from now on (compared as we build it, so a
        // value the server stores in another form never makes a write of every check).
        stats_.field_dropped = false;
        if (it != tracked_.end()) it->second.claim.reported = entries;
      } else {
        // The server dropped what we applied: the gate is off (or the release predates the
        // field). This claim waits for the hourly check with the rest.
        if (!stats_.field_dropped) {
          info = Cat("the API server does not keep ResourceClaim status.devices (feature gate ",
                     kDeviceStatusGate,
                     " is off): claims' device status is not reported; "
                     "checked again once an hour");
        }
        stats_.field_dropped = true;
        recheck_at_ = answered + kDroppedFieldRecheck;
        if (it != tracked_.end()) pending_.insert(uid);
      }
    } else {
      const std::string why = r.ok() ? Cat("HTTP ", code, ": ", StatusMessage(r->body))
                                     : std::string(r.status().message());
      const kube::FailedAnswer failed{code, r.ok() ? r->retry_after_seconds : 0};
      const bool refused = code == 404 || code == 409 || code == 422 || code == 400;
      if (refused) {
        // The claim changed under us (deallocated, deleted, re-created) or the server will not
        // take this report: retrying cannot help; its next Prepare tries again.
        ++stats_.given_up;
        if (it != tracked_.end()) it->second.given_up = true;
        told =
            Problem(Cat("ResourceClaim ", ClaimName(claim),
                        ": device status not written, given up until it is prepared again: ", why));
      } else {
        not_before_ = retry_.Failed(answered, failed);
        if (it != tracked_.end()) pending_.insert(uid);
        told = Problem(Cat("ResourceClaim ", ClaimName(claim), ": device status not written (",
                           code == 403 ? "RBAC: see images/components/dra/rbac.yaml" : "retried",
                           "): ", why));
      }
    }
  }
  if (!info.empty() && options_.on_info) options_.on_info(info);
  if (!told.empty() && options_.on_problem) options_.on_problem(told);
  return true;
}

}  // namespace rdmadp::dra
