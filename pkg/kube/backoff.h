// Jittered, capped exponential back-off for every loop that talks to the API server.
// A thousand nodes that failed together (an API server outage) must not come back together:
// each delay is drawn from the upper half [d/2, d] of the current step, and the step doubles
// up to the cap. Not thread-safe: one per loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace rdmadp::kube {

// A random integer in [0, n]. `rng` is any engine; the default is seeded per thread.
inline uint64_t RandomUpTo(uint64_t n, std::minstd_rand& rng) {
  return n == 0 ? 0 : static_cast<uint64_t>(rng()) % (n + 1);
}
inline std::minstd_rand& ThreadRng() {
  static thread_local std::minstd_rand rng(std::random_device{}());
  return rng;
}

// [d/2, d]: keeps at least half the wait (the server asked for room) while spreading a fleet.
inline std::chrono::milliseconds Jittered(std::chrono::milliseconds d,
                                          std::minstd_rand& rng = ThreadRng()) {
  if (d.count() < 2) return d;
  const auto half = static_cast<uint64_t>(d.count() / 2);
  return std::chrono::milliseconds(static_cast<int64_t>(half + RandomUpTo(half, rng)));
}

class Backoff {
 public:
  Backoff(std::chrono::milliseconds first, std::chrono::milliseconds cap)
      : first_(first), cap_(cap), step_(first) {}
  // The next wait (jittered), then the step doubles up to the cap.
  std::chrono::milliseconds Next(std::minstd_rand& rng = ThreadRng()) {
    const auto d = Jittered(step_, rng);
    Advance();
    return d;
  }
  // The step doubles up to the cap (for callers that jitter the step themselves).
  void Advance() { step_ = std::min(step_ * 2, cap_); }
  // The peer answers again: the next failure starts over.
  void Reset() { step_ = first_; }
  std::chrono::milliseconds step() const { return step_; }

 private:
  std::chrono::milliseconds first_, cap_, step_;
};

}  // namespace rdmadp::kube
