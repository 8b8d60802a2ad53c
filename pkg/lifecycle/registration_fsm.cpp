#include "pkg/lifecycle/registration_fsm.h"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace rdmadp::lifecycle {
namespace {

std::string Ms(milliseconds d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kIdle:
      return "Idle";
    case Phase::kNoSocketDir:
      return "NoSocketDir";
    case Phase::kServeBackoff:
      return "ServeBackoff";
    case Phase::kNoKubelet:
      return "NoKubelet";
    case Phase::kRegistering:
      return "Registering";
    case Phase::kRegistered:
      return "Registered";
    case Phase::kRetryWait:
      return "RetryWait";
    case Phase::kPublished:
      return "Published";
    case Phase::kStreamGrace:
      return "StreamGrace";
  }
  return "?";
}

std::string Describe(const Event& e) {
  using K = Event::Kind;
  const std::string server = "server " + std::to_string(e.token);
  switch (e.kind) {
    case K::kStart:
      return e.mode == Mode::kWatcher ? "Start(watcher)" : "Start(kubelet)";
    case K::kStop:
      return "Stop";
    case K::kServeDone:
      return "ServeDone(" + server + (e.ok ? ", ok)" : ", failed)");
    case K::kSocketDirAppeared:
      return "SocketDirAppeared";
    case K::kKubeletSocketCreated:
      return "KubeletSocketCreated";
    case K::kOwnSocketDeleted:
      return "OwnSocketDeleted";
    case K::kRegisterDone: {
      static constexpr std::string_view kOutcomes[] = {"ok", "kubelet down", "already connected",
                                                       "failed"};
      return "RegisterDone(attempt " + std::to_string(e.token) + ", " +
             std::string(kOutcomes[static_cast<int>(e.outcome)]) + ")";
    }
    case K::kStreamOpened:
      return "StreamOpened(" + server + ", stream " + std::to_string(e.stream) + ")";
    case K::kStreamEnded:
      return "StreamEnded(" + server + ", stream " + std::to_string(e.stream) + ")";
    case K::kGetInfo:
      return "GetInfo(" + server + ")";
    case K::kNotify:
      return "Notify(" + server + (e.ok ? ", ok)" : ", rejected)");
    case K::kTimer:
      return "Timer(" + std::to_string(e.token) + ")";
  }
  return "?";
}

milliseconds RetryPolicy::Next() {
  if (step_ == 0) {
    step_ = 1;
    return milliseconds(0);
  }
  milliseconds d = kFirstBackoff;
  for (int i = 1; i < step_ && d < kMaxBackoff; ++i) d *= 2;
  step_ = std::min(step_ + 1, 32);
  return std::min(d, kMaxBackoff);
}

RegistrationFsm::RegistrationFsm(std::string resource, TokenSource* tokens, bool expect_stream)
    : resource_(std::move(resource)), tokens_(tokens), expect_stream_(expect_stream) {}

// PhaseData's alternatives are in Phase's order.
static_assert(std::variant_size_v<PhaseData> == static_cast<size_t>(Phase::kStreamGrace) + 1);
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(Phase::kRegistering), PhaseData>,
                   phase::Registering>);
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(Phase::kRegistered), PhaseData>,
                   phase::Registered>);
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(Phase::kStreamGrace), PhaseData>,
                   phase::StreamGrace>);

