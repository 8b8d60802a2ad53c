#include "pkg/dra/slices/slice_publisher.h"

#include "pkg/dra/slices/resource_slices.h"
#include "pkg/kube/backoff.h"
#include "pkg/kube/json_read.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {
namespace {

using kube::Obj;
using kube::Str;
constexpr size_t kMaxSaid = 64;  // distinct problem lines remembered as said

}  // namespace

absl::StatusOr<std::unique_ptr<SlicePublisher>> SlicePublisher::Start(PublisherOptions options) {
  std::unique_ptr<SlicePublisher> p(new SlicePublisher(std::move(options)));
  auto connect = [&]() -> absl::StatusOr<std::unique_ptr<kube::ApiTransport>> {
    if (p->options_.connect) return p->options_.connect();
    auto client = kube::RestClient::Create(p->options_.api);
    if (!client.ok()) return client.status();
    return std::unique_ptr<kube::ApiTransport>(std::move(*client));
  };
  auto watch = connect();
  if (!watch.ok()) return watch.status();
  auto write = connect();
  if (!write.ok()) return write.status();
  p->watch_client_ = std::move(*watch);
  p->writes_ = std::make_unique<SliceWriter>(std::move(*write), p->options_.node_name);
  p->watcher_ = std::thread([raw = p.get()] { raw->WatchLoop(); });
  p->writer_ = std::thread([raw = p.get()] { raw->WriteLoop(); });
  return p;
}

SlicePublisher::SlicePublisher(PublisherOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? *options_.clock : kube::SteadyThreadClock()),
      cache_(options_.node_name, options_.driver),
      write_budget_(options_.write_budget != nullptr
                        ? options_.write_budget
                        : std::make_shared<rate::SharedBudget>(kWriteBurst, kWriteInterval)) {}

SlicePublisher::~SlicePublisher() {
  {
    sync::MutexLock lock(mu_);
    stopping_ = true;
  }
  clock_.NotifyAll(changed_);
  if (watch_client_) watch_client_->Shutdown();  // no ResetCancel can undo these
  if (writes_) writes_->Shutdown();
  if (watcher_.joinable()) watcher_.join();
  if (writer_.joinable()) writer_.join();
}

void SlicePublisher::Publish(std::vector<WantedPool> wanted,
                             std::optional<ServerCapabilities> assumed) {
  {
    sync::MutexLock lock(mu_);
    // An unchanged wish (every rescan makes one) is no news: it neither wakes the writer
    // nor marks anything to reconcile.
    if (wish_ && wish_->assumed == assumed && wish_->pools == wanted) return;
    wish_ = Wish{std::move(wanted), assumed};
    dirty_ = true;
  }
  clock_.NotifyAll(changed_);
}

bool SlicePublisher::WishWritable() const {
  // A caller that listens for capabilities makes wishes that depend on them: one made before
  // it heard of the current ones (nullopt: before any) waits for its next wish.
  const auto& told = fields_.told();
  return wish_ && told && (!options_.on_capabilities || wish_->assumed == told);
}

PublisherStats SlicePublisher::stats() const {
  sync::MutexLock lock(mu_);
  PublisherStats s = stats_;
  s.problem = last_problem_;
  s.dropped_fields = fields_.Believed();
  return s;
}

void SlicePublisher::LearnDropped(const nlohmann::json& written, const nlohmann::json& answer) {
  const FieldPaths dropped = DroppedFields(Obj(written, "spec"), Obj(answer, "spec"));
  if (dropped.empty()) return;
  std::vector<std::string> news;
  {
    sync::MutexLock lock(mu_);
    news = fields_.Learned(dropped, clock_.Now());
  }
  ReportCapabilities();  // returns at once when nothing changed
  ReportDropped(news, /*probe=*/false);
}

void SlicePublisher::ReportDropped(const std::vector<std::string>& paths, bool probe) {
  if (!options_.on_info) return;
  for (const std::string& path : paths) {
    const std::string gate = GateDropping(path);
    if (probe) {
      options_.on_info(Cat("the API server does not keep ResourceSlice field spec.", path,
                           gate.empty() ? "" : Cat(" (feature gate ", gate, " is off)"),
                           "; publishing without it"));
    } else {
      options_.on_info(Cat("the API server does not keep ResourceSlice field spec.", path,
                           gate.empty() ? " (a field this API server's release does not know)"
                                        : Cat(" (feature gate ", gate, " is off)"),
                           "; publishing without it, not rewriting for it"));
    }
  }
}

