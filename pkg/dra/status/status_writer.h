// Writes ResourceClaim.status.devices for the claims this node prepared (claim_status.h says
// what) and keeps it true: the I/O adapter, one thread of its own, blocked while nothing
// happens.
//
// What it writes and when:
//  - A claim is written once Prepare answered it (Prepared), within the write budget: at
//    once unless the budget or a retry wait holds it. A claim whose report stands (what
//    Prepare read of it, or what we wrote last) is not written again: a replayed Prepare or
//    a restart of ours (Recovered) costs one read a claim and no write.
//  - Every view change (SetView: a rescan, a port going down, an HCA going away) checks
//    every claim again and writes those whose report changed (the Ready condition's status
//    keeps its lastTransitionTime while it holds).
//  - After Unprepared nothing of ours is written for the claim again (one write may be in
//    flight); kube-apiserver refuses entries for devices the claim is no longer allocated,
//    and an apply carrying the claim's UID never lands on a claim re-created under its name.
//  - A claim the server refuses (400, 404 gone, 409, 422 invalid or not allowed) is given up
//    until its next Prepare, said once per distinct problem and counted while it lasts
//    (given_up_claims); 403 (RBAC without the rules of images/components/dra/rbac.yaml)
//    waits on the slow back-off and tries again. Claims waiting for a retry take turns.
//  - After a restart of ours, the claims prepared before it (Recovered: the front end lists
//    them from Prepare's metadata files) are read from the API server, one GET each within
//    the retry rules, and kept true from then on like the others; one deleted or re-created
//    meanwhile is dropped.
//  - Every write takes a token of the driver's one write budget (shared with the slice
//    publisher: rate/shared_budget.h), leaving about kStatusBudgetReserve of its burst to
//    the slices (one less while a status write waits for its turn: a node whose pods all
//    start at once still publishes a port going down at once); every wait after a failure
//    is kube::RetrySchedule's
//    (never before a Retry-After; a server away is retried on the grid). Nothing of ours (a
//    Prepare, a view change) ends such a wait.
//  - A server that drops status.devices (gate DRAResourceClaimDeviceStatus off: beta on by
//    default from 1.33, GA from 1.37) is learnt from the first answer, said once through
//    on_info with the gate to enable, and not written to again but once an hour (a check,
//    one claim), so turning the gate on is picked up without a restart.
//  - At most kMaxTrackedClaims claims are kept; more are not written (counted).
//
// Time: every wait is on options.clock; the HTTP client's own timeouts are real time.
//
// Threads: Prepared, Unprepared, SetView and stats from any thread (Prepare's workers, the
// event loop); on_problem and on_info are called without the writer's lock, on the
// writer's thread (on_problem also on Prepared's, past kMaxTrackedClaims).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "pkg/dra/status/claim_status.h"
#include "pkg/kube/api_transport.h"
#include "pkg/kube/retry_schedule.h"
#include "pkg/kube/thread_clock.h"
#include "pkg/rate/shared_budget.h"
#include "pkg/sync/mutex.h"

