#include "test/support/manual_scheduler.h"

#include <utility>

namespace rdmadp::testing {

class ManualScheduler::ManualAlarm final : public loop::Alarm {
 public:
  ManualAlarm(ManualScheduler& s, uint64_t id) : s_(s), id_(id) {}
  ~ManualAlarm() override {
    loop::AssertOnLoop(s_);
    s_.alarms_.erase(id_);
  }
  void ArmOnce(std::chrono::milliseconds after) override { Set(after, {}); }
  void ArmPeriodic(std::chrono::milliseconds every) override { Set(every, every); }
  void Disarm() override {
    loop::AssertOnLoop(s_);
    s_.alarms_.at(id_).due.reset();
  }

 private:
  void Set(std::chrono::milliseconds first, std::chrono::milliseconds period) {
    loop::AssertOnLoop(s_);
    AlarmState& a = s_.alarms_.at(id_);
    a.due = s_.now_ + first;
    a.period = period;
    a.armed_order = ++s_.arm_count_;
  }
  ManualScheduler& s_;
  const uint64_t id_;
};

// Not the epoch: code that treats a zero time_point as "never" must still see real times.
ManualScheduler::ManualScheduler()
    : thread_(std::this_thread::get_id()), now_(loop::Clock::time_point(std::chrono::hours(1))) {}

ManualScheduler::~ManualScheduler() = default;

void ManualScheduler::Post(loop::Handler fn) {
  {
    std::lock_guard lock(mu_);
    posted_.push_back(std::move(fn));
  }
  posted_cv_.notify_all();
}

std::unique_ptr<loop::Alarm> ManualScheduler::NewAlarm(loop::Handler on_fire) {
  loop::AssertOnLoop(*this);
  const uint64_t id = ++next_id_;
  alarms_[id].on_fire = std::move(on_fire);
  return std::make_unique<ManualAlarm>(*this, id);
}

std::vector<loop::Handler> ManualScheduler::TakePosted() {
  std::lock_guard lock(mu_);
  return std::exchange(posted_, {});
}

int ManualScheduler::RunPosted() {
  loop::AssertOnLoop(*this);
  int ran = 0;
  for (auto work = TakePosted(); !work.empty(); work = TakePosted()) {
    for (auto& fn : work) {
      fn();
      ++ran;
    }
  }
  return ran;
}

bool ManualScheduler::AwaitPosted(std::chrono::milliseconds limit) {
  loop::AssertOnLoop(*this);
  {
    std::unique_lock lock(mu_);
    if (!posted_cv_.wait_for(lock, limit, [this] { return !posted_.empty(); })) return false;
  }
  RunPosted();
  return true;
}

void ManualScheduler::Advance(std::chrono::milliseconds d) {
  loop::AssertOnLoop(*this);
  const loop::Clock::time_point until = now_ + d;
  RunPosted();
  while (true) {
    // The earliest due alarm, looked up afresh each time: a handler may arm, disarm or
    // destroy alarms (its own included).
    auto next = alarms_.end();
    for (auto it = alarms_.begin(); it != alarms_.end(); ++it) {
      if (!it->second.due || *it->second.due > until) continue;
      if (next == alarms_.end() || *it->second.due < *next->second.due ||
          (*it->second.due == *next->second.due &&
           it->second.armed_order < next->second.armed_order)) {
        next = it;
      }
    }
    if (next == alarms_.end()) break;
    AlarmState& a = next->second;
    now_ = *a.due;
    if (a.period.count() > 0) {
      a.due = *a.due + a.period;
    } else {
      a.due.reset();
    }
    const loop::Handler fire = a.on_fire;  // a copy: the handler may destroy its alarm
    fire();
    RunPosted();
  }
  now_ = until;
}

std::optional<loop::Clock::time_point> ManualScheduler::NextAlarm() const {
  std::optional<loop::Clock::time_point> next;
  for (const auto& [id, a] : alarms_) {
    if (a.due && (!next || *a.due < *next)) next = a.due;
  }
  return next;
}

int ManualScheduler::armed() const {
  int n = 0;
  for (const auto& [id, a] : alarms_) n += a.due ? 1 : 0;
  return n;
}

}  // namespace rdmadp::testing
