// A loop::FdLoop for in-process tests of the manager: time and posted work are a
// ManualScheduler's (nothing fires until the test advances time), and watched descriptors
// are polled when the test says (Dispatch), without waiting: an inotify event or a netlink
// message is queued by the kernel before the call that caused it returns, so a test that
// writes a file, then calls Dispatch(), sees exactly the handlers that file made ready.
//
// Threads: the thread that made it is the loop thread; Post() from any thread (the
// scheduler's), everything else on the loop thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>

#include "pkg/loop/fd_loop.h"
#include "test/support/manual_scheduler.h"

namespace rdmadp::testing {

class ManualLoop final : public loop::FdLoop {
 public:
  void Post(loop::Handler fn) override { scheduler_.Post(std::move(fn)); }
  std::unique_ptr<loop::Alarm> NewAlarm(loop::Handler on_fire) override {
    return scheduler_.NewAlarm(std::move(on_fire));
  }
  loop::Clock::time_point Now() const override { return scheduler_.Now(); }
  bool OnLoop() const override { return scheduler_.OnLoop(); }
  absl::Status Add(int fd, loop::Handler on_readable) override;
  void Remove(int fd) override;
  // Dispatches until nothing is ready or Quit() was called; never waits.
  void Run() override;
  void Quit() override { quit_ = true; }

  // Runs the handler of each watched descriptor readable now, and what the handlers post,
  // until none is readable; how many handler calls ran.
  int Dispatch();
  // Moves time on by `d` (every alarm due on the way fires at its own time), then
  // dispatches what became readable.
  void Advance(std::chrono::milliseconds d);
  ManualScheduler& scheduler() { return scheduler_; }

 private:
  ManualScheduler scheduler_;
  std::map<int, std::shared_ptr<loop::Handler>> handlers_;
  bool quit_ = false;
};

}  // namespace rdmadp::testing
