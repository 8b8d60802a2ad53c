// The registration lifecycle of one resource, as a pure state machine: events and facts in,
// actions out. No I/O, no threads, no clock of its own (the caller passes `now`), so every
// path is a unit test, and the table below is checked row by row. Each front end owns one
// per resource (the DRA front end one for its driver) on the event loop, and carries out
// the actions through RegistrationExecutor (registration_executor.h): serve a socket, start
// or cancel a Register, arm a timer. Data that only one phase has lives in that phase
// (PhaseData), so it cannot outlive it.
//
// Why it looks like this (docs/kubelet-versions.md):
//  - exactly one registration per event: a successful registration disarms every pending
//    retry; a new kubelet.sock is recognised by its identity (inode + ctime), so the same
//    kubelet is never registered with twice;
//  - a dead kubelet.sock (the old kubelet's file during a restart) is waited out: the
//    registrar reports "no listener" without sending anything, and the machine waits for
//    the new file, probing with the damped policy only as a safety net;
//  - a Register rejected with "already connected" (v1.37+, keyed by socket path) while our
//    stream is open means the kubelet already has us: counted as registered;
//  - watcher mode never re-creates its socket because a kubelet restarted: the kubelet's
//    plugin watcher walks plugins_registry at every start and finds the socket. Only when
//    no GetInfo comes within kWatcherGrace (longer than two 1 s reconciler passes; a new
//    stream alone is no registration) is the socket re-created, once; or after
//    Notify(false); or at once
//    when the very kubelet that registered us is still listening (it dropped us, e.g. the
//    old pod's socket went away in a rolling update on <= v1.36, and will not re-walk);
//  - two damping policies, for two different things. A Register that fails, goes
//    unanswered, or finds no listener (a kubelet that is down or broken) backs off
//    exponentially, the first retry at once, then 500 ms doubling to 30 s, reset once a
//    registration is proven by the kubelet's stream. A lost stream of a *live* kubelet (it
//    ended our ListAndWatch, or never opened one after a registration) is not a failure:
//    re-registering is rate-limited instead (LossLimiter: 3 at once, then one a second), so a
//    loop the kubelet and the plugin could build between them (two instances of one
//    resource on a v1.25-1.36 kubelet end each other's streams) runs at 1 Register/s, and a
//    kubelet that ends streams now and then never waits more than a second for us. (An
//    exponential policy for both once made a live kubelet wait up to 30 s after a few
//    stream ends in a row: docs/reliability.md, "Capacity and data".) No jitter: the only
//    peer is this node's own kubelet, which no other node shares;
//  - a registration must be followed by the kubelet's stream within kStreamWait, or it is
//    treated as lost (kubelet mode: register again; watcher mode: re-create);
//  - no state waits for ever: a Register attempt unanswered after kRegisterAnswerDeadline
//    (the registrar answers well within it) is cancelled and retried, damped;
//  - tokens (server incarnations, Register attempts, timer arms) come from one TokenSource
//    per process and never repeat, so a result of an old incarnation can never match.
//
// clang-format off
// Transitions, one per line: in `phase`, `event` leads to `after` and these actions, in
// order (logging left out). A pair of phase and event not listed changes neither the phase
// nor any action; it may still note data for later (a GetInfo's stream floor, the kubelet
// a Notify came from, an announced kubelet.sock). test/unit/registration_table_test.cpp
// reads these lines, puts a machine into each phase (under fixed facts: one kubelet.sock
// identity, no wall-clock stamps) and hands it each event: a row that disagrees with the
// machine, or an action or phase change missing here, fails it. What depends on other
// facts (a restart seen late, another kubelet's answer) is in lifecycle_test.
//
// Phases, as the test reaches them: ServeBackoff and NoSocketDir, the first serve failed
// (the directory existed or not); NoKubelet, served with no kubelet.sock; Registering, a
// Register in flight with the kubelet's stream open (v1.25+ opens it before answering);
// Registered, answered with the stream open ("no stream yet": answered first, as v1.24
// does, and the kStreamWait watchdog armed); RetryWait, the Register failed; watcher
// Published, after the watcher's GetInfo and the kubelet's stream; StreamGrace, registered
// and the stream ended while the kubelet was away.
// Events: "ServeDone ok/failed" answers the re-serve the phase starts (its timer in
// ServeBackoff, the directory in NoSocketDir, our socket's removal elsewhere); "kubelet.sock
// new/same" is a kubelet.sock creation with a new or the same identity; "RegisterDone
// already" is v1.37's "already connected"; "stream ends" is the kubelet's stream, with the
// kubelet.sock listening or not. Actions: Serve (then its answer's), Drop (the server),
// Register(fresh: no liveness probe), Cancel (the Register), Arm(ms), Disarm. The fresh
// machine's retry policy is at its start: a failure retries at once, then 500 ms.
//
//  mode    | phase                      | event                          | after                              | actions
//  kubelet | ServeBackoff               | ServeDone ok                   | Registering                        | Register Arm(15000)
//  kubelet | ServeBackoff               | ServeDone failed               | ServeBackoff                       | Arm(500)
//  kubelet | ServeBackoff               | Timer                          | Registering                        | Serve Register Arm(15000)
//  kubelet | ServeBackoff               | Stop                           | Idle                               | Disarm
//  kubelet | NoSocketDir                | ServeDone ok                   | Registering                        | Register Arm(15000)
//  kubelet | NoSocketDir                | ServeDone failed               | ServeBackoff                       | Arm(0)
//  kubelet | NoSocketDir                | SocketDirAppeared              | Registering                        | Serve Register Arm(15000)
//  kubelet | NoSocketDir                | Stop                           | Idle                               | -
//  kubelet | NoKubelet                  | ServeDone ok                   | NoKubelet                          | Arm(500)
//  kubelet | NoKubelet                  | ServeDone failed               | ServeBackoff                       | Arm(500)
//  kubelet | NoKubelet                  | kubelet.sock new               | Registering                        | Disarm Register(fresh) Arm(15000)
//  kubelet | NoKubelet                  | Timer                          | NoKubelet                          | Arm(500)
//  kubelet | NoKubelet                  | OwnSocketDeleted               | NoKubelet                          | Disarm Drop Serve Arm(500)
//  kubelet | NoKubelet                  | Stop                           | Idle                               | Disarm Drop
//  kubelet | Registering                | ServeDone ok                   | Registering                        | Arm(15000)
//  kubelet | Registering                | ServeDone failed               | ServeBackoff                       | Cancel Arm(0)
//  kubelet | Registering                | kubelet.sock new               | Registering (kubelet.sock changed) | -
//  kubelet | Registering                | RegisterDone ok                | Registered                         | Disarm
//  kubelet | Registering                | RegisterDone already           | Registered                         | Disarm
//  kubelet | Registering                | RegisterDone down              | NoKubelet                          | Arm(0)
//  kubelet | Registering                | RegisterDone failed            | RetryWait                          | Arm(0)
//  kubelet | Registering                | stream ends                    | Registering (stream lost)          | -
//  kubelet | Registering                | stream ends, kubelet listening | Registering (stream lost)          | -
//  kubelet | Registering                | Timer                          | RetryWait                          | Cancel Arm(0)
//  kubelet | Registering                | OwnSocketDeleted               | Registering                        | Disarm Drop Serve Arm(15000)
//  kubelet | Registering                | Stop                           | Idle                               | Cancel Disarm Drop
//  kubelet | Registered                 | ServeDone ok                   | Registering                        | Register Arm(15000)
//  kubelet | Registered                 | ServeDone failed               | ServeBackoff                       | Arm(0)
//  kubelet | Registered                 | kubelet.sock new               | Registering                        | Register(fresh) Arm(15000)
//  kubelet | Registered                 | stream ends                    | RetryWait                          | Arm(0)
//  kubelet | Registered                 | stream ends, kubelet listening | RetryWait                          | Arm(0)
//  kubelet | Registered                 | OwnSocketDeleted               | Registering                        | Drop Serve Register Arm(15000)
//  kubelet | Registered                 | Stop                           | Idle                               | Drop
//  kubelet | Registered (no stream yet) | ServeDone ok                   | Registering                        | Register Arm(15000)
//  kubelet | Registered (no stream yet) | ServeDone failed               | ServeBackoff                       | Arm(0)
//  kubelet | Registered (no stream yet) | kubelet.sock new               | Registering                        | Disarm Register(fresh) Arm(15000)
//  kubelet | Registered (no stream yet) | stream opens                   | Registered                         | Disarm
//  kubelet | Registered (no stream yet) | Timer                          | RetryWait                          | Arm(0)
//  kubelet | Registered (no stream yet) | OwnSocketDeleted               | Registering                        | Disarm Drop Serve Register Arm(15000)
//  kubelet | Registered (no stream yet) | Stop                           | Idle                               | Disarm Drop
//  kubelet | RetryWait                  | ServeDone ok                   | Registering                        | Register Arm(15000)
//  kubelet | RetryWait                  | ServeDone failed               | ServeBackoff                       | Arm(500)
//  kubelet | RetryWait                  | kubelet.sock new               | Registering                        | Disarm Register(fresh) Arm(15000)
//  kubelet | RetryWait                  | kubelet.sock same              | Registering                        | Disarm Register(fresh) Arm(15000)
//  kubelet | RetryWait                  | Timer                          | Registering                        | Register Arm(15000)
//  kubelet | RetryWait                  | OwnSocketDeleted               | Registering                        | Disarm Drop Serve Register Arm(15000)
//  kubelet | RetryWait                  | Stop                           | Idle                               | Disarm Drop
//
//  watcher | ServeBackoff               | ServeDone ok                   | Published                          | -
//  watcher | ServeBackoff               | ServeDone failed               | ServeBackoff                       | Arm(500)
//  watcher | ServeBackoff               | Timer                          | Published                          | Serve
//  watcher | ServeBackoff               | Stop                           | Idle                               | Disarm
//  watcher | NoSocketDir                | ServeDone ok                   | Published                          | -
//  watcher | NoSocketDir                | ServeDone failed               | ServeBackoff                       | Arm(0)
//  watcher | NoSocketDir                | SocketDirAppeared              | Published                          | Serve
//  watcher | NoSocketDir                | Stop                           | Idle                               | -
//  watcher | Published                  | ServeDone failed               | ServeBackoff                       | Arm(0)
//  watcher | Published                  | stream ends                    | StreamGrace                        | Arm(2500)
//  watcher | Published                  | stream ends, kubelet listening | StreamGrace                        | Arm(2500)
//  watcher | Published                  | Notify ok                      | Registered                         | -
//  watcher | Published                  | Notify rejected                | ServeBackoff                       | Drop Arm(0)
//  watcher | Published                  | OwnSocketDeleted               | Published                          | Drop Serve
//  watcher | Published                  | Stop                           | Idle                               | Drop
//  watcher | Registered                 | ServeDone ok                   | Published                          | -
//  watcher | Registered                 | ServeDone failed               | ServeBackoff                       | Arm(0)
//  watcher | Registered                 | stream ends                    | StreamGrace                        | Arm(2500)
//  watcher | Registered                 | stream ends, kubelet listening | ServeBackoff                       | Drop Arm(0)
//  watcher | Registered                 | Notify rejected                | ServeBackoff                       | Drop Arm(0)
//  watcher | Registered                 | OwnSocketDeleted               | Published                          | Drop Serve
//  watcher | Registered                 | Stop                           | Idle                               | Drop
//  watcher | Registered (no stream yet) | ServeDone ok                   | Published                          | -
//  watcher | Registered (no stream yet) | ServeDone failed               | ServeBackoff                       | Arm(0)
//  watcher | Registered (no stream yet) | stream opens                   | Registered                         | Disarm
//  watcher | Registered (no stream yet) | Notify ok                      | Registered (no stream yet)         | Disarm Arm(2000)
//  watcher | Registered (no stream yet) | Notify rejected                | ServeBackoff                       | Drop Arm(0)
//  watcher | Registered (no stream yet) | Timer                          | Published                          | Drop Serve
//  watcher | Registered (no stream yet) | OwnSocketDeleted               | Published                          | Disarm Drop Serve
//  watcher | Registered (no stream yet) | Stop                           | Idle                               | Disarm Drop
//  watcher | StreamGrace                | ServeDone ok                   | Published                          | -
//  watcher | StreamGrace                | ServeDone failed               | ServeBackoff                       | Arm(0)
//  watcher | StreamGrace                | kubelet.sock new               | StreamGrace                        | Arm(2500)
//  watcher | StreamGrace                | kubelet.sock same              | StreamGrace                        | Arm(2500)
//  watcher | StreamGrace                | GetInfo                        | Published                          | Disarm
//  watcher | StreamGrace                | Notify rejected                | ServeBackoff                       | Drop Arm(0)
//  watcher | StreamGrace                | Timer                          | Published                          | Drop Serve
//  watcher | StreamGrace                | OwnSocketDeleted               | Published                          | Disarm Drop Serve
//  watcher | StreamGrace                | Stop                           | Idle                               | Disarm Drop
// End of transitions.
// clang-format on
//
// Kubelet mode, a restart seen late: a stream accepted before the current kubelet.sock was
// created belongs to an older kubelet. Its end while Registered, or an OK answer whose
// stream already ended so while kubelet.sock changed during the attempt, registers with the
// current kubelet at once: its kubelet.sock event was only noted, and this is its one
// registration.
//
// In both modes: ServeDone failed → ServeBackoff + timer, or NoSocketDir when the directory
// is missing (no timer: the directory watch reports it); SocketDirAppeared in NoSocketDir →
// Serve, and in kubelet mode, in NoKubelet or Registered with kubelet.sock present, it is a
// "kubelet.sock new" (a directory is watched only once it exists, so a kubelet.sock created
// in it first is found by looking, not reported); OwnSocketDeleted while serving → Serve; Stop →
// cancel, drop, Idle. Every Register arms the answer watchdog (kRegisterAnswerDeadline).
//
// Not thread-safe: the event loop is its only caller.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pkg/rate/cell_rate_limiter.h"

