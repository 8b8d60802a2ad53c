// Issue 31 item 7: the API back-off is jittered, so a fleet that failed together (an API
// server outage) spreads its retries instead of arriving in the same half second.
#include "pkg/kube/backoff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace rdmadp::kube {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DoublesToTheCapAndStartsOverOnReset) {
  Backoff b(milliseconds(1000), milliseconds(30000));
  std::vector<long> steps;
  for (int i = 0; i < 7; ++i) {
    steps.push_back(static_cast<long>(b.step().count()));
    b.Next();
  }
  EXPECT_EQ(steps, (std::vector<long>{1000, 2000, 4000, 8000, 16000, 30000, 30000}));
  b.Reset();
  EXPECT_EQ(b.step(), milliseconds(1000));
}

// 100 nodes, each with its own seed, at every step of the back-off: every wait lies in
// [d/2, d], and the fleet's waits cover that range rather than sharing one instant (before
// the fix: all 100 retried at +1, +3, +7, +15, +31 s).
TEST(Backoff, AFleetSpreadsOverTheUpperHalfOfEachStep) {
  constexpr int kNodes = 100;
  std::vector<Backoff> fleet(kNodes, Backoff(milliseconds(1000), milliseconds(30000)));
  std::vector<std::minstd_rand> rngs;
  for (int i = 0; i < kNodes; ++i) rngs.emplace_back(1234 + i);
  for (int step = 0; step < 6; ++step) {
    const milliseconds d = fleet[0].step();
    std::vector<milliseconds> waits;
    for (int i = 0; i < kNodes; ++i) waits.push_back(fleet[i].Next(rngs[i]));
    const auto [lo, hi] = std::minmax_element(waits.begin(), waits.end());
    EXPECT_GE(*lo, d / 2) << "step " << step;
    EXPECT_LE(*hi, d) << "step " << step;
    // Each quarter of [d/2, d] holds some of the fleet: spread, not clustered.
    int quarters[4] = {};
    for (auto w : waits) ++quarters[std::min<int64_t>(3, (w - d / 2) * 8 / d)];
    for (int q = 0; q < 4; ++q) EXPECT_GT(quarters[q], 0) << "step " << step << " quarter " << q;
  }
}

TEST(Backoff, TinyWaitsAreNotJittered) {
  std::minstd_rand rng(1);
  EXPECT_EQ(Jittered(milliseconds(0), rng), milliseconds(0));
  EXPECT_EQ(Jittered(milliseconds(1), rng), milliseconds(1));
  EXPECT_EQ(RandomUpTo(0, rng), 0u);
}

}  // namespace
}  // namespace rdmadp::kube
