#include "pkg/dra/slices/outage_turns.h"

namespace rdmadp::dra {

bool OutageTurns::WatcherAnswered(bool away) {
  const int was = watcher_away_;
  watcher_away_ = away ? watcher_away_ + 1 : 0;
  return (was == 0) != (watcher_away_ == 0);  // a held probe, a join
}

bool OutageTurns::WatcherAsking(bool asking, TimePoint now) {
  if (watcher_asking_ == asking) return false;
  watcher_asking_ = asking;
  if (asking) asking_since_ = now;
  return true;  // a change waiting for the quick retry's answer
}

std::optional<OutageTurns::TimePoint> OutageTurns::QuickRetryHold(TimePoint now) const {
  // A change sent while the quick retry is out would be a second probe of the same outage
  // and could make a node's 8 requests in it 9.
  const TimePoint until = asking_since_ + kQuickRetryAnswerWait;
  if (watcher_away_ == 1 && watcher_asking_ && !writer_away_ && now < until) return until;
  return std::nullopt;
}

bool OutageTurns::NothingToWrite() {
  if (!writer_away_) return false;
  writer_away_ = false;
  return true;
}

void OutageTurns::BatchEnded(bool answered, const std::optional<kube::FailedAnswer>& failed) {
  if (answered) {
    // The server answers: the watcher, waiting on a change that was due, may go now.
    writer_away_ = false;
    watcher_away_ = 0;
    ++writer_answers_;
  } else if (failed) {
    // Away: 5xx, 429 without Retry-After, no answer. A throttled write waits its
    // Retry-After and the watcher goes on; a refused one is the operator's to fix.
    writer_away_ = kube::Classify(*failed) == kube::FailureClass::kTransient;
  }
  writing_ = false;  // with writer_away_ decided: the watcher waits for both at once
}

}  // namespace rdmadp::dra