namespace rdmadp::lifecycle {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline constexpr milliseconds kFirstBackoff{500};
inline constexpr milliseconds kMaxBackoff{30000};
// Re-registrations after a live kubelet lost our stream: this many at once, then one per
// kLossInterval. kLossInterval is also the longest a live kubelet waits for us.
inline constexpr int kLossBurst = 3;
inline constexpr milliseconds kLossInterval{1000};
// Watcher mode: how long a lost stream waits for the kubelet's plugin watcher before the
// socket is re-created. The watcher reconciles every 1 s and serialises operations per
// socket, so a walk after a kubelet restart reaches us within two passes.
inline constexpr milliseconds kWatcherGrace{2500};
// After a registration, how long the kubelet's ListAndWatch may take to reach us. A
// v1.25-1.36 kubelet can disconnect a client between its Connect and its first stream
// (another instance's stream ended, #121994): it then thinks us unhealthy while we think
// we are registered. Without a stream by then, we register again.
inline constexpr milliseconds kStreamWait{2000};
// A safety net: the registrar reports every attempt within its self-check and Register
// deadlines (7 s in the Manager). An attempt still unanswered after this is cancelled and
// retried rather than waited on for ever.
inline constexpr milliseconds kRegisterAnswerDeadline{15000};

enum class Mode { kKubelet, kWatcher };

// Never-repeating tokens for one process: server incarnations, Register attempts, timers.
class TokenSource {
 public:
  uint64_t Next() { return ++last_; }