bool SlicePublisher::TakeWriteToken() {
  sync::MutexLock lock(mu_);
  const auto now = clock_.Now();
  const auto at = write_budget_->Take(now);
  if (at > now) ++stats_.budget_waits;
  kube::WaitUntil(clock_, changed_, lock.unique(), at,
                  [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; });
  return !stopping_;
}

std::string SlicePublisher::Selector() const {
  return PercentEncode(Cat("spec.nodeName=", options_.node_name, ",spec.driver=", options_.driver));
}

void SlicePublisher::WatcherAnswered(bool away) {
  if (turns_.WatcherAnswered(away)) clock_.NotifyAll(changed_);
}

void SlicePublisher::WatcherAsking(bool asking) {
  if (turns_.WatcherAsking(asking, clock_.Now())) clock_.NotifyAll(changed_);
}

void SlicePublisher::Problem(const std::string& line) {
  {
    sync::MutexLock lock(mu_);
    if (line == last_problem_) return;
    last_problem_ = line;
    // Said once until something works again: a watch refused every cycle while lists work
    // (RBAC without "watch") would otherwise be said, and counted, at every cycle.
    if (said_.size() >= kMaxSaid) said_.clear();
    if (!said_.insert(line).second) return;
  }
  if (options_.on_problem) options_.on_problem(line);
}

bool SlicePublisher::List(kube::FailedAnswer* failed) {
  auto r = watch_client_->Call("GET", Cat(kSlicesPath, "?fieldSelector=", Selector()));
  auto list =
      r.ok() && r->code == 200 ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    *failed = {r.ok() && r->code != 200 ? r->code : 0, r.ok() ? r->retry_after_seconds : 0};
    {
      sync::MutexLock lock(mu_);
      ++stats_.lists;
      ++stats_.failures;
      WatcherAnswered(kube::Classify(*failed) != kube::FailureClass::kRefused);
    }
    Problem(
        !r.ok() ? std::string(r.status().message())
        : r->code == 200
            ? Cat("listing ResourceSlices: the answer is not a list (", r->body.substr(0, 80), ")")
            : Cat("listing ResourceSlices: HTTP ", r->code, ": ", StatusMessage(r->body),
                  r->code == 403 ? " (grant the DaemonSet's service account list/watch "
                                   "on resourceslices: images/overlays/dra)"
                                 : ""));
    return false;
  }
  sync::MutexLock lock(mu_);
  ++stats_.lists;
  cache_.Replace(list["items"], Str(Obj(list, "metadata"), "resourceVersion"));
  stats_.synced = true;
  relist_ = false;
  WatcherAnswered(false);
  dirty_ = true;
  last_problem_.clear();
  clock_.NotifyAll(changed_);
  return true;
}

