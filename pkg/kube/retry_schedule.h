// When a loop that talks to the API server may send its next request, from the answers so
// far: the one place that decides every wait after a failure (docs/reliability.md, "Retries
// on the server's terms"). Pure: the caller passes the time of each answer and gets the
// earliest time of the next request; jitter and phase are injected so tests can assert
// exact times.
//
// The rules, as a fleet of thousands of nodes needs them (docs/performance.md, "A fleet
// against one API server"):
//  - 429 or 5xx with Retry-After: never before Retry-After (capped at kMaxRetryAfter, so a
//    server cannot park a node for years), and never before our own back-off step either
//    (kFirstBackoff doubling to kMaxBackoff); plus up to a quarter of it more, at random: a
//    throttled fleet told "4" would otherwise come back in the same second and be throttled
//    again (fleet_bench's overload wave saw 2,000 requests in one second, then 4 silent
//    ones, over and over);
//  - 5xx, 429 without Retry-After, transport errors, a broken answer (the server is away):
//    each retry lands on this series' own grid, a random phase of a fixed period from the
//    series' first failure. A fleet that failed in the same instant then comes back spread
//    evenly over one period, not in a herd, and no node sends more than one request a
//    period. The period is the loop's pace:
//      kUrgent (a change waits to be written): kUrgentPeriod, 9.5 s: the change lands
//        within 10 s of the server's return, and a 60 s outage hears at most 8 requests;
//      kIdle (nothing to write, only a watch to resume): one quick retry (kFirstBackoff,
//        jittered) for a blip, then kIdlePeriod, 30 s, the pace of client-go's reflector;
//      either, once the series is kLongFailure old: kIdlePeriod;
//  - 401/403 (a token or RBAC the operator must fix) and other 4xx: the slow back-off,
//    kFirstSlowBackoff doubling to kMaxSlowBackoff: retrying sooner cannot help;
//  - a success starts everything over.
// Nothing else ends a wait: not a new wish, not a watch event. A wait the server imposed is
// the server's (a wipe that happens meanwhile is repaired when it ends).
//
// Not thread-safe: one per loop.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>

#include "pkg/kube/backoff.h"

namespace rdmadp::kube {

inline constexpr std::chrono::milliseconds kFirstBackoff{1000};
inline constexpr std::chrono::milliseconds kMaxBackoff{10000};
// The grid of a series of "away" failures (above). 9.5 s, not 10: the request that finds the
// server back must also be answered within the 10 s.
inline constexpr std::chrono::milliseconds kUrgentPeriod{9500};
inline constexpr std::chrono::milliseconds kIdlePeriod{30000};
// A retry on the grid is never sooner than this after the failure. 3 s, so that a series'
// first 60 s hold at most 6 grid points whatever its phase (at most 7 with 9.5 s and less):
// with the write and the watch that found the server gone, 8 requests in a 60 s outage.
inline constexpr std::chrono::milliseconds kMinGridWait{3000};
inline constexpr std::chrono::seconds kLongFailure{120};
inline constexpr std::chrono::milliseconds kFirstSlowBackoff{8000};
inline constexpr std::chrono::milliseconds kMaxSlowBackoff{300000};
// The longest Retry-After honoured as sent; longer ones wait this long (then the spread: at
// most a quarter more, 150 s in all).
inline constexpr std::chrono::seconds kMaxRetryAfter{120};

// What a failed request got: an HTTP code (0: no answer, a transport error or an answer
// that could not be read) and the server's Retry-After in seconds (0: none).
struct FailedAnswer {
  long code = 0;
  int retry_after_seconds = 0;
};

enum class FailureClass { kThrottled, kTransient, kRefused };

// How soon the loop needs the server again (above).
enum class Pace { kUrgent, kIdle };

inline FailureClass Classify(const FailedAnswer& a) {
  // client-go honours Retry-After on 429 and on any 5xx (rest/request.go, checkWait).
  if ((a.code == 429 || a.code >= 500) && a.retry_after_seconds > 0) {
    return FailureClass::kThrottled;
  }
  if (a.code == 0 || a.code == 429 || a.code >= 500) return FailureClass::kTransient;
  return FailureClass::kRefused;  // 401, 403, 404, 422, ...: retrying soon cannot help
}

class RetrySchedule {
 public:
  using Time = std::chrono::steady_clock::time_point;
  using Jitter = std::function<std::chrono::milliseconds(std::chrono::milliseconds)>;

  // `jitter` maps a back-off step to the wait actually taken (empty: [step/2, step]);
  // `spread` maps a server's Retry-After to the extra wait taken after it (empty: [0,
  // Retry-After/4]); `phase` maps a grid period to the series' offset on it (empty: [0,
  // period), drawn once a series).
  explicit RetrySchedule(Jitter jitter = nullptr, Jitter spread = nullptr, Jitter phase = nullptr)
      : jitter_(jitter ? std::move(jitter)
                       : Jitter([](std::chrono::milliseconds d) { return Jittered(d); })),
        spread_(spread ? std::move(spread) : UpTo(4)),
        phase_draw_(phase ? std::move(phase) : UpTo(1)) {}