 private:
  uint64_t last_ = 0;
};

// Which kubelet.sock file: a restarted kubelet creates a new file (new inode or ctime).
struct SocketId {
  uint64_t inode = 0;  // 0: no such file
  int64_t ctime_ns = 0;
  bool present() const { return inode != 0; }
  bool operator==(const SocketId&) const = default;
};

// What the adapter observed just before handing in an event.
struct Facts {
  Clock::time_point now;
  SocketId kubelet_socket;
  // Something accepts on kubelet.sock. Observed for kStreamEnded only (a connect()).
  bool kubelet_listening = false;
  // Id of the latest stream the current server opened. Above the newest this machine has
  // heard of, a kStreamOpened is still queued: a timer that fires first must not conclude
  // "no stream" (seen after the process was stopped and resumed, with both ready at once).
  uint64_t streams_opened = 0;
};

enum class RegisterOutcome {
  kOk,
  kKubeletDown,       // kubelet.sock missing or nothing accepts on it: nothing was sent
  kAlreadyConnected,  // v1.37+: "device plugin already connected: <our path>"
  kFailed,            // anything else (timeout, rejection, our own socket silent)
};

struct Event {
  enum class Kind {
    kStart,              // mode
    kStop,               //
    kServeDone,          // token (server), ok, dir_missing, detail
    kSocketDirAppeared,  //
    kKubeletSocketCreated,
    kOwnSocketDeleted,  //
    kRegisterDone,      // token (attempt), outcome, detail
    kStreamOpened,      // token (server), stream
    kStreamEnded,       // token (server), stream, newest (unused: the kubelet's is known by id)
    kGetInfo,           // token (server)
    kNotify,            // token (server), ok, detail
    kTimer,             // token (timer)
  };
  Kind kind;
  uint64_t token = 0;
  uint64_t stream = 0;
  bool ok = false;
  bool newest = false;
  bool dir_missing = false;
  Mode mode = Mode::kKubelet;
  RegisterOutcome outcome = RegisterOutcome::kOk;
  std::string detail{};
  int64_t wall_ns = 0;  // kStreamOpened, kNotify