bool SlicePublisher::WatchOnce(kube::FailedAnswer* failed) {
  std::string from;
  {
    sync::MutexLock lock(mu_);
    from = cache_.resource_version();
    ++stats_.watches;
  }
  // The server ends a watch after timeoutSeconds; a jittered 5-10 minutes spreads the
  // re-watches of a thousand nodes.
  const int timeout = 300 + static_cast<int>(kube::RandomUpTo(299, kube::ThreadRng()));
  bool relist = false;
  std::string error;
  auto code = watch_client_->Stream(
      Cat(kSlicesPath, "?watch=true&allowWatchBookmarks=true&timeoutSeconds=", timeout,
          "&resourceVersion=", from, "&fieldSelector=", Selector()),
      [&](std::string_view line) {
        auto event = nlohmann::json::parse(line, nullptr, false);
        if (!event.is_object()) return true;
        const std::string type = Str(event, "type");
        const nlohmann::json& object = Obj(event, "object");
        if (type == "ERROR" || type.empty()) {
          error = Cat(type.empty() ? "a watch event without a type"
                                   : Cat("watch ERROR: ", Str(object, "message")),
                      "; listing again");
          relist = true;  // 410 Expired (compacted) or anything else: start over
          return false;
        }
        sync::MutexLock lock(mu_);
        last_problem_.clear();  // the watch works
        if (!cache_.Apply(type, object)) return true;
        dirty_ = true;
        clock_.NotifyAll(changed_);
        return true;
      },
      [this] {
        // The server answered 200: the API is reachable again, even before any event (a
        // watch of an idle node carries none for a minute). A problem reported earlier
        // would otherwise stay on /readyz while everything works.
        sync::MutexLock lock(mu_);
        last_problem_.clear();
        WatcherAnswered(false);
        WatcherAsking(false);
      });
  if (!code.ok()) {
    *failed = {};  // transport, a dead connection, an over-long line: the server is away
    {
      sync::MutexLock lock(mu_);
      WatcherAnswered(true);
    }
    Problem(std::string(code.status().message()));
    return false;
  }
  if (*code != 200) {
    // 410 (a compacted resourceVersion) is the normal end of an old watch: relist, on the
    // grid of a waiting change when a wish waits for the list, else after a quick retry;
    // 401/403 on the slow schedule. Anything else resumes from where we were.
    {
      sync::MutexLock lock(mu_);
      if (*code == 410) relist_ = true;
      WatcherAnswered(*code == 429 || *code >= 500);
    }
    *failed = {*code == 410 ? 0 : *code, watch_client_->stream_retry_after_seconds()};
    Problem(Cat("watching ResourceSlices: HTTP ", *code,
                *code == 403 ? " (grant the DaemonSet's service account \"watch\" on "
                               "resourceslices.resource.k8s.io: images/overlays/dra)"
                             : ""));
    return false;
  }
  *failed = {};
  if (!error.empty()) Problem(error);
  if (relist) {
    sync::MutexLock lock(mu_);
    relist_ = true;
  }
  return !relist;
}

void SlicePublisher::WatchLoop() {
  kube::RetrySchedule retry(options_.jitter, nullptr, options_.phase);
  int failed_watches = 0;  // in a row, since the last list or healthy watch
  int short_watches = 0;   // 200 watches ended within kShortWatch, in a row
  while (true) {
    bool relist = false;
    uint64_t requests = 0;
    {
      // Under the lock the destructor sets stopping_ under; its Shutdown() cannot be undone.
      sync::MutexLock lock(mu_);
      if (stopping_) return;
      watch_client_->ResetCancel();
      relist = relist_;
      requests = relist_requests_;
    }
    // The writer's 409 cancels what runs here to have it list again: that is no failure.
    auto asked_to_relist = [&] {
      sync::MutexLock lock(mu_);
      return relist_requests_ != requests;
    };
    kube::FailedAnswer failed;
    // Marks a list or a watch as out until the server answers (a watch: its 200).
    auto asking = [&](bool on) {
      sync::MutexLock lock(mu_);
      WatcherAsking(on);
    };
    if (relist) asking(true);
    const bool listed = !relist || List(&failed);
    if (relist) asking(false);
    if (relist && listed) failed_watches = 0;
    if (!listed) {
      if (asked_to_relist()) {
        sync::MutexLock lock(mu_);
        WatcherAnswered(false);  // our own cancel, not the server's answer
        continue;
      }
      if (!AwaitWatchTurn(retry, failed)) return;
      continue;
    }
    // A list that works does not start the back-off over: only a watch that works does.
    const auto opened = clock_.Now();
    asking(true);
    const bool healthy = WatchOnce(&failed);
    asking(false);
    if (asked_to_relist()) {
      sync::MutexLock lock(mu_);
      WatcherAnswered(false);
      continue;
    }
    const auto lasted = clock_.Now() - opened;
    if (!healthy || lasted >= kShortWatch) short_watches = 0;
    if (healthy && lasted >= kShortWatch) {
      failed_watches = 0;
      retry.Succeeded();  // the server ended a healthy watch: resume at once ...
      bool writer_away = false;
      {
        sync::MutexLock lock(mu_);
        said_.clear();
        writer_away = turns_.writer_away();
      }
      // ... unless the writer is already retrying against a server that is away: then
      // this is the watcher's turn after a failure (its grid, after the writer's).
      if (writer_away && !AwaitWatchTurn(retry, {})) return;
      continue;
    }
    // A watch that stayed open a while and then failed (a 410 after compaction) is the
    // first failure of a new series, not the next step of an old one.
    if (lasted >= kStayedOpen) retry.Succeeded();
    if (healthy) {  // ended at once: a server (or proxy) that ends every watch
      // Said from the second in a row: one cut connection (an API server's restart) is not
      // that, and its line would come before the real cause (H13 at 050f44e).
      if (++short_watches >= 2) {
        Problem("the API server ends every ResourceSlice watch at once; backing off");
      }
      failed = {};
    }
    // A watch that failed resumes from the cache's resourceVersion: the server replays what
    // happened meanwhile, or answers 410 and we list (WatchOnce set relist_). One request, not two,
    // for each node coming back after an outage. After kRelistAfterFailedWatches in a row, the
    // next turn lists instead: what the server lost meanwhile is seen only by a list.
    // Set after the wait: the wait's pace, and the writer meanwhile, are a failed watch's.
    const bool list_next = ++failed_watches >= kRelistAfterFailedWatches;
    if (!AwaitWatchTurn(retry, failed)) return;
    if (list_next) {
      sync::MutexLock lock(mu_);
      relist_ = true;
    }
  }
}