std::vector<Action> RegistrationFsm::Handle(const Event& e, const Facts& f) {
  std::vector<Action> out;
  using K = Event::Kind;
  switch (e.kind) {
    case K::kStart:
      if (phase() != Phase::kIdle) Handle(Event::Stop(), f).swap(out);
      mode_ = e.mode;
      served_once_ = false;
      Serve(out);
      break;
    case K::kStop:
      CancelAttempt(out);
      Disarm(out);
      if (server_ != 0) out.push_back({.kind = Action::Kind::kDropServer});
      server_ = 0;
      state_ = phase::Idle{};
      break;
    case K::kServeDone:
      if (e.token == server_) OnServeDone(e, f, out);
      break;
    case K::kSocketDirAppeared:
      if (In<phase::NoSocketDir>()) {
        Serve(out);
      } else if (mode_ == Mode::kKubelet && f.kubelet_socket.present() &&
                 (In<phase::NoKubelet>() || In<phase::Registered>())) {
        // A directory's watch is added when the directory appears, so a kubelet.sock created
        // in it before that was never reported: found by looking, it is that report.
        OnKubeletSocketCreated(f, out);
      }
      break;
    case K::kKubeletSocketCreated:
      OnKubeletSocketCreated(f, out);
      break;
    case K::kOwnSocketDeleted:
      if (server_ != 0 && !In<phase::Idle>()) {
        Log(Action::Level::kWarn,
            resource_ + ": our socket was removed (kubelet restart?); serving it again", out);
        // A Register in flight stays: the kubelet dials our socket by path, which the new
        // server takes over; cancelling could come after it reached the kubelet (twice).
        Serve(out, /*keep_attempt=*/mode_ == Mode::kKubelet);
      }
      break;
    case K::kRegisterDone:
      if (auto* r = In<phase::Registering>(); r && e.token == r->attempt) OnRegisterDone(e, f, out);
      break;
    case K::kStreamOpened:
      if (e.token != server_) break;
      streams_.newest = std::max(streams_.newest, e.stream);
      // The kubelet opens one stream per registration: the first after it is the
      // kubelet's. Any other client's stream (a monitoring tool) decides nothing.
      if (e.stream <= streams_.floor || streams_.kubelet > streams_.floor) break;
      streams_.kubelet = e.stream;
      streams_.kubelet_open = true;
      streams_.kubelet_wall_ns = e.wall_ns;
      if (mode_ == Mode::kWatcher && In<phase::StreamGrace>()) {
        state_ = phase::Published{};
        Disarm(out);
      }
      if (auto* r = In<phase::Registered>()) {
        if (r->awaiting_stream) {
          r->awaiting_stream = false;
          Disarm(out);
        }
        retry_.Reset();  // the registration is proven
      }
      break;
    case K::kStreamEnded:
      if (e.token != server_) break;
      if (e.stream == streams_.kubelet) streams_.kubelet_open = false;
      OnStreamEnded(e, f, out);
      break;
    case K::kGetInfo:
      if (e.token != server_ || mode_ != Mode::kWatcher) break;
      streams_.floor = streams_.newest;  // the watcher registers us again: older streams are done
      if (In<phase::StreamGrace>()) {
        state_ = phase::Published{};
        Disarm(out);
      }
      break;
    case K::kNotify:
      if (e.token == server_ && mode_ == Mode::kWatcher && !In<phase::Idle>()) OnNotify(e, f, out);
      break;
    case K::kTimer:
      if (e.token != timer_ || timer_ == 0) break;
      timer_ = 0;
      OnTimer(f, out);
      break;
  }
  return out;
}

void RegistrationFsm::CancelAttempt(std::vector<Action>& out) {
  if (In<phase::Registering>()) out.push_back({.kind = Action::Kind::kCancelRegister});
}

void RegistrationFsm::Serve(std::vector<Action>& out, bool keep_attempt) {
  if (In<phase::Registering>() && !keep_attempt) {
    CancelAttempt(out);
    // Not reached today (Start stops first); a Registering phase must never outlive its
    // attempt. Kubelet mode: the serve's answer registers from here.
    state_ = phase::RetryWait{};
  }
  if (auto* r = In<phase::Registered>()) r->awaiting_stream = false;
  Disarm(out);
  if (server_ != 0) out.push_back({.kind = Action::Kind::kDropServer});
  if (served_once_) ++counts_.recreations;
  served_once_ = true;
  server_ = tokens_->Next();
  streams_ = {};
  out.push_back({.kind = Action::Kind::kServe, .token = server_});
}

void RegistrationFsm::Register(const Facts& f, std::vector<Action>& out, bool fresh) {
  CancelAttempt(out);
  Disarm(out);
  if (!f.kubelet_socket.present()) {
    state_ = phase::NoKubelet{};
    if (!waiting_logged_) {
      waiting_logged_ = true;
      Log(Action::Level::kWarn,
          resource_ +
              ": kubelet.sock does not exist yet; will register when the kubelet creates it",
          out);
    }
    // The directory watch is the trigger; this damped look is the safety net for an event
    // no watch could report (inotify unavailable, its queue overflowed).
    ArmTimer(retry_.Next(), out);
    return;
  }
  phase::Registering attempt;
  attempt.attempt = tokens_->Next();
  attempt.kubelet = f.kubelet_socket;
  streams_.floor = streams_.newest;
  state_ = attempt;
  out.push_back({.kind = Action::Kind::kRegister, .token = attempt.attempt, .fresh = fresh});
  ArmTimer(kRegisterAnswerDeadline, out);
}