  static Event Start(Mode m) { return {.kind = Kind::kStart, .mode = m}; }
  static Event Stop() { return {.kind = Kind::kStop}; }
  static Event ServeOk(uint64_t server) {
    return {.kind = Kind::kServeDone, .token = server, .ok = true};
  }
  static Event ServeFailed(uint64_t server, bool dir_missing, std::string why) {
    return {.kind = Kind::kServeDone,
            .token = server,
            .dir_missing = dir_missing,
            .detail = std::move(why)};
  }
  static Event SocketDirAppeared() { return {.kind = Kind::kSocketDirAppeared}; }
  static Event KubeletSocketCreated() { return {.kind = Kind::kKubeletSocketCreated}; }
  static Event OwnSocketDeleted() { return {.kind = Kind::kOwnSocketDeleted}; }
  static Event RegisterDone(uint64_t attempt, RegisterOutcome o, std::string detail = "") {
    return {
        .kind = Kind::kRegisterDone, .token = attempt, .outcome = o, .detail = std::move(detail)};
  }
  // `wall_ns`: CLOCK_REALTIME when the server accepted the stream (0: unknown), comparable
  // with kubelet.sock's ctime. A stopped process stamps a dead kubelet's stream late, so
  // this alone cannot show a stream is the current kubelet's (see kNotify).
  static Event StreamOpened(uint64_t server, uint64_t stream, int64_t wall_ns = 0) {
    return {.kind = Kind::kStreamOpened, .token = server, .stream = stream, .wall_ns = wall_ns};
  }
  static Event StreamEnded(uint64_t server, uint64_t stream, bool newest) {
    return {.kind = Kind::kStreamEnded, .token = server, .stream = stream, .newest = newest};
  }
  static Event GetInfo(uint64_t server) { return {.kind = Kind::kGetInfo, .token = server}; }
  // `wall_ns`: CLOCK_REALTIME when the server handled the call (0: unknown). The kubelet
  // waits for that answer, so it was alive then: a stamp older than the current kubelet.sock
  // means an older kubelet registered us, however late the event reaches the machine.
  static Event Notify(uint64_t server, bool ok, std::string error = "", int64_t wall_ns = 0) {
    return {.kind = Kind::kNotify,
            .token = server,
            .ok = ok,
            .detail = std::move(error),
            .wall_ns = wall_ns};
  }
  static Event Timer(uint64_t timer) { return {.kind = Kind::kTimer, .token = timer}; }
};

struct Action {
  enum class Kind {
    kServe,           // token: the new server's; publish the socket, then report kServeDone
    kDropServer,      // stop the server, remove its socket
    kRegister,        // token: the attempt's; start a Register (cancels any in flight)
    kCancelRegister,  //
    kArmTimer,        // token, delay (replaces an armed timer)
    kDisarmTimer,     //
    kLog,             // level, message
  };
  enum class Level { kDebug, kInfo, kWarn };
  Kind kind;
  uint64_t token = 0;
  milliseconds delay{0};
  Level level = Level::kInfo;
  // kRegister: kubelet.sock was just created, so skip the liveness probe (the kubelet may
  // sit between bind() and listen()); a dead file cannot have just appeared.
  bool fresh = false;
  std::string message{};
  bool operator==(const Action&) const = default;
};

enum class Phase {
  kIdle,
  kNoSocketDir,
  kServeBackoff,
  kNoKubelet,
  kRegistering,
  kRegistered,
  kRetryWait,
  kPublished,
  kStreamGrace,
};

// Each phase with the data that lives only while the machine is in it. PhaseData's
// alternatives are in Phase's order: a phase is its index.
namespace phase {
struct Idle {};
struct NoSocketDir {};
struct ServeBackoff {};
struct NoKubelet {};
struct Registering {  // kubelet mode: a Register is in flight
  uint64_t attempt = 0;
  SocketId kubelet;  // the kubelet.sock it dialled
  // The kubelet's stream ended before the answer came (the answer may still say OK), and
  // when the server had accepted that stream (0: unknown).
  bool stream_lost = false;
  int64_t lost_stream_wall_ns = 0;
  bool kubelet_changed = false;  // kubelet.sock was re-created meanwhile
};
struct Registered {
  bool awaiting_stream = false;  // the watchdog for the kubelet's first stream is armed
};
struct RetryWait {};
struct Published {};
struct StreamGrace {};
}  // namespace phase
using PhaseData = std::variant<phase::Idle, phase::NoSocketDir, phase::ServeBackoff,
                               phase::NoKubelet, phase::Registering, phase::Registered,
                               phase::RetryWait, phase::Published, phase::StreamGrace>;

// For debug traces: "Registering", "StreamEnded(server 4, stream 2)".
std::string_view PhaseName(Phase phase);
std::string Describe(const Event& event);

// The first retry at once, then doubling from kFirstBackoff to kMaxBackoff.
class RetryPolicy {
 public:
  milliseconds Next();
  void Reset() { step_ = 0; }

