// Publishes this node's ResourceSlices and keeps them published: the I/O adapter of
// slice_reconciler.h. Two threads of its own, both blocked while nothing happens:
//  - the watcher lists this node's and driver's slices, then watches them (bookmarks on;
//    a 410 or an ERROR event relists; a stream the server ends is resumed from the last
//    resourceVersion), keeping its SliceCache as the API server has the slices;
//  - the writer waits for a change of either side (a wish from the event loop, an event
//    from the watcher), reconciles and writes. A slice deleted behind our back (the
//    kubelet wipes a node's slices at every start) is written again as soon as the watch
//    reports the deletion.
// Failures wait as kube::RetrySchedule says (pkg/kube/retry_schedule.h: never before a
// Retry-After, slow for 401/403, and a server that is away is retried on a grid of its own
// random phase: the writer's every 9.5 s when a change waits, the watcher's after one quick
// retry every 30 s), one schedule per thread; nothing of ours (a wish, a watch event) ends
// such a wait: a wipe meanwhile is repaired when it ends. Which of the two threads talks to a
// server that is away, and when, is OutageTurns' (outage_turns.h: one series of retries per
// node into an outage, not two; docs/performance.md, "A fleet against one API server"); its
// writes' HTTP is SliceWriter's (slice_writer.h). A failed watch resumes from the last
// resourceVersion; a 409, a 410 or an ERROR event relists, and so does the next turn after
// kRelistAfterFailedWatches failed watches in a row: a watch that keeps failing otherwise
// (403 without "watch", 5xx, a silent stream) would never see slices the server lost (a
// kubelet wipes them at every start). That turn lists and then watches at once: one request
// more per kRelistAfterFailedWatches failed watches, on the grid the watches keep. The watcher's
// back-off starts over only after a watch that stayed open (kStayedOpen) or ended as a healthy
// watch ends: a successful list does not count, or a watch refused while lists work (403 without
// "watch", 410, ERROR events) would loop at the first step. A watch the server ends within
// kShortWatch is a failure.
//
// A hard ceiling on writes, whatever the reconciler or the server does: a token bucket of
// kWriteBurst writes refilled at one a second. One node's publisher can never send the API
// server more than that, even through a bug (a fleet of a thousand nodes each in a write
// loop would otherwise take the control plane down).
//
// A pool that changes again within kUpdateSpacing of its last whole update (a flapping port)
// waits until then, its writes coalesced: its first change goes out at once, then at most
// one update a pool per kUpdateSpacing. A pool with a slice to create (a new pool, a wiped
// slice, a pool that grew) never waits, nor does the rest of an update broken off halfway.
//
// Fields the server drops from what we write (a disabled feature gate) are learned from
// its answers (slice_reconciler.h: DroppedFields), reported once each through `on_info`
// with the gate to enable, and never rewritten for. They are re-checked once an hour (one
// write per pool), so enabling the gate is picked up without a restart.
//
// Only our own objects are acted on: list and watch answers carrying another node's or
// driver's slices are ignored (the field selector is the server's promise, not ours).
// Problems reach the caller through `on_problem`, once per distinct line.
//
// Time: every wait and deadline above (the grid, the write budget, the spacing, the hourly
// re-check, the watch-length rules) is on options.clock (steady_clock unless a bench runs
// it faster); the HTTP client's own timeouts are real time.
//
// Threads: Publish() and stats() from any thread (the Manager calls them on its loop);
// on_problem is called on the publisher's threads.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/dra/slices/outage_turns.h"
#include "pkg/dra/slices/server_fields.h"
#include "pkg/dra/slices/slice_cache.h"
#include "pkg/dra/slices/slice_reconciler.h"
#include "pkg/dra/slices/slice_writer.h"
#include "pkg/dra/slices/update_spacing.h"
#include "pkg/kube/rest_client.h"
#include "pkg/kube/retry_schedule.h"
#include "pkg/kube/thread_clock.h"
#include "pkg/rate/shared_budget.h"
#include "pkg/sync/mutex.h"