milliseconds RegistrationFsm::Backoff(uint64_t& waits) {
  const milliseconds delay = retry_.Next();
  if (delay.count() > 0) ++waits;
  return delay;
}

void RegistrationFsm::ArmTimer(milliseconds delay, std::vector<Action>& out) {
  timer_ = tokens_->Next();
  out.push_back({.kind = Action::Kind::kArmTimer, .token = timer_, .delay = delay});
}

void RegistrationFsm::Disarm(std::vector<Action>& out) {
  if (timer_ == 0) return;
  timer_ = 0;
  out.push_back({.kind = Action::Kind::kDisarmTimer});
}

void RegistrationFsm::Registered(std::string_view how, std::vector<Action>& out, bool stream_kept) {
  ++counts_.registrations;
  waiting_logged_ = false;
  Disarm(out);
  Log(Action::Level::kInfo, resource_ + ": " + std::string(how), out);
  phase::Registered registered;
  registered.awaiting_stream = expect_stream_ && !stream_kept && !StreamSinceRegistration();
  state_ = registered;
  if (registered.awaiting_stream) {
    ArmTimer(kStreamWait, out);
  } else {
    retry_.Reset();  // proven: by its stream, or (no stream expected) by the answer itself
  }
}

void RegistrationFsm::Log(Action::Level level, std::string message, std::vector<Action>& out) {
  out.push_back({.kind = Action::Kind::kLog, .level = level, .message = std::move(message)});
}

void RegistrationFsm::OnServeDone(const Event& e, const Facts& f, std::vector<Action>& out) {
  if (!e.ok) {
    server_ = 0;
    CancelAttempt(out);  // kept across the re-serve, it dialled a socket that is gone
    if (e.dir_missing) {
      state_ = phase::NoSocketDir{};  // the directory watch reports it: no timer
      Log(Action::Level::kWarn, resource_ + ": " + e.detail, out);
      return;
    }
    state_ = phase::ServeBackoff{};
    const milliseconds delay = Backoff(counts_.serve_retries);
    Log(Action::Level::kWarn, resource_ + ": " + e.detail + "; retrying in " + Ms(delay), out);
    ArmTimer(delay, out);
    return;
  }
  if (mode_ == Mode::kWatcher) {
    state_ = phase::Published{};
  } else if (In<phase::Registering>()) {     // kept across the re-serve: its answer decides
    ArmTimer(kRegisterAnswerDeadline, out);  // Serve() disarmed the watchdog
  } else {
    Register(f, out);
  }
}

void RegistrationFsm::OnKubeletSocketCreated(const Facts& f, std::vector<Action>& out) {
  if (mode_ == Mode::kWatcher) {
    // A kubelet is starting: its plugin watcher walks plugins_registry and will find us.
    if (In<phase::StreamGrace>()) ArmTimer(kWatcherGrace, out);
    return;
  }
  if (!f.kubelet_socket.present()) return;
  announced_ = f.kubelet_socket;
  switch (phase()) {
    case Phase::kRegistering:
      // Never cancel: the attempt dials by path and may already have reached the new
      // kubelet (cancelling then sends a second Register). Its answer decides (below).
      if (auto* r = In<phase::Registering>(); !(f.kubelet_socket == r->kubelet)) {
        r->kubelet_changed = true;
      }
      return;
    case Phase::kRegistered:
      if (f.kubelet_socket == registered_with_) return;  // the kubelet we are registered with
      break;
    case Phase::kNoKubelet:
    case Phase::kRetryWait:
      break;
    default:
      return;  // not serving yet: registers once it serves
  }
  Log(Action::Level::kInfo, resource_ + ": kubelet.sock created (kubelet (re)started); registering",
      out);
  Register(f, out, /*fresh=*/true);
}