bool SlicePublisher::AwaitWatchTurn(kube::RetrySchedule& retry, const kube::FailedAnswer& failed) {
  sync::MutexLock lock(mu_);
  // Without a list (the first, or a relist) the writer cannot write a wish it holds: then a
  // change waits on the watcher, which retries at the writer's pace.
  const bool writer_waits = wish_ && (!stats_.synced || relist_);
  auto until =
      retry.Failed(clock_.Now(), failed, writer_waits ? kube::Pace::kUrgent : kube::Pace::kIdle);
  while (true) {
    kube::WaitUntil(clock_, changed_, lock.unique(), until,
                    [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; });
    // A write in flight is waited for: its answer says whether the writer is away (else a
    // quick retry and the write's failure could both be spent on the same outage).
    kube::Wait(clock_, changed_, lock.unique(),
               [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !turns_.writing(); });
    // While the writer is retrying a change against a server that is away, its retries
    // are this node's probes: the watcher sends nothing. A relist is the watcher's to do
    // whatever the writer waits for (the writer waits for the list).
    if (stopping_ || !turns_.writer_away() || relist_) return !stopping_;
    const uint64_t answers_seen = turns_.writer_answers();
    kube::Wait(clock_, changed_, lock.unique(), [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || !turns_.writer_away() || relist_;
    });
    if (stopping_) return false;
    if (turns_.writer_answers() == answers_seen || relist_) return true;  // nothing left to write
    // The writer found the server back: the watch resumes at its own next grid point,
    // spread with the other nodes' re-watches, not on the heels of the write.
    until = retry.NextGridPoint(clock_.Now(), kube::Pace::kIdle);
  }
}

bool SlicePublisher::Write(const SliceWrite& w, kube::FailedAnswer* failed) {
  const SliceWriter::Answer r = writes_->Send(w);
  sync::MutexLock lock(mu_);
  ++stats_.writes_by_verb_code[{std::string(Verb(w.kind)), r.ok() ? r->code : 0}];
  if (r.ok() && (r->code == 200 || r->code == 201)) {
    ++stats_.writes;
    last_problem_.clear();
    said_.clear();
    if (w.kind == SliceWrite::Kind::kDelete) {
      cache_.Erase(w.name);
    } else {
      auto object = nlohmann::json::parse(r->body, nullptr, false);
      if (object.is_object() && cache_.Ours(object) &&
          !Str(Obj(object, "metadata"), "name").empty()) {
        lock.Unlock();
        LearnDropped(w.object, object);
        lock.Lock();
        cache_.Written(object);
      }
    }
    return true;
  }
  ++stats_.failures;
  *failed = {r.ok() ? r->code : 0, r.ok() ? r->retry_after_seconds : 0};
  if (r.ok() && r->code == 404 && w.kind != SliceWrite::Kind::kCreate) {
    cache_.Erase(w.name);  // already gone (a wipe raced us): reconcile again
    return true;
  }
  if (r.ok() && r->code == 409) {
    ++stats_.conflicts;  // our copy is stale: the watcher relists, then we reconcile
    relist_ = true;
    ++relist_requests_;       // the watcher's cancelled list or watch is this, not a failure
    watch_client_->Cancel();  // under mu_: the watcher's ResetCancel is too
    return false;
  }
  lock.Unlock();
  Problem(WriteProblem(w, r));
  return false;
}

