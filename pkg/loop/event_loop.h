// The single event loop that owns the daemon's lifecycle: epoll over signalfd, inotify,
// timerfd, netlink sockets and an eventfd through which other threads post work; the
// Scheduler (scheduler.h) everything else sees.
// Run() and every handler execute on the thread that called Run() (before Run(): the thread
// that created the loop); only Post() and Quit() may be called from other threads (Add,
// Remove and the timers abort on another: AssertOnLoop; what Post() hands over is guarded by
// a mutex the compiler checks, pkg/sync/mutex.h). A
// descriptor the kernel refuses to watch or a timer it refuses to create is an error said
// in the log, never a silent handler that never runs.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/loop/fd_loop.h"
#include "pkg/sync/mutex.h"

namespace rdmadp::loop {

class EventLoop final : public FdLoop {
 public:
  using Handler = loop::Handler;

  static absl::StatusOr<std::unique_ptr<EventLoop>> Create();

  // Calls `on_readable` whenever `fd` is readable. The fd must outlive the registration.
  // An error (the kernel's, with the fd) when epoll refuses it; nothing is registered then.
  absl::Status Add(int fd, Handler on_readable) override;
  void Remove(int fd) override;
  // Thread-safe: runs `fn` on the loop thread soon.
  void Post(Handler fn) override;
  std::unique_ptr<Alarm> NewAlarm(Handler on_fire) override;
  Clock::time_point Now() const override { return Clock::now(); }
  bool OnLoop() const override;
  // Thread-safe: Run() returns after the current handler.
  void Quit() override;
  void Run() override;

 private:
  EventLoop(UniqueFd epoll, UniqueFd wake);
  void DrainPosted();

  UniqueFd epoll_;
  UniqueFd wake_;
  std::map<int, std::shared_ptr<Handler>> handlers_;
  sync::Mutex mu_;
  std::vector<Handler> posted_ ABSL_GUARDED_BY(mu_);
  bool quit_ = false;                    // the loop thread's
  std::atomic<std::thread::id> thread_;  // the loop thread
};

// A timerfd registered in a loop. Fires `handler` on the loop thread. A timer the kernel
// refuses (no descriptor left) is said in the log at creation; arming it then does nothing.
class Timer final : public Alarm {
 public:
  Timer(EventLoop& loop, EventLoop::Handler handler);
  ~Timer() override;
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  void ArmOnce(std::chrono::milliseconds after) override;
  void ArmPeriodic(std::chrono::milliseconds every) override;
  void Disarm() override;

 private:
  void Set(std::chrono::milliseconds first, std::chrono::milliseconds interval);
  EventLoop& loop_;
  UniqueFd fd_;
};

}  // namespace rdmadp::loop
