// The registration machine's world in a unit test (lifecycle_test, the table test): it
// carries out actions as the front ends do and counts them. Single-threaded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/lifecycle/registration_executor.h"
#include "pkg/lifecycle/registration_fsm.h"

namespace rdmadp::lifecycle::test_support {

using std::chrono::milliseconds;

// The machine's world in a test: carries out actions as the front ends do, counting them.
// A serve succeeds at once unless told otherwise (`serve_fails`, `hold_serves`).
struct Driver final : RegistrationExecutor {
  // `start`: hand in Start(mode) now; otherwise the test sets the facts first.
  explicit Driver(Mode mode = Mode::kKubelet, bool expect_stream = true, bool start = true)
      : fsm("rdma/a", &tokens, expect_stream) {
    if (start) Do(Event::Start(mode));
  }
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;
  ~Driver() = default;

  std::vector<Action> Do(const Event& e) { return Run(fsm, *this, e); }

  Facts Observe(const Event&) override { return facts; }
  std::optional<Event> Serve(uint64_t token) override {
    ++serves;
    server = token;
    if (hold_serves) return std::nullopt;
    return serve_fails ? Event::ServeFailed(token, dir_missing, "cannot listen")
                       : Event::ServeOk(token);
  }
  void DropServer() override { ++drops; }
  void Register(uint64_t token, bool) override {
    ++registers;
    attempt = token;
  }
  void CancelRegister() override { ++cancels; }
  void ArmTimer(uint64_t token, milliseconds delay) override {
    timer = token;
    timer_delay = delay;
  }
  void DisarmTimer() override { timer = 0; }
  void Log(Action::Level, const std::string& message) override { log += message + "\n"; }
  void Transition(const Event&, Phase, Phase) override {}

  void Advance(milliseconds d) { facts.now += d; }
  // Fires the armed timer after its delay; false if none is armed.
  bool FireTimer() {
    if (timer == 0) return false;
    Advance(timer_delay);
    const uint64_t t = timer;
    timer = 0;
    Do(Event::Timer(t));
    return true;
  }
  void RegisterAnswers(RegisterOutcome o, std::string detail = "") {
    Do(Event::RegisterDone(attempt, o, std::move(detail)));
  }
  void KubeletRestarts(SocketId next) {
    facts.kubelet_socket = next;
    Do(Event::KubeletSocketCreated());
  }
  // Starts the machine again with kubelet.sock missing; answers the Registers made so far.
  int RestartWithoutKubeletSock() {
    facts.kubelet_socket = {};
    Do(Event::Stop());
    Do(Event::Start(Mode::kKubelet));
    return registers;
  }

  TokenSource tokens;
  RegistrationFsm fsm{"rdma/a", &tokens};
  Facts facts{Clock::time_point{}, SocketId{.inode = 10, .ctime_ns = 1}};
  bool serve_fails = false;
  bool dir_missing = false;
  bool hold_serves = false;
  uint64_t server = 0, attempt = 0, timer = 0;
  uint64_t streams = 0;  // the id of the latest stream a test opened (its own count)
  milliseconds timer_delay{0};
  int serves = 0, registers = 0, drops = 0, cancels = 0;
  std::string log;
};

}  // namespace rdmadp::lifecycle::test_support