void RegistrationFsm::OnRegisterDone(const Event& e, const Facts& f, std::vector<Action>& out) {
  const phase::Registering done = *In<phase::Registering>();
  state_ = phase::RetryWait{};  // the attempt is over; each outcome below picks the phase
  const bool other_kubelet = f.kubelet_socket.present() && !(f.kubelet_socket == done.kubelet);
  switch (e.outcome) {
    case RegisterOutcome::kOk:
      if (done.stream_lost && done.kubelet_changed &&
          OlderThanKubeletSocket(done.lost_stream_wall_ns, f)) {
        // The attempt's stream, accepted before the current kubelet.sock existed, is gone:
        // the answer came from the kubelet that died with it (late: a busy or stopped
        // process). The new kubelet has not heard of us; its kubelet.sock event was only
        // noted during the attempt, so this is that event's registration, not a retry.
        ++counts_.registrations;
        Log(Action::Level::kInfo,
            resource_ +
                ": registered with the previous kubelet, which is gone (its stream "
                "ended); registering with the new one",
            out);
        Register(f, out);
        return;
      }
      // An answer comes from a live kubelet: the new one if kubelet.sock changed meanwhile.
      registered_with_ =
          done.kubelet_changed && f.kubelet_socket.present() ? f.kubelet_socket : done.kubelet;
      if (registered_with_ == announced_) announced_ = {};  // from now on it may die
      Registered("registered with the kubelet", out);
      if (done.stream_lost) LostStream(f, out);  // its stream is already gone
      return;
    case RegisterOutcome::kAlreadyConnected:
      if (streams_.kubelet_open) {  // its stream predates this attempt, and stays ours
        registered_with_ = done.kubelet;
        if (registered_with_ == announced_) announced_ = {};
        Registered("the kubelet already holds our connection (" + e.detail + "); registered", out,
                   /*stream_kept=*/true);
        return;
      }
      break;
    case RegisterOutcome::kKubeletDown:
      if (other_kubelet) {  // a new kubelet.sock appeared meanwhile
        Register(f, out);
        return;
      }
      if (announced_.present() && done.kubelet == announced_) {
        // Probed between the new kubelet's bind() and listen(): wait for it to listen.
        Register(f, out, /*fresh=*/true);
        return;
      }
      state_ = phase::NoKubelet{};
      if (!waiting_logged_) {
        waiting_logged_ = true;
        Log(Action::Level::kWarn,
            resource_ + ": " + e.detail +
                " (kubelet restarting?); will register when the kubelet re-creates kubelet.sock",
            out);
      }
      ArmTimer(retry_.Next(), out);  // a safety net only: the directory watch is the trigger
      return;
    case RegisterOutcome::kFailed:
      break;
  }
  ++counts_.failures;
  if (other_kubelet) {
    Register(f, out);
    return;
  }
  const milliseconds delay = Backoff(counts_.register_retries);
  Log(Action::Level::kWarn, resource_ + ": " + e.detail + "; retrying in " + Ms(delay), out);
  ArmTimer(delay, out);
}

void RegistrationFsm::OnStreamEnded(const Event& e, const Facts& f, std::vector<Action>& out) {
  if (e.stream != streams_.kubelet || e.stream <= streams_.floor) {
    Log(Action::Level::kDebug,
        resource_ + ": ListAndWatch stream " + std::to_string(e.stream) +
            " ended; not the kubelet's current one (another client's, or replaced by a newer "
            "registration)",
        out);
    return;
  }
  if (mode_ == Mode::kKubelet) {
    if (auto* r = In<phase::Registering>()) {
      // The stream of the attempt in flight: the answer may still say OK, but it is gone.
      r->stream_lost = true;
      r->lost_stream_wall_ns = streams_.kubelet_wall_ns;
      return;
    }
    if (!In<phase::Registered>()) return;  // already waiting to register
    if (OlderThanKubeletSocket(streams_.kubelet_wall_ns, f)) {
      // A stream of a kubelet older than the current kubelet.sock: the kubelet now running
      // has not registered us (its stream would be newer). Its kubelet.sock event is why we
      // register, once, not a loss to damp.
      Log(Action::Level::kInfo,
          resource_ +
              ": the previous kubelet's ListAndWatch stream ended; registering with "
              "the new one",
          out);
      Register(f, out);
      return;
    }
    LostStream(f, out);
    return;
  }
  if (!In<phase::Published>() && !In<phase::Registered>()) return;
  // A stream accepted before the current kubelet.sock was created belongs to an older
  // kubelet, however late its events reach us (a stopped process resumes with the old
  // kubelet's Notify and the new kubelet.sock both in view).
  const bool stream_of_current_kubelet = !OlderThanKubeletSocket(streams_.kubelet_wall_ns, f);
  if (In<phase::Registered>() && f.kubelet_listening && f.kubelet_socket.present() &&
      f.kubelet_socket == registered_with_ && stream_of_current_kubelet) {
    // The kubelet that registered us is alive and dropped us: it will not walk the
    // registry again, only a new socket brings it back.
    out.push_back({.kind = Action::Kind::kDropServer});
    server_ = 0;
    state_ = phase::ServeBackoff{};
    const milliseconds delay = losses_.Take(f.now);
    Log(Action::Level::kWarn,
        resource_ +
            ": the running kubelet ended our ListAndWatch stream; re-creating the "
            "socket for its plugin watcher in " +
            Ms(delay),
        out);
    ArmTimer(delay, out);
    return;
  }
  state_ = phase::StreamGrace{};
  const milliseconds grace = kWatcherGrace + losses_.Take(f.now);
  Log(Action::Level::kWarn,
      resource_ + ": the kubelet's ListAndWatch stream ended; waiting " + Ms(grace) +
          " for its plugin watcher to find the socket again",
      out);
  ArmTimer(grace, out);
}

