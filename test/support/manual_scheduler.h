// A loop::Scheduler whose time moves only when the test says (Advance), for in-process
// tests of what runs on the loop: a front end's auto-mode decision after 5 s, a retry after a
// back-off, a heartbeat, each asserted at its exact time and without waiting for it.
//
// Threads: the thread that made it is the loop thread (OnLoop). Post() from any thread; the
// posted work runs when the loop thread calls RunPosted(), AwaitPosted() or Advance(). Every
// other call on the loop thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "pkg/loop/scheduler.h"

namespace rdmadp::testing {

class ManualScheduler final : public loop::Scheduler {
 public:
  ManualScheduler();
  ~ManualScheduler() override;

  void Post(loop::Handler fn) override;
  std::unique_ptr<loop::Alarm> NewAlarm(loop::Handler on_fire) override;
  loop::Clock::time_point Now() const override { return now_; }
  bool OnLoop() const override { return std::this_thread::get_id() == thread_; }

  // Runs what was posted, and what that posts, until nothing is left; how many ran.
  int RunPosted();
  // Waits up to `limit` of real time for work posted by another thread (a gRPC thread's
  // answer), then runs it and what it posts; false if nothing came in time.
  bool AwaitPosted(std::chrono::milliseconds limit);
  // Moves time on by `d`: each alarm due on the way fires at its own time, earliest first
  // (ties in the order armed), and what it posts runs before the next one.
  void Advance(std::chrono::milliseconds d);
  // When the earliest armed alarm goes off; nullopt when none is armed.
  std::optional<loop::Clock::time_point> NextAlarm() const;
  // How many alarms are armed.
  int armed() const;

 private:
  class ManualAlarm;
  struct AlarmState {
    loop::Handler on_fire;
    std::optional<loop::Clock::time_point> due;
    std::chrono::milliseconds period{0};
    uint64_t armed_order = 0;
  };
  std::vector<loop::Handler> TakePosted();

  const std::thread::id thread_;
  loop::Clock::time_point now_;
  uint64_t next_id_ = 0;
  uint64_t arm_count_ = 0;
  std::map<uint64_t, AlarmState> alarms_;  // by id, loop thread only
  std::mutex mu_;
  std::condition_variable posted_cv_;
  std::vector<loop::Handler> posted_;
};

}  // namespace rdmadp::testing
