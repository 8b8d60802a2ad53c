// The one way a registration state machine's actions are carried out: both front ends and
// the unit tests implement RegistrationExecutor, and Run() hands it each action in order.
// The executor observes the world (Facts) and acts on it; the machine decides.
//
// Threads: Run() and every executor method run on the caller's thread (the front ends'
// event loop), one event at a time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/lifecycle/registration_fsm.h"

namespace rdmadp::lifecycle {

class RegistrationExecutor {
 public:
  // What the world looks like just before `event` is handed in.
  virtual Facts Observe(const Event& event) = 0;
  // Publish a socket as server incarnation `server` (dropping the old one) and answer with
  // its ServeOk/ServeFailed. The front ends answer at once; a test may answer later (by
  // handing the event in itself) to see the machine between the two.
  virtual std::optional<Event> Serve(uint64_t server) = 0;
  virtual void DropServer() = 0;
  // Start a Register of attempt `attempt` against kubelet.sock; its answer comes back as a
  // RegisterDone. `fresh`: kubelet.sock was just created, skip the liveness probe. A DRA
  // driver, registered by the kubelet's plugin watcher, never gets one.
  virtual void Register(uint64_t attempt, bool fresh) = 0;
  virtual void CancelRegister() = 0;
  // One timer per machine: arming replaces the armed one. Its firing comes back as a
  // Timer(token).
  virtual void ArmTimer(uint64_t token, milliseconds delay) = 0;
  virtual void DisarmTimer() = 0;
  virtual void Log(Action::Level level, const std::string& message) = 0;
  // Every event handed in, with the phases around it (debug traces).
  virtual void Transition(const Event& event, Phase before, Phase after) = 0;

 protected:
  ~RegistrationExecutor() = default;
};

// Hands `event` to `fsm` and carries out the actions it returns through `executor`, in
// order; a Serve's answer is handed in before the actions after it. Returns every action
// carried out, the answers' included (tests).
std::vector<Action> Run(RegistrationFsm& fsm, RegistrationExecutor& executor, const Event& event);

}  // namespace rdmadp::lifecycle