 private:
  int step_ = 0;
};

// A rate limit on re-registrations after lost streams (pkg/rate): kLossBurst at once, then
// one every kLossInterval. Take() answers how long to wait before the next one; a caller
// that waits it out before asking again never waits more than kLossInterval.
class LossLimiter {
 public:
  milliseconds Take(Clock::time_point now) {
    return std::chrono::duration_cast<milliseconds>(limiter_.Take(now) - now);
  }

 private:
  rate::CellRateLimiter limiter_{kLossBurst, kLossInterval};
};

class RegistrationFsm {
 public:
  // `resource` (<prefix>/<name>) only prefixes log messages. `expect_stream`: a
  // registration is proven by the kubelet's ListAndWatch stream (device plugins). A DRA
  // driver has none the kubelet must open (its health stream is optional), so for it a
  // registration stands until the kubelet's watcher says otherwise or the socket goes.
  RegistrationFsm(std::string resource, TokenSource* tokens, bool expect_stream = true);

  std::vector<Action> Handle(const Event& event, const Facts& facts);

  Phase phase() const { return static_cast<Phase>(state_.index()); }
  const PhaseData& state() const { return state_; }
  Mode mode() const { return mode_; }
  // Registered and, as far as we know, connected.
  bool registered() const { return phase() == Phase::kRegistered; }
  uint64_t registrations() const { return counts_.registrations; }
  uint64_t socket_recreations() const { return counts_.recreations; }
  // Registers that failed or were rejected, and negative notifications (not "no listener").
  uint64_t registration_failures() const { return counts_.failures; }
  // Waits on a back-off timer before the next try (N > 0 in "retrying in N ms" and its
  // kin in the log): serve, after a socket that could not be served; register, after a
  // Register that failed, went unanswered or that the kubelet's watcher rejected. A retry
  // at once is no wait, and a directory that does not exist yet is no retry (its watch
  // reports it).
  uint64_t serve_retries() const { return counts_.serve_retries; }
  uint64_t register_retries() const { return counts_.register_retries; }

