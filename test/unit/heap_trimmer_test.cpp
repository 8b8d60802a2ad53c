// The heap trimmer: one trim per burst of activity, none without, and the trim really gives
// a fragmented heap's free pages back.
#include "pkg/loop/heap_trimmer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "pkg/loop/event_loop.h"
#include "test/support/manual_scheduler.h"

namespace rdmadp::loop {
namespace {

using namespace std::chrono_literals;

long ResidentKib() {
  long pages = 0, resident = 0;
  std::ifstream("/proc/self/statm") >> pages >> resident;
  return resident * (::getpagesize() / 1024);
}

// Runs the loop once through `steps`, each a quiet period of 300 ms (the loop cannot be
// run again after Quit()).
void RunSteps(EventLoop& loop, std::vector<std::function<void()>> steps) {
  std::vector<std::unique_ptr<Alarm>> timers;
  for (size_t i = 0; i < steps.size(); ++i) {
    timers.push_back(loop.NewAlarm([&, i] {
      steps[i]();
      if (i + 1 == steps.size()) loop.Quit();
    }));
    timers.back()->ArmOnce(std::chrono::milliseconds(300 * (i + 1)));
  }
  loop.Run();
}

TEST(HeapTrimmer, OneTrimPerBurstAndNoneWhenIdle) {
  testing::ManualScheduler loop;
  HeapTrimmer trimmer(loop, 20ms);
  std::vector<std::thread> callers;  // a burst from the gRPC threads
  for (int i = 0; i < 4; ++i) {
    callers.emplace_back([&] {
      for (int j = 0; j < 100; ++j) trimmer.Activity();
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(loop.RunPosted(), 1);  // the burst's first call posted; the others saw it armed
  loop.Advance(19ms);
  EXPECT_EQ(trimmer.trims(), 0u);  // not before its delay
  loop.Advance(1ms);
  EXPECT_EQ(trimmer.trims(), 1u);
  loop.Advance(10min);
  EXPECT_EQ(trimmer.trims(), 1u);  // idle: nothing more
  EXPECT_EQ(loop.armed(), 0);
  trimmer.Activity();  // the next burst
  loop.Advance(20ms);
  EXPECT_EQ(trimmer.trims(), 2u);
}

TEST(HeapTrimmer, TheTrimReturnsAFragmentedHeapsFreePages) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc malloc, which malloc_trim trims";
#endif
  auto loop = EventLoop::Create();
  ASSERT_TRUE(loop.ok());
  HeapTrimmer trimmer(**loop, 1ms);
  // 32 MiB in 1 KiB blocks, then all freed but the last, which pins the top of the heap:
  // glibc keeps the rest, since it only gives back the top on its own.
  std::vector<char*> blocks;
  for (int i = 0; i < 32 * 1024; ++i) {
    blocks.push_back(new char[1000]);
    blocks.back()[0] = 1;  // touched: resident
  }
  for (size_t i = 0; i + 1 < blocks.size(); ++i) delete[] blocks[i];
  const long before = ResidentKib();
  trimmer.Activity();
  RunSteps(**loop, {[] {}});
  ASSERT_EQ(trimmer.trims(), 1u);
  const long after = ResidentKib();
  EXPECT_GT(before - after, 16 * 1024) << before << " KiB -> " << after << " KiB";
  delete[] blocks.back();
}

}  // namespace
}  // namespace rdmadp::loop
