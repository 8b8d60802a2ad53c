// A kube::ThreadClock whose time a test moves: Now() stands still until Advance(), and
// every thread that waits on it (WaitUntil, Wait) is known to it, so a test can wait until
// the component is quiet (every one of its threads blocked on this clock) before it moves
// time, and time moves one deadline at a time:
//
//   ManualClock clock(/*participants=*/2);   // the slice publisher's watcher and writer
//   ... start the component with &clock ...
//   clock.Advance(30s);  // quiet, then each deadline up to +30 s in order, quiet after each
//
// A wake-up through NotifyAll(cv) counts at once: the woken thread is running from that
// moment, whether or not it has been scheduled yet, so "quiet" never mistakes a thread about
// to run for a blocked one. Waits end only by NotifyAll or by the time passing their deadline
// (no spurious wake-ups), so a run is repeatable.
//
// Quiet is awaited in real time, up to kStuck: a thread that blocks elsewhere than on this
// clock (real I/O, a plain condition variable) is a component that cannot run on it, and the
// test aborts with that line rather than hang.
//
// Threads: every call from any thread. Advance, AdvanceTo and Settle from one thread, not a
// participant.
#pragma once

#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>

#include "pkg/kube/thread_clock.h"

namespace rdmadp::testing {

class ManualClock final : public kube::ThreadClock {
 public:
  static constexpr std::chrono::seconds kStuck{60};  // of real time

  // `participants`: the threads that wait on this clock (quiet = that many blocked). Now()
  // starts at an arbitrary fixed time, start().
  explicit ManualClock(int participants);
  ~ManualClock() override;

  // More (or, with a negative `n`, fewer) threads from now on: a component started or
  // joined.
  void AddParticipants(int n);
  time_point start() const { return start_; }
  // Since start().
  std::chrono::milliseconds Elapsed() const;

  // Waits until quiet, without moving time.
  void Settle();
  // Moves time to `until` (a time not later than Now() only settles): settles, then, while a
  // blocked waiter's deadline is not after `until`, moves Now() to the earliest such deadline,
  // wakes every waiter it reaches and settles again; then Now() = `until`.
  void AdvanceTo(time_point until);
  void Advance(std::chrono::nanoseconds by) { AdvanceTo(Now() + by); }

  time_point Now() const override;
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                 time_point deadline) const override;
  void Wait(std::condition_variable& cv, std::unique_lock<std::mutex>& lock) const override;
  void NotifyAll(std::condition_variable& cv) const override;

 private:
  struct Waiter {
    std::condition_variable* on;  // the caller's (NotifyAll's key)
    time_point deadline;          // time_point::max() for Wait
    bool woken = false;
    std::condition_variable wake;  // this waiter's own, under mu_
  };
  // Blocks the caller (its `lock` released) until its waiter is woken.
  void Block(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
             time_point deadline) const;
  // Requires mu_ in `lock`: waits until `blocked_` == participants_.
  void SettleLocked(std::unique_lock<std::mutex>& lock) const;
  void Wake(Waiter& w) const;  // requires mu_

  const time_point start_;
  mutable std::mutex mu_;
  mutable std::condition_variable quiet_;  // a waiter blocked, or participants changed
  time_point now_;
  int participants_;
  mutable int blocked_ = 0;            // waiters not woken
  mutable std::list<Waiter> waiters_;  // stable addresses
};

}  // namespace rdmadp::testing
