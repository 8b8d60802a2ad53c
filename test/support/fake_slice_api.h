// An in-process fake of the API server's ResourceSlice endpoints, on a clock the test holds:
// the behaviour of test/manifests/fake_apiserver.mjs for what the slice publisher sends
// (list, watch, create, update, delete, the dry-run create, the node GET), ported from that
// file, not designed anew, with its faults driven by method calls instead of its admin API.
// No TLS, no schema or per-release validation: those stay with the JavaScript server, which
// keeps the end-to-end and per-release tests. What this one adds is time: every wait of a
// request (a held write, an open watch, a black-holed watch until the client's idle limit)
// is on the given kube::ThreadClock, so a test on testing::ManualClock runs a 30 s retry grid
// in microseconds and reads each request's exact time (Requests()).
//
// Mirrors fake_apiserver.mjs:
//  - handle(): a request is first counted and logged, then /outage answers 503, then an
//    injected fault (/fault: first match by method and URL substring, `count` times; 429
//    carries Retry-After; `hold` parks it until Release(); `body` is a broken answer)
//    answers, then the route;
//  - list: items of the field selector (spec.nodeName, spec.driver) and the server's
//    resourceVersion; watch: 200, then the events after `resourceVersion` (ERROR 410 when it
//    is older than the compacted revision), then live events, bookmarks when asked for, the
//    end at timeoutSeconds; /short-watches ends each at once, /black-hole-watches keeps them
//    open and silent (the client's idle limit ends them), /drop-watches and /outage cut them;
//  - create (POST, generateName, 409 AlreadyExists, dryRun=All stores nothing), update (PUT:
//    404, 409 on a stale resourceVersion, unconditional without one), delete (DELETE: 404),
//    each a new revision and one watch event; /hold parks create and update answers after
//    the write is stored and its event sent; /wipe is a delete-collection by field selector;
//    /compact moves the revision on and forgets the event window; /tick moves it on;
//  - /down: every request is a transport failure (nothing listening) until Up().
//
// Threads: every call from any thread. Transports follow kube::ApiTransport's rules. Every
// wait is on `clock`; every wake-up goes through clock.NotifyAll.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "pkg/kube/api_transport.h"
#include "pkg/kube/thread_clock.h"

namespace rdmadp::testing {

class FakeSliceApi {
 public:
  using TimePoint = kube::ThreadClock::time_point;

  // `watch_idle`: the transports' idle limit (kube::ApiConfig::watch_idle): a stream that
  // carries nothing for that long on `clock` ends with DeadlineExceeded, as RestClient's does.
  // `bookmark_every` (fake_apiserver.mjs --bookmark-ms; 0: none but Bookmark()'s): each watch
  // that asked for bookmarks gets one this often from its start, as kube-apiserver's watch
  // cache sends one about every minute.
  explicit FakeSliceApi(const kube::ThreadClock& clock,
                        std::chrono::seconds watch_idle = std::chrono::seconds(90),
                        std::chrono::seconds bookmark_every = std::chrono::seconds(0));
  ~FakeSliceApi();
  FakeSliceApi(const FakeSliceApi&) = delete;
  FakeSliceApi& operator=(const FakeSliceApi&) = delete;

  // A transport for one thread of a component (PublisherOptions::connect).
  std::unique_ptr<kube::ApiTransport> Connect();

  // The admin API of fake_apiserver.mjs.
  struct Fault {
    std::string method{};  // "" = any
    std::string match{};   // a substring of the URL ("" = any)
    long code = 500;
    int count = 1;
    int retry_after = 1;  // seconds, sent with a 429 only (as the JavaScript server does)
    bool hold = false;    // answered only at Release()
    // A broken answer (fake_apiserver.mjs brokenAnswer with `body`): this text, as it is, with
    // `code` (give 200 for a broken success); on a watch, each line of it as an event line.
    std::optional<std::string> body{};
  };
  void AddFault(Fault fault);                                    // POST /fault
  int Wipe(const std::map<std::string, std::string>& selector);  // POST /wipe; deleted count
  void Hold();                                                   // POST /hold
  void Release();                                                // POST /release
  void DropWatches();                                            // POST /drop-watches
  void Compact();                                                // POST /compact
  void BlackHoleWatches(bool on);                                // POST /black-hole-watches
  void ShortWatches(bool on);                                    // POST /short-watches
  void Outage(bool on);                                          // POST /outage
  void Down();                                                   // POST /down
  void Up();                                                     // POST /up
  void Tick();                                                   // POST /tick
  void Bookmark();                                               // POST /bookmark

  // GET /requests: each API request as it arrived, at the clock's time, and the code it
  // was answered (a watch: 200 when it opened; a transport failure: 0).
  struct Request {
    TimePoint t;
    std::string method, url;
    long code = 0;
  };
  std::vector<Request> Requests() const;
  // GET /stats (the counters the publisher's tests read).
  struct Stats {
    uint64_t writes = 0;  // stored creates, updates and deletes
    uint64_t creates = 0, updates = 0, deletes = 0, dry_runs = 0;
    uint64_t lists = 0, watches_opened = 0, conflicts = 0;
    uint64_t refused = 0;        // answered 503 by Outage()
    uint64_t faults_served = 0;  // injected answers
    uint64_t held = 0;           // answers parked now
    int open_watches = 0;
    std::string last_watch_from;  // the resourceVersion of the latest watch
  };
  Stats stats() const;
  // GET /slices: name -> object.
  std::map<std::string, nlohmann::json> Slices() const;
  std::string resource_version() const;

 private:
  class Transport;
  struct Watch;
  // One request through the fake, on the calling transport's thread.
  absl::StatusOr<kube::HttpResponse> Handle(Transport& from, const std::string& method,
                                            const std::string& url, const std::string& body);
  absl::StatusOr<long> Stream(Transport& from, const std::string& url,
                              const std::function<bool(std::string_view)>& on_line,
                              const std::function<void()>& on_open);
  void Record(const std::string& type, const nlohmann::json& object);  // requires mu_
  std::string BookmarkLine() const;                                    // requires mu_

  const kube::ThreadClock& clock_;
  const std::chrono::seconds watch_idle_;
  const std::chrono::seconds bookmark_every_;
  mutable std::mutex mu_;
  std::condition_variable changed_;  // events, ends of watches, releases, cancels
  // The rest is under mu_.
  uint64_t rv_ = 100;
  uint64_t compacted_rv_ = 0;
  std::map<std::string, nlohmann::json> slices_;
  struct Event {
    uint64_t rv;
    std::string type;
    nlohmann::json object;
  };
  std::vector<Event> events_;  // the watch cache's window (fake_apiserver.mjs kEventWindow)
  std::set<Watch*> watches_;
  std::vector<Fault> faults_;
  bool hold_writes_ = false;
  uint64_t release_generation_ = 0;  // Release() count: held answers wait for it to move
  bool outage_ = false;
  bool down_ = false;
  bool short_watches_ = false;
  bool black_hole_ = false;
  std::vector<Request> requests_;
  Stats stats_;
};

}  // namespace rdmadp::testing