 private:
  // The streams of the current server incarnation (their ids restart with each one).
  struct Streams {
    uint64_t newest = 0;
    uint64_t floor = 0;  // streams up to this id predate our latest registration
    // The kubelet's stream: the first opened after the latest registration. Only its end
    // means the kubelet lost us; other clients' streams (any process may call
    // ListAndWatch on our socket) change nothing.
    uint64_t kubelet = 0;
    bool kubelet_open = false;
    int64_t kubelet_wall_ns = 0;  // when the server accepted it (0: unknown)
  };
  struct Counts {
    uint64_t registrations = 0;
    uint64_t recreations = 0;
    uint64_t failures = 0;
    uint64_t serve_retries = 0;
    uint64_t register_retries = 0;
  };

  template <typename P>
  P* In() {
    return std::get_if<P>(&state_);
  }
  // `keep_attempt`: a Register in flight survives (same socket path, kubelet mode). The
  // phase stays until the serve's answer, but for a Register in flight that is not kept:
  // it is cancelled, and no phase holds an attempt that is gone.
  void Serve(std::vector<Action>& out, bool keep_attempt = false);
  void Register(const Facts& facts, std::vector<Action>& out, bool fresh = false);
  // Cancels the Register in flight, if any.
  void CancelAttempt(std::vector<Action>& out);
  void ArmTimer(milliseconds delay, std::vector<Action>& out);
  // The next back-off wait after a failure, counted in `waits` unless it is none (at once).
  milliseconds Backoff(uint64_t& waits);
  void Disarm(std::vector<Action>& out);
  // `stream_kept`: the kubelet kept the stream it opened before (already connected).
  void Registered(std::string_view how, std::vector<Action>& out, bool stream_kept = false);
  void Log(Action::Level level, std::string message, std::vector<Action>& out);

