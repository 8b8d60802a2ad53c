#include "pkg/lifecycle/registration_executor.h"

namespace rdmadp::lifecycle {

std::vector<Action> Run(RegistrationFsm& fsm, RegistrationExecutor& executor, const Event& event) {
  const Facts facts = executor.Observe(event);
  const Phase before = fsm.phase();
  const std::vector<Action> actions = fsm.Handle(event, facts);
  executor.Transition(event, before, fsm.phase());
  std::vector<Action> all;
  for (const Action& action : actions) {
    all.push_back(action);
    switch (action.kind) {
      case Action::Kind::kServe:
        if (std::optional<Event> answer = executor.Serve(action.token)) {
          std::vector<Action> more = Run(fsm, executor, *answer);
          all.insert(all.end(), more.begin(), more.end());
        }
        break;
      case Action::Kind::kDropServer:
        executor.DropServer();
        break;
      case Action::Kind::kRegister:
        executor.Register(action.token, action.fresh);
        break;
      case Action::Kind::kCancelRegister:
        executor.CancelRegister();
        break;
      case Action::Kind::kArmTimer:
        executor.ArmTimer(action.token, action.delay);
        break;
      case Action::Kind::kDisarmTimer:
        executor.DisarmTimer();
        break;
      case Action::Kind::kLog:
        executor.Log(action.level, action.message);
        break;
    }
  }
  return all;
}

}  // namespace rdmadp::lifecycle