bool SlicePublisher::Probe(kube::FailedAnswer* failed) {
  // One device with every gated field we may set: the answer shows which the server keeps.
  const nlohmann::json probe = ProbeSlice(options_.driver, options_.node_name);
  if (!TakeWriteToken()) return false;
  const SliceWriter::Answer r = writes_->Probe(probe);
  auto answer =
      r.ok() && r->code == 201 ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
  {
    sync::MutexLock lock(mu_);
    ++stats_.writes_by_verb_code[{"probe", r.ok() ? r->code : 0}];
  }
  if (!answer.is_object()) {
    *failed = {r.ok() && r->code != 201 ? r->code : 0, r.ok() ? r->retry_after_seconds : 0};
    Problem(!r.ok() ? std::string(r.status().message())
                    : Cat("probing what the API server keeps of a ResourceSlice (a dry-run "
                          "create): HTTP ",
                          r->code, ": ", StatusMessage(r->body)));
    return false;
  }
  const FieldPaths dropped = DroppedFields(Obj(probe, "spec"), Obj(answer, "spec"));
  std::vector<std::string> news;  // told outside the lock: a callback may call stats()
  {
    sync::MutexLock lock(mu_);
    const auto now = clock_.Now();
    news = fields_.Probed(
        dropped, now,
        now + kRecheckDropped - std::chrono::minutes(kube::RandomUpTo(9, kube::ThreadRng())));
    dirty_ = true;
  }
  ReportDropped(news, /*probe=*/true);
  ReportCapabilities();
  return true;
}

void SlicePublisher::ReportCapabilities() {
  std::optional<ServerCapabilities> caps;
  {
    sync::MutexLock lock(mu_);
    // A wish stamped with other capabilities waits for the caller's next (WishWritable).
    caps = fields_.ToTell();
  }
  if (caps && options_.on_capabilities) options_.on_capabilities(*caps);
}

void SlicePublisher::WriteLoop() {
  kube::RetrySchedule retry(options_.jitter, nullptr, options_.phase);
  while (true) {
    bool probe = false;
    bool join_series = false;
    std::vector<SliceWrite> writes;
    {
      sync::MutexLock lock(mu_);
      probe = AwaitWork(lock, retry);
      if (stopping_) return;
      if (!probe) {
        dirty_ = false;
        const auto now = clock_.Now();
        writes = spacing_.Hold(Reconcile(cache_.slices(), wish_->pools, fields_.Active(now)),
                               cache_.slices(), now);
        // A held pool's change is not "unpublished": its slices are there, one change
        // behind (readiness must not flap with a port).
        stats_.in_sync = writes.empty();
        if (writes.empty()) {
          if (turns_.NothingToWrite()) clock_.NotifyAll(changed_);  // the watcher's turn
        } else if (turns_.JoinsGrid()) {
          join_series = true;
        } else {
          turns_.BatchStarts();
        }
      }
    }
    if (probe) {
      if (!ProbeOnce(retry)) return;
      continue;
    }
    if (join_series) {
      // The watcher found the server away twice running (not a blip its quick retry got
      // past): this change is not sent now but a whole period later, then on its grid
      // (RetrySchedule::Join), so that the node's requests in a 60 s outage stay at 8.
      retry.Join(clock_.Now());
      sync::MutexLock lock(mu_);
      turns_.Joined();
      dirty_ = true;
      clock_.NotifyAll(changed_);
      continue;
    }
    if (!WriteBatch(writes, retry)) return;
  }
}

