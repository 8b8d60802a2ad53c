// The single event loop that owns the daemon's lifecycle: epoll over signalfd, inotify,
// timerfd, netlink sockets and an eventfd through which other threads post work.
// Run() and every handler execute on the thread that called Run(); only Post() and Quit()
// may be called from other threads.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/fd/unique_fd.h"

namespace rdmadp::loop {

class EventLoop {
 public:
  using Handler = std::function<void()>;

  static absl::StatusOr<std::unique_ptr<EventLoop>> Create();

  // Calls `on_readable` whenever `fd` is readable. The fd must outlive the registration.
  void Add(int fd, Handler on_readable);
  void Remove(int fd);
  // Thread-safe: runs `fn` on the loop thread soon.
  void Post(Handler fn);
  // Thread-safe: Run() returns after the current handler.
  void Quit();
  void Run();

 private:
  EventLoop(UniqueFd epoll, UniqueFd wake);
  void DrainPosted();

  UniqueFd epoll_;
  UniqueFd wake_;
  std::map<int, std::shared_ptr<Handler>> handlers_;
  std::mutex mu_;
  std::vector<Handler> posted_;
  bool quit_ = false;
};

// A timerfd registered in a loop. Fires `handler` on the loop thread.
class Timer {
 public:
  Timer(EventLoop& loop, EventLoop::Handler handler);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  void ArmOnce(std::chrono::milliseconds after);
  void ArmPeriodic(std::chrono::milliseconds every);
  void Disarm();

 private:
  void Set(std::chrono::milliseconds first, std::chrono::milliseconds interval);
  EventLoop& loop_;
  UniqueFd fd_;
};

}  // namespace rdmadp::loop
