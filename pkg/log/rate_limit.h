// Bounds how often one kind of warning reaches the log: at most `burst` lines per `window`;
// the rest are counted, and the next line admitted says how many were left out. A client
// that sends 5,000 bad requests gets 5,000 answers (and metric counts), not 5,000 lines.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>

namespace rdmadp::log {

inline constexpr uint64_t kRateLimited = std::numeric_limits<uint64_t>::max();

class RateLimit {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateLimit(int burst = 5, std::chrono::milliseconds window = std::chrono::seconds(10))
      : burst_(burst), window_(window) {}

  // kRateLimited: do not log this one. Otherwise log it, noting the returned count of
  // events left out since the last one logged.
  uint64_t Admit(Clock::time_point now = Clock::now()) {
    std::lock_guard lock(mu_);
    if (now - window_start_ >= window_) {
      window_start_ = now;
      admitted_ = 0;
    }
    if (admitted_ >= burst_) {
      ++suppressed_;
      return kRateLimited;
    }
    ++admitted_;
    const uint64_t suppressed = suppressed_;
    suppressed_ = 0;
    return suppressed;
  }

 private:
  const int burst_;
  const std::chrono::milliseconds window_;
  std::mutex mu_;
  Clock::time_point window_start_{};
  int admitted_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace rdmadp::log