namespace rdmadp::dra {

struct PublisherOptions {
  kube::ApiConfig api;
  std::string driver;
  std::string node_name;
  // Publisher threads: the capabilities, first when known, then at every change. Until the
  // first call (the first probe answered or failed), nothing is written.
  std::function<void(ServerCapabilities)> on_capabilities;
  std::function<void(std::string problem)> on_problem;  // publisher threads
  std::function<void(std::string info)> on_info;        // publisher threads
  // The jitter of every retry wait (empty: [step/2, step]); tests pass the identity to
  // assert exact request times (a Retry-After's spread stays random: tests assert that no
  // request comes before the Retry-After).
  kube::RetrySchedule::Jitter jitter;
  // The offset of each series of retries on its grid (empty: random; tests pass 0).
  kube::RetrySchedule::Jitter phase;
  // The time of every wait and deadline of the publisher's (null: steady_clock); fleet_bench
  // runs its steady wave on a faster one. Must outlive the publisher.
  const kube::ThreadClock* clock = nullptr;
  // Makes each of the two threads' transports (null: kube::RestClient over `api`); tests
  // pass an in-process API server whose waits are on `clock` (test/support/fake_slice_api.h).
  std::function<absl::StatusOr<std::unique_ptr<kube::ApiTransport>>()> connect;
  // The driver's write budget (null: one of its own, kWriteBurst then one per
  // kWriteInterval); the claim status writer draws from the same one.
  std::shared_ptr<rate::SharedBudget> write_budget;
};

inline constexpr int kWriteBurst = 32;  // a real change of a 2,048-device pool: 32 slices
inline constexpr std::chrono::milliseconds kWriteInterval{1000};
inline constexpr std::chrono::milliseconds kShortWatch{1000};
inline constexpr std::chrono::seconds kStayedOpen{60};
// Failed watches in a row after which the watcher's next turn lists instead (H1 of the
// hardening round at 050f44e): on the slow schedule that is a list about every minute or
// two while watches fail, and a deleted slice is repaired within the back-off's cap.
inline constexpr int kRelistAfterFailedWatches = 3;
inline constexpr std::chrono::milliseconds kProbeRetry{60000};  // after a failed probe

struct PublisherStats {
  uint64_t writes = 0;  // creates + updates + deletes answered 2xx
  // Every write answered (or failed: code 0), by verb (create, update, delete) and code.
  std::map<std::pair<std::string, long>, uint64_t> writes_by_verb_code;
  uint64_t budget_waits = 0;  // writes that waited for the write budget
  FieldPaths dropped_fields;  // fields the server dropped (see above), currently believed
  uint64_t lists = 0;
  uint64_t watches = 0;
  uint64_t conflicts = 0;
  uint64_t failures = 0;  // writes or lists that failed (transport, 4xx, 5xx)
  bool synced = false;    // the first list succeeded
  std::string problem;    // the latest problem, until a list, watch event or write works
  // Nothing left to write now for the current wish; a held pool's change (kUpdateSpacing)
  // counts as written: its slices are published, one change behind.
  bool in_sync = false;
};

class SlicePublisher {
 public:
  static absl::StatusOr<std::unique_ptr<SlicePublisher>> Start(PublisherOptions options);
  ~SlicePublisher();  // ends the watch and both threads; published slices stay
  SlicePublisher(const SlicePublisher&) = delete;
  SlicePublisher& operator=(const SlicePublisher&) = delete;

  // The pools to publish from now on (replaces the previous wish). `assumed`: the server
  // capabilities the wish was made for (what on_capabilities last told the caller); such a
  // wish is written only while they are still the publisher's, so a wish made before the
  // caller heard of a change (and lacking the pools that depend on it) never deletes their
  // slices. Without on_capabilities, wishes do not depend on them and `assumed` is unused.
  void Publish(std::vector<WantedPool> wanted,
               std::optional<ServerCapabilities> assumed = std::nullopt) ABSL_LOCKS_EXCLUDED(mu_);
  PublisherStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  explicit SlicePublisher(PublisherOptions options);
  // The watcher (its thread).
  void WatchLoop();
  // Replaces the cache; false on failure, with what the server answered in `failed`.
  bool List(kube::FailedAnswer* failed);
  // Watches from the cache's resourceVersion until the stream ends; false on any failure, with what
  // the server answered in `failed` (a 410 or an ERROR event also sets relist_).
  bool WatchOnce(kube::FailedAnswer* failed);
  // The watcher's wait after a failure: its schedule's time, then for as long as the writer
  // is retrying a change against a server that is away (its retries probe for the node);
  // once one works, until the watcher's own next grid point. False when stopping.
  bool AwaitWatchTurn(kube::RetrySchedule& retry, const kube::FailedAnswer& failed);
  std::string Selector() const;

