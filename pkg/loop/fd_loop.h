// What the manager needs of its event loop beyond a Scheduler: descriptors it watches (the
// signalfd, inotify, netlink sockets, verbs events) and a loop it runs until Quit().
// loop::EventLoop implements it over epoll; test/support/manual_loop.h with poll(2) on the
// test's call and time that moves only when the test says, so the manager's own rules
// (reload refusal, rescan debounce, fan-out) are tested in process (manager_test).
//
// Threads: as Scheduler (scheduler.h); Add, Remove and Run on the loop thread; Quit and Post
// from any thread.
#pragma once

#include "absl/status/status.h"
#include "pkg/loop/scheduler.h"

namespace rdmadp::loop {

class FdLoop : public Scheduler {
 public:
  // Calls `on_readable` on the loop thread whenever `fd` is readable; the fd must outlive
  // the registration. An error (the kernel's, with the fd) when it cannot be watched;
  // nothing is registered then.
  virtual absl::Status Add(int fd, Handler on_readable) = 0;
  virtual void Remove(int fd) = 0;
  // Runs handlers until Quit().
  virtual void Run() = 0;
  // Run() returns after the current handler.
  virtual void Quit() = 0;
};

}  // namespace rdmadp::loop
