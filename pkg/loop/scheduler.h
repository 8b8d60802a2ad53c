// The event loop as everything that runs on it sees it: post work from any thread, arm
// alarms, read the time, and check the thread. loop::EventLoop implements it over epoll and
// timerfd; test/support/manual_scheduler.h implements it with time that moves only when a
// test says, so the front ends' timing logic (auto-mode decisions, retries, heartbeats) is
// tested in-process without real waits.
//
// Threads: Post() from any thread; everything else on the loop thread, the thread that runs
// the loop (before it runs: the thread that made it). AssertOnLoop() enforces that where a
// comment used to promise it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

namespace rdmadp::loop {

using Handler = std::function<void()>;
using Clock = std::chrono::steady_clock;

// A timer whose handler runs on the loop thread. Re-arming replaces the previous setting;
// destroying it disarms it.
class Alarm {
 public:
  virtual ~Alarm() = default;
  virtual void ArmOnce(std::chrono::milliseconds after) = 0;
  virtual void ArmPeriodic(std::chrono::milliseconds every) = 0;
  virtual void Disarm() = 0;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Any thread: runs `fn` on the loop thread soon, in the order posted.
  virtual void Post(Handler fn) = 0;
  // Loop thread: a new, disarmed alarm that runs `on_fire` when it goes off.
  virtual std::unique_ptr<Alarm> NewAlarm(Handler on_fire) = 0;
  // The loop's clock: every deadline a front end computes is on it.
  virtual Clock::time_point Now() const = 0;
  // Whether the calling thread is the loop thread.
  virtual bool OnLoop() const = 0;
};

// Aborts with the caller's file and line when not called on `scheduler`'s loop thread: a
// handler reached from a gRPC or publisher thread without a Post() is a data race, found
// here at its first call rather than as a corrupted map later.
// (__builtin_FILE and __builtin_LINE, not std::source_location: clang-tidy 14's front end
// cannot parse libstdc++ 12's <source_location>.)
void AssertOnLoop(const Scheduler& scheduler, const char* file = __builtin_FILE(),
                  int line = __builtin_LINE());

}  // namespace rdmadp::loop