bool SlicePublisher::AwaitWork(sync::MutexLock& lock, const kube::RetrySchedule& retry) {
  // Probe when one is due, write when there is a wish to write and something to do; both
  // only once the list is in, and never before the server's wait is over.
  while (!stopping_) {
    const auto now = clock_.Now();
    // The probe is never urgent: while the server is away (the writer's change is the
    // node's probe, or the watcher found it away) it waits for its return.
    const auto next_probe = fields_.next_probe();
    const bool probe_due = now >= next_probe;
    const auto& held_until = spacing_.held_until();
    if (!stats_.synced || relist_) {
      clock_.Wait(changed_, lock.unique());
    } else if (now < retry.not_before()) {
      clock_.WaitUntil(changed_, lock.unique(), retry.not_before());
    } else if (probe_due && !turns_.server_away()) {
      return true;
    } else if (const auto hold = turns_.QuickRetryHold(now)) {
      // The watcher's quick retry is out: its answer tells a blip from an outage.
      clock_.WaitUntil(changed_, lock.unique(), *hold);
    } else if ((dirty_ || (held_until && now >= *held_until)) && WishWritable()) {
      return false;
    } else if (held_until && now < *held_until) {
      clock_.WaitUntil(changed_, lock.unique(),
                       probe_due ? *held_until : std::min(next_probe, *held_until));
    } else {
      // Nothing due, or a held pool's time came while the wish is not writable (it waits
      // for the caller's next wish, which notifies): never a wait already over. A probe due
      // while the server is away waits for its return (OutageTurns' changes notify).
      if (probe_due) {
        clock_.Wait(changed_, lock.unique());
      } else {
        clock_.WaitUntil(changed_, lock.unique(), next_probe);
      }
    }
  }
  return false;
}

bool SlicePublisher::ProbeOnce(kube::RetrySchedule& retry) {
  if (auto problem = writes_->ReadOwnerOnce()) Problem(*problem);
  kube::FailedAnswer failed;
  if (Probe(&failed)) {
    retry.Succeeded();
    return true;
  }
  {
    sync::MutexLock lock(mu_);
    if (stopping_) return false;
  }
  // Publishing does not wait for the probe: what the server keeps is then learnt from the
  // answers to real writes (LearnDropped), and the probe is tried again later.
  const auto now = clock_.Now();
  retry.Failed(now, failed, kube::Pace::kIdle);
  // Publishing must not wait for ever on a server that refuses dry runs: the first failure
  // lets writes go, and their answers teach what the server keeps. Later failures change
  // nothing: what is known stays known.
  bool first = false;
  {
    sync::MutexLock lock(mu_);
    fields_.ProbeFailed(now + kube::Jittered(kProbeRetry));
    first = !fields_.told();
  }
  if (first) ReportCapabilities();
  return true;
}

bool SlicePublisher::WriteBatch(const std::vector<SliceWrite>& writes, kube::RetrySchedule& retry) {
  bool ok = true;
  kube::FailedAnswer failed;
  uint64_t written_before = 0;
  {
    sync::MutexLock lock(mu_);
    written_before = stats_.writes;
  }
  bool complete = true;
  for (const auto& w : writes) {
    if (!TakeWriteToken()) return false;
    {
      // The batch was planned for a wish and a listing: a capability learnt from an
      // earlier write's answer, or a relist, makes the rest stale; plan again.
      sync::MutexLock lock(mu_);
      if (!WishWritable() || relist_) {
        complete = false;
        break;
      }
    }
    if (!(ok = Write(w, &failed))) {
      complete = false;
      break;
    }
  }
  bool wrote = false;
  {
    sync::MutexLock lock(mu_);
    if (!writes.empty()) dirty_ = true;  // check the result: nothing more to write?
    wrote = stats_.writes != written_before;
    // The spacing counts from a pool's whole update; one broken off halfway is not held
    // (its slices would stay at two generations).
    if (complete) spacing_.Written(writes, clock_.Now());
  }
  // A 409 relists (the watcher) and reconciles then; any other failure waits as the
  // schedule says, whatever is wished or seen meanwhile (AwaitWork).
  const bool answered = wrote || (!ok && failed.code == 409);
  const bool failed_here = !ok && failed.code != 409;
  if (wrote) retry.Succeeded();  // a 2xx, not a 404 of a slice already gone
  if (failed_here) retry.Failed(clock_.Now(), failed, kube::Pace::kUrgent);
  sync::MutexLock lock(mu_);
  turns_.BatchEnded(answered, failed_here ? std::optional(failed) : std::nullopt);
  clock_.NotifyAll(changed_);
  return true;
}

}  // namespace rdmadp::dra