namespace rdmadp::dra {

inline constexpr size_t kMaxTrackedClaims = 4096;
inline constexpr int kStatusBudgetReserve = 16;  // of the budget's 32 at once
inline constexpr std::chrono::hours kDroppedFieldRecheck{1};
inline constexpr std::string_view kDeviceStatusGate = "DRAResourceClaimDeviceStatus";

struct StatusWriterOptions {
  std::string driver;
  // Makes the writer's transport (required): a kube::RestClient in the daemon.
  std::function<absl::StatusOr<std::unique_ptr<kube::ApiTransport>>()> connect;
  std::shared_ptr<rate::SharedBudget> write_budget;             // required: the driver's
  const kube::ThreadClock* clock = nullptr;                     // null: steady_clock
  std::function<InterfaceAddresses()> addresses;                // null: ReadInterfaceAddresses
  std::function<std::chrono::system_clock::time_point()> wall;  // null: system_clock::now
  kube::RetrySchedule::Jitter jitter;  // as PublisherOptions' (tests pass the identity)
  kube::RetrySchedule::Jitter spread;  // the extra wait after a Retry-After (tests: 0)
  kube::RetrySchedule::Jitter phase;
  std::function<void(std::string problem)> on_problem;
  std::function<void(std::string info)> on_info;
};

struct StatusWriterStats {
  std::map<long, uint64_t> applies_by_code;  // every apply sent, by HTTP code (0: no answer)
  uint64_t unchanged = 0;                    // checks that found the report standing
  uint64_t given_up = 0;                     // claims the server refused (until re-prepared)
  uint64_t untracked = 0;                    // claims past kMaxTrackedClaims
  uint64_t recovered = 0;                    // claims prepared before a restart, tracked again
  uint64_t budget_waits = 0;
  bool field_dropped = false;  // the server does not keep status.devices (believed now)
  size_t tracked = 0;
  size_t pending = 0;          // claims waiting to be checked or written, or being so
  size_t given_up_claims = 0;  // tracked claims refused, until their next Prepare
  std::string problem;         // the latest refusal, until an apply works
};

class ClaimStatusWriter {
 public:
  static absl::StatusOr<std::unique_ptr<ClaimStatusWriter>> Start(StatusWriterOptions options);
  ~ClaimStatusWriter();  // ends a request in flight and the thread
  ClaimStatusWriter(const ClaimStatusWriter&) = delete;
  ClaimStatusWriter& operator=(const ClaimStatusWriter&) = delete;

  void Prepared(PreparedClaim claim) ABSL_LOCKS_EXCLUDED(mu_);
  // A claim prepared before this writer started (a restart of ours): read, then tracked.
  void Recovered(std::string namespace_, std::string name, std::string uid)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Unprepared(const std::string& uid) ABSL_LOCKS_EXCLUDED(mu_);
  void SetView(DraViewPtr view) ABSL_LOCKS_EXCLUDED(mu_);
  StatusWriterStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  explicit ClaimStatusWriter(StatusWriterOptions options);
  void Loop();
  // The claim to check next, once one may be (a view, a claim pending, no wait running);
  // false when stopping.
  // `recover`: set when the turn is a claim to recover (Recovered), else `uid` is to check.
  bool AwaitTurn(sync::MutexLock& lock, std::string* uid, std::optional<PreparedClaim>* recover)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads a recovered claim and tracks it; false when stopping.
  bool Recover(const PreparedClaim& claim) ABSL_LOCKS_EXCLUDED(mu_);
  // Checks one claim and writes it when its report changed; false when stopping.
  bool Check(const std::string& uid) ABSL_LOCKS_EXCLUDED(mu_);
  // Records `line` as the latest problem; answers it when it is to be told (not said since
  // something last worked), else "". The caller tells it after unlocking.
  std::string Problem(const std::string& line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct Tracked {
    PreparedClaim claim;
    bool given_up = false;  // refused: not written until the next Prepared
  };

  const StatusWriterOptions options_;
  const kube::ThreadClock& clock_;
  std::unique_ptr<kube::ApiTransport> api_;  // the writer thread's (Shutdown: any)

  mutable sync::Mutex mu_;
  std::condition_variable changed_;  // waited on and notified through clock_
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  DraViewPtr view_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Tracked> tracked_ ABSL_GUARDED_BY(mu_);  // by claim UID
  std::set<std::string> pending_ ABSL_GUARDED_BY(mu_);           // UIDs to check
  std::deque<PreparedClaim> recover_ ABSL_GUARDED_BY(mu_);       // Recovered, to read
  bool checking_ ABSL_GUARDED_BY(mu_) = false;                   // one is taken from it
  std::string last_checked_ ABSL_GUARDED_BY(mu_);                // the turn goes on after it
  InterfaceAddresses addresses_;                                 // the writer's thread only
  bool addresses_stale_ ABSL_GUARDED_BY(mu_) = true;             // read again at the next check
  kube::RetrySchedule retry_ ABSL_GUARDED_BY(mu_);
  kube::RetrySchedule::Time not_before_ ABSL_GUARDED_BY(mu_){};  // a failure's wait
  kube::RetrySchedule::Time recheck_at_ ABSL_GUARDED_BY(mu_){};  // while field_dropped
  std::set<std::string> said_ ABSL_GUARDED_BY(mu_);              // problems told since one worked
  StatusWriterStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace rdmadp::dra