void RegistrationFsm::LostStream(const Facts& f, std::vector<Action>& out) {
  state_ = phase::RetryWait{};
  const milliseconds delay = losses_.Take(f.now);
  Log(Action::Level::kWarn,
      resource_ + ": the kubelet's ListAndWatch stream ended; registering again" +
          (delay.count() > 0 ? " in " + Ms(delay) : ""),
      out);
  ArmTimer(delay, out);
}

void RegistrationFsm::OnNotify(const Event& e, const Facts& f, std::vector<Action>& out) {
  // Which kubelet registered us decides what its stream's end means (OnStreamEnded): an
  // answer handled before the current kubelet.sock existed came from an older kubelet.
  if (e.ok) registered_with_ = OlderThanKubeletSocket(e.wall_ns, f) ? SocketId{} : f.kubelet_socket;
  if (e.ok && In<phase::StreamGrace>()) {
    // The answer to the registration whose stream already ended (a new registration would
    // have called GetInfo first): counted, and the grace keeps running.
    ++counts_.registrations;
    return;
  }
  if (e.ok) {
    Registered("registered by the kubelet's plugin watcher", out);
    return;
  }
  if (e.detail.find("already connected") != std::string::npos && streams_.kubelet_open) {
    Registered("the kubelet already holds our connection (" + e.detail + "); registered", out,
               /*stream_kept=*/true);
    return;
  }
  // The kubelet does not retry until the socket is re-created: re-create it, damped.
  ++counts_.failures;
  out.push_back({.kind = Action::Kind::kDropServer});
  server_ = 0;
  state_ = phase::ServeBackoff{};
  const milliseconds delay = Backoff(counts_.register_retries);
  Log(Action::Level::kWarn,
      resource_ + ": the kubelet rejected the registration: " + e.detail +
          "; re-creating the socket in " + Ms(delay),
      out);
  ArmTimer(delay, out);
}

void RegistrationFsm::OnTimer(const Facts& f, std::vector<Action>& out) {
  switch (phase()) {
    case Phase::kServeBackoff:
      Serve(out);
      return;
    case Phase::kRetryWait:
    case Phase::kNoKubelet:
      Register(f, out);
      return;
    case Phase::kStreamGrace:
      if (f.streams_opened > streams_.newest) {  // a stream's open event is queued behind us
        ArmTimer(kStreamWait, out);
        return;
      }
      Log(Action::Level::kWarn,
          resource_ + ": the kubelet's plugin watcher did not come back; re-creating the socket",
          out);
      Serve(out);
      return;
    case Phase::kRegistering: {
      CancelAttempt(out);
      ++counts_.failures;
      state_ = phase::RetryWait{};
      const milliseconds delay = Backoff(counts_.register_retries);
      Log(Action::Level::kWarn,
          resource_ + ": no answer to the registration within " + Ms(kRegisterAnswerDeadline) +
              "; cancelled it, registering again in " + Ms(delay),
          out);
      ArmTimer(delay, out);
      return;
    }
    case Phase::kRegistered: {
      auto* registered = In<phase::Registered>();
      if (!registered->awaiting_stream) return;
      if (f.streams_opened > streams_.newest) {  // its open event is queued behind this timer
        ArmTimer(kStreamWait, out);
        return;
      }
      registered->awaiting_stream = false;
      Log(Action::Level::kWarn,
          resource_ + ": registered, but the kubelet's ListAndWatch stream did not arrive within " +
              Ms(kStreamWait),
          out);
      if (mode_ == Mode::kKubelet) {
        LostStream(f, out);
      } else {
        Serve(out);  // the watcher registers a re-created socket again
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace rdmadp::lifecycle
