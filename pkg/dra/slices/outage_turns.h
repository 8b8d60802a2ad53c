// Who of the publisher's two threads talks to an API server that is away, and when. The
// rules (docs/performance.md, "A fleet against one API server"): a node sends one series of
// retries into an outage, not two.
//  - While the writer retries a change against a server that is away (writer_away()), its
//    retries are the node's probes: the watcher sends nothing until one is answered, then
//    waits for its own next grid point.
//  - The watcher's first failure is followed by one quick retry. A change that comes while
//    that retry is out waits for its answer (at most kQuickRetryAnswerWait): the answer tells
//    a blip (the change goes at once) from an outage. A change that comes after the watcher
//    found the server away twice running does not go at once: it joins the grid a whole
//    period out (JoinsGrid), and from then on the writer's retries are the probes.
//  - A batch of writes in flight (writing()) is waited for by the watcher: its answer says
//    whether the writer is away, so that a quick retry and the write's failure are not both
//    spent on the same outage.
//  - The capability probe waits while the server is away (server_away()).
//
// Pure: time is passed in, nothing waits here. A mutator that returns bool returns whether a
// waiter of the other thread must be woken (the caller then notifies, under its lock). One
// change wakes nobody on purpose: the watcher's second failure in a row. A change held for
// the quick retry's answer is woken by the end of the asking that follows it.
// Not thread-safe: the publisher's lock covers it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "pkg/kube/retry_schedule.h"

namespace rdmadp::dra {

// The longest a new change waits for the answer to the watcher's quick retry (a server that
// accepted the connection and never answers must not hold a change for the watch's 90 s).
inline constexpr std::chrono::seconds kQuickRetryAnswerWait{5};

class OutageTurns {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // The watcher's side.
  // A list or a watch of the watcher's found the server away (5xx, 429, no answer), or
  // was answered (away = false: the count starts over).
  bool WatcherAnswered(bool away);
  // A list or a watch is out and not answered yet (a watch until its 200), or no longer.
  bool WatcherAsking(bool asking, TimePoint now);
  bool writer_away() const { return writer_away_; }
  bool writing() const { return writing_; }
  // Answered batches since the start: the watcher compares it across a wait to tell "the
  // writer found the server back" from "the writer had nothing left to write".
  uint64_t writer_answers() const { return writer_answers_; }

  // The writer's side.
  // Until when a change that is due waits for the watcher's quick retry to be answered
  // (nullopt: it need not wait).
  std::optional<TimePoint> QuickRetryHold(TimePoint now) const;
  // A change due now is not sent but joins the retry grid: the watcher found the server
  // away twice running and the writer is not yet retrying.
  bool JoinsGrid() const { return watcher_away_ >= 2 && !writer_away_; }
  // The change joined the grid: from now on the writer's retries are the node's probes.
  void Joined() { writer_away_ = true; }
  // The reconcile found nothing to write: that ends the writer's probing (the watcher's turn).
  bool NothingToWrite();
  // A batch of writes goes out now.
  void BatchStarts() { writing_ = true; }
  // The batch's end (also after a round that sent nothing). `answered`: the server answered
  // a write with a 2xx or a 409; `failed`: what it answered when a write failed otherwise
  // (nullopt: no such failure). The caller always notifies: the watcher waits for it.
  void BatchEnded(bool answered, const std::optional<kube::FailedAnswer>& failed);
  // The capability probe waits: the writer is away, or the watcher found the server away.
  bool server_away() const { return writer_away_ || watcher_away_ >= 1; }

 private:
  // The writer's last batch found the server away and a change waits.
  bool writer_away_ = false;
  // How many of the watcher's last lists and watches in a row found the server away.
  int watcher_away_ = 0;
  bool watcher_asking_ = false;
  TimePoint asking_since_{};
  bool writing_ = false;
  uint64_t writer_answers_ = 0;
};

}  // namespace rdmadp::dra