  // The writer (its thread).
  void WriteLoop();
  // Waits until the writer has something to do: true to probe, false to reconcile and write
  // (or when stopping).
  bool AwaitWork(sync::MutexLock& lock, const kube::RetrySchedule& retry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The capability probe (and the owner reference, once); false when stopping.
  bool ProbeOnce(kube::RetrySchedule& retry);
  // Sends `writes` (each within the write budget) until one fails or the plan goes stale;
  // false when stopping.
  bool WriteBatch(const std::vector<SliceWrite>& writes, kube::RetrySchedule& retry);
  // One write; false when the writer must stop this round: `failed` says what the server
  // answered (409: relist, no back-off; anything else goes to the RetrySchedule).
  bool Write(const SliceWrite& write, kube::FailedAnswer* failed);
  // The dry-run create of the probe slice; false when it must be tried again, with what the
  // server answered in `failed`.
  bool Probe(kube::FailedAnswer* failed);
  // Waits for a token of the write budget; false when stopping.
  bool TakeWriteToken();
  // A wish that may be written now: there is one, the capabilities are known and it was made
  // for them.
  bool WishWritable() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Learns the fields the server dropped from `written`, given its answer.
  void LearnDropped(const nlohmann::json& written, const nlohmann::json& answer);

  // Both threads.
  // Tells on_capabilities when what fields_ implies changed (or was never told).
  void ReportCapabilities();
  // Tells on_info of fields the server dropped that were never reported; `probe`: learnt
  // from the capability probe (else from a write, which is then not rewritten for them).
  void ReportDropped(const std::vector<std::string>& paths, bool probe);
  void Problem(const std::string& line);
  // turns_.WatcherAnswered / WatcherAsking, notifying as they say.
  void WatcherAnswered(bool away) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WatcherAsking(bool asking) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const PublisherOptions options_;
  const kube::ThreadClock& clock_;
  std::unique_ptr<kube::ApiTransport> watch_client_;  // the watcher's (Cancel: the writer's 409)
  std::unique_ptr<SliceWriter> writes_;               // the writer's

  // From here to the threads, everything is under mu_ (the compiler checks it:
  // pkg/sync/mutex.h); the comment names the thread that changes it.
  mutable sync::Mutex mu_;
  std::condition_variable changed_;             // waited on and notified through clock_
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;  // the destructor's
  // Reconcile due: a wish, a watch event, a list, a write's answer.
  bool dirty_ ABSL_GUARDED_BY(mu_) = true;
  // The watcher must list first (set by both: a 410, the writer's 409).
  bool relist_ ABSL_GUARDED_BY(mu_) = true;
  // The writer's 409s (each cancels the watcher's call).
  uint64_t relist_requests_ ABSL_GUARDED_BY(mu_) = 0;
  struct Wish {
    std::vector<WantedPool> pools;
    std::optional<ServerCapabilities> assumed;  // the caller's stamp (Publish)
  };
  std::optional<Wish> wish_ ABSL_GUARDED_BY(mu_);  // Publish's (the caller's thread)
  // The watcher's, and the answers to the writer's writes.
  SliceCache cache_ ABSL_GUARDED_BY(mu_);
  OutageTurns turns_ ABSL_GUARDED_BY(mu_);      // both threads': who talks to a server away
  UpdateSpacing spacing_ ABSL_GUARDED_BY(mu_);  // the writer's
  ServerFields fields_ ABSL_GUARDED_BY(mu_);    // the writer's: the probe and write answers
  // The hard ceiling on writes (the writer's): kWriteBurst at once, then one a second,
  // shared with the claim status writer (options_.write_budget).
  const std::shared_ptr<rate::SharedBudget> write_budget_;
  std::string last_problem_ ABSL_GUARDED_BY(mu_);
  // Problem lines told since something last worked.
  std::set<std::string> said_ ABSL_GUARDED_BY(mu_);
  PublisherStats stats_ ABSL_GUARDED_BY(mu_);

  std::thread watcher_;
  std::thread writer_;
};

}  // namespace rdmadp::dra
