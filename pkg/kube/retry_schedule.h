// When a loop that talks to the API server may send its next request, from the answers so
// far: the one place that decides every wait after a failure (docs/reliability.md, "Retries
// on the server's terms"). Pure: the caller passes the time of each answer and gets the
// earliest time of the next request; jitter is injected so tests can assert exact times.
//
// The rules, as client-go applies them and as a fleet of thousands of nodes needs them:
//  - 429 or 5xx with Retry-After: never before Retry-After (capped at kMaxRetryAfter, so a
//    server cannot park a node for years), and never before our own back-off step either;
//    plus up to a quarter of it more, at random: a throttled fleet told "4" would otherwise
//    come back in the same second and be throttled again (fleet_bench's overload wave saw
//    2,000 requests in one second, then 4 silent ones, over and over);
//  - 5xx, 429 without Retry-After, transport errors, a broken answer: the fast back-off,
//    jittered, kFirstBackoff doubling to kMaxBackoff (10 s: a node's next request comes
//    within 10 s of an API server's return; client-go's reflector waits up to a minute at
//    its 30 s cap, each wait d to 2d); once a series of failures is kLongFailure old, the
//    patient back-off, kMaxBackoff doubling to kMaxPatientBackoff: a control plane down for
//    long hears a third as much from a fleet (docs/performance.md, "A fleet against one
//    API server");
//  - 401/403 (a token or RBAC the operator must fix) and other 4xx: the slow back-off,
//    kFirstSlowBackoff doubling to kMaxSlowBackoff: retrying sooner cannot help;
//  - a success starts both over.
// Nothing else ends a wait: not a new wish, not a watch event. A wait the server imposed is
// the server's (a wipe that happens meanwhile is repaired when the wait ends).
//
// Not thread-safe: one per loop.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>

#include "pkg/kube/backoff.h"

namespace rdmadp::kube {

inline constexpr std::chrono::milliseconds kFirstBackoff{1000};
inline constexpr std::chrono::milliseconds kMaxBackoff{10000};
inline constexpr std::chrono::milliseconds kMaxPatientBackoff{30000};
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
  // Retry-After/4]).
  explicit RetrySchedule(Jitter jitter = nullptr, Jitter spread = nullptr)
      : jitter_(jitter ? std::move(jitter)
                       : Jitter([](std::chrono::milliseconds d) { return Jittered(d); })),
        spread_(spread ? std::move(spread) : Jitter([](std::chrono::milliseconds d) {
          return std::chrono::milliseconds(
              static_cast<int64_t>(RandomUpTo(static_cast<uint64_t>(d.count() / 4), ThreadRng())));
        })) {}

  // A request answered at `now` failed with `a`: the earliest time of the next request.
  Time Failed(Time now, const FailedAnswer& a) {
    // A series is failures one after the other: one that comes well after the last wait
    // ended (a refused probe an hour later; requests that worked meanwhile without telling
    // us) starts a new one.
    if (!failing_ || now > not_before_ + kMaxBackoff) series_start_ = now;
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
        wait = Next(now - series_start_ < kLongFailure ? fast_ : patient_);
        break;
      case FailureClass::kRefused:
        wait = Next(slow_);
        break;
    }
    not_before_ = std::max(not_before_, now + wait);
    return not_before_;
  }
  // The server answered as hoped: the next failure starts over.
  void Succeeded() {
    fast_.Reset();
    patient_.Reset();
    slow_.Reset();
    failing_ = false;
  }
  // The earliest time of the next request (the epoch when nothing failed yet).
  Time not_before() const { return not_before_; }

 private:
  std::chrono::milliseconds Next(Backoff& b) {
    const auto d = jitter_(b.step());
    b.Advance();
    return d;
  }

  Jitter jitter_;
  Jitter spread_;
  Backoff fast_{kFirstBackoff, kMaxBackoff};
  Backoff patient_{kMaxBackoff, kMaxPatientBackoff};
  Backoff slow_{kFirstSlowBackoff, kMaxSlowBackoff};
  Time not_before_{};
  bool failing_ = false;  // since the last success
  Time series_start_{};   // the first failure since then
};

}  // namespace rdmadp::kube