  void OnServeDone(const Event& e, const Facts& f, std::vector<Action>& out);
  void OnKubeletSocketCreated(const Facts& f, std::vector<Action>& out);
  void OnRegisterDone(const Event& e, const Facts& f, std::vector<Action>& out);
  void OnStreamEnded(const Event& e, const Facts& f, std::vector<Action>& out);
  void OnNotify(const Event& e, const Facts& f, std::vector<Action>& out);
  // Kubelet mode: register again, rate-limited.
  void LostStream(const Facts& f, std::vector<Action>& out);
  bool StreamSinceRegistration() const {
    return streams_.kubelet > streams_.floor && streams_.kubelet_open;
  }
  void OnTimer(const Facts& f, std::vector<Action>& out);
  // A stream accepted (or a Notify handled) at `wall_ns` (0: unknown) came from a kubelet
  // older than the current kubelet.sock: the socket file is created before its kubelet can
  // dial anyone. The kernel stamps ctime from its coarse clock, up to about a tick behind
  // CLOCK_REALTIME (measured here: up to 6.4 ms at HZ=250), so a stamp taken a few ms
  // *before* the file existed can read later than its ctime; within kCtimeSlackNs after
  // the ctime a stamp counts as older. Misjudging the other way only costs the rare event a
  // new kubelet sends within 20 ms of creating its socket a grace period or a Register.
  static constexpr int64_t kCtimeSlackNs = 20'000'000;
  static bool OlderThanKubeletSocket(int64_t wall_ns, const Facts& f) {
    return wall_ns != 0 && f.kubelet_socket.present() &&
           wall_ns < f.kubelet_socket.ctime_ns + kCtimeSlackNs;
  }

  const std::string resource_;
  TokenSource* const tokens_;
  const bool expect_stream_;
  Mode mode_ = Mode::kKubelet;
  PhaseData state_;
  RetryPolicy retry_;    // failures: Register failed, unanswered, no listener; serve failed
  LossLimiter losses_;   // a live kubelet lost our stream
  uint64_t server_ = 0;  // current server incarnation (0: none)
  uint64_t timer_ = 0;   // armed timer (0: none)
  Streams streams_;
  // The kubelet that registered us last, by its kubelet.sock (none: unknown, or a kubelet
  // older than the current kubelet.sock).
  SocketId registered_with_;
  // The kubelet.sock whose creation inotify reported last, until we register with it: a
  // "no listener" for it means the kubelet sits between bind() and listen(), not dead.
  SocketId announced_;
  bool waiting_logged_ = false;  // the wait for kubelet.sock was reported once
  bool served_once_ = false;     // since the last Start: later serves are re-creations
  Counts counts_;
};

}  // namespace rdmadp::lifecycle