  // A request answered at `now` failed with `a`: the earliest time of the next request.
  Time Failed(Time now, const FailedAnswer& a, Pace pace = Pace::kUrgent) {
    // A series is failures one after the other: one that comes well after the last wait
    // ended (a refused probe an hour later; requests that worked meanwhile without telling
    // us) starts a new one.
    if (!failing_ || now > not_before_ + kMaxBackoff) {
      series_start_ = now;
      phase_.reset();
      quick_taken_ = false;
    }
    failing_ = true;
    std::chrono::milliseconds wait{0};
    switch (Classify(a)) {
      case FailureClass::kThrottled: {
        const auto asked = std::min<std::chrono::milliseconds>(
            std::chrono::seconds(a.retry_after_seconds), kMaxRetryAfter);
        wait = std::max(asked + spread_(asked), Next(fast_));
        break;
      }
      case FailureClass::kTransient:
        if (pace == Pace::kIdle && !quick_taken_) {
          quick_taken_ = true;
          wait = jitter_(kFirstBackoff);
        } else {
          wait = OnGrid(now, GridPeriod(now, pace));
        }
        break;
      case FailureClass::kRefused:
        wait = Next(slow_);
        break;
    }
    not_before_ = std::max(not_before_, now + wait);
    return not_before_;
  }
  // The current series' next grid point at least kMinGridWait from `now`, without a
  // failure: a loop that waited on another loop's retries resumes there, spread as its
  // series is (`now` when nothing is failing).
  Time NextGridPoint(Time now, Pace pace) {
    if (!failing_) return now;
    not_before_ = std::max(not_before_, now + OnGrid(now, GridPeriod(now, pace)));
    return not_before_;
  }
  // A change deferred because another loop already found the server away: an urgent
  // series whose first point is at least a whole period away. The other loop's requests
  // spent part of the node's 8 in a 60 s outage; the change's retries have the rest.
  Time Join(Time now) {
    Failed(now, {}, Pace::kUrgent);
    const Time from = now + kUrgentPeriod - kMinGridWait;
    not_before_ = std::max(not_before_, from + OnGrid(from, kUrgentPeriod));
    return not_before_;
  }
  // The server answered as hoped: the next failure starts over.
  void Succeeded() {
    fast_.Reset();
    slow_.Reset();
    failing_ = false;
  }
  // The earliest time of the next request (the epoch when nothing failed yet).
  Time not_before() const { return not_before_; }

 private:
  // [0, d/n] at random.
  static Jitter UpTo(int n) {
    return [n](std::chrono::milliseconds d) {
      return std::chrono::milliseconds(
          static_cast<int64_t>(RandomUpTo(static_cast<uint64_t>(d.count() / n), ThreadRng())));
    };
  }
  std::chrono::milliseconds Next(Backoff& b) {
    const auto d = jitter_(b.step());
    b.Advance();
    return d;
  }
  // The pace's period; kIdlePeriod for either once the series is kLongFailure old.
  std::chrono::milliseconds GridPeriod(Time now, Pace pace) const {
    return pace == Pace::kIdle || now - series_start_ >= kLongFailure ? kIdlePeriod : kUrgentPeriod;
  }
  // The wait until this series' first grid point at least kMinGridWait away.
  std::chrono::milliseconds OnGrid(Time now, std::chrono::milliseconds period) {
    // One phase a series, drawn on the longest period as a fraction of it and scaled to
    // whichever period applies.
    if (!phase_) {
      phase_ = static_cast<double>(std::clamp(phase_draw_(kIdlePeriod).count(), int64_t{0},
                                              int64_t{kIdlePeriod.count() - 1})) /
               static_cast<double>(kIdlePeriod.count());
    }
    const auto offset = std::chrono::milliseconds(
        static_cast<int64_t>(*phase_ * static_cast<double>(period.count())));
    const auto earliest =
        std::chrono::duration_cast<std::chrono::milliseconds>(now + kMinGridWait - series_start_);
    const int64_t k =
        std::max<int64_t>(0, (earliest - offset + period - std::chrono::milliseconds(1)) / period);
    return std::chrono::duration_cast<std::chrono::milliseconds>(series_start_ + offset +
                                                                 k * period - now);
  }

  Jitter jitter_;
  Jitter spread_;
  Jitter phase_draw_;
  Backoff fast_{kFirstBackoff, kMaxBackoff};
  Backoff slow_{kFirstSlowBackoff, kMaxSlowBackoff};
  Time not_before_{};
  bool failing_ = false;         // since the last success
  Time series_start_{};          // the first failure since then
  std::optional<double> phase_;  // [0, 1) of a period, drawn once a series
  bool quick_taken_ = false;     // kIdle's one quick retry, this series
};

}  // namespace rdmadp::kube
