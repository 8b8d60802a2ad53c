// QuietEventEngine: tasks run, timers wait their delay, cancel works, a blocked task does not
// hold up others, and a thread with nothing due (or only a far timer) stays asleep.
#include "pkg/server/quiet_event_engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#ifdef RDMADP_QUIET_EVENT_ENGINE

namespace rdmadp::server {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
constexpr auto kHang = std::chrono::seconds(30);  // a deadlock, not a timing figure

// This process's threads named like the engine's, as /proc/self/task/<tid>/ paths.
std::vector<std::filesystem::path> EngineThreads() {
  std::vector<std::filesystem::path> out;
  for (const auto& t : std::filesystem::directory_iterator("/proc/self/task")) {
    std::string name;
    std::getline(std::ifstream(t.path() / "comm"), name);
    if (name == QuietEventEngine::kThreadName) out.push_back(t.path());
  }
  return out;
}

long VoluntarySwitches(const std::filesystem::path& task) {
  std::ifstream status(task / "status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(24));
  }
  return -1;
}

char SchedulerState(const std::filesystem::path& task) {
  std::ifstream stat(task / "stat");
  std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = all.rfind(')');  // "tid (comm) S ..."
  return paren == std::string::npos || paren + 2 >= all.size() ? '?' : all[paren + 2];
}

TEST(QuietEventEngine, StartsNoThreadUntilTheFirstTask) {
  QuietEventEngine engine;
  EXPECT_EQ(engine.threads(), 0);
  EXPECT_TRUE(EngineThreads().empty());
  std::promise<void> ran;
  engine.Run([&] { ran.set_value(); });
  ASSERT_EQ(ran.get_future().wait_for(kHang), std::future_status::ready);
  EXPECT_EQ(engine.threads(), 1);
}

TEST(QuietEventEngine, RunsTasksOnItsThreadsAndTimersNoEarlierThanTheirDelay) {
  QuietEventEngine engine;
  EXPECT_FALSE(engine.IsWorkerThread());
  const auto start = Clock::now();
  std::promise<Clock::time_point> at_20ms, at_50ms;
  std::promise<bool> on_worker;
  engine.RunAfter(50ms, [&] { at_50ms.set_value(Clock::now()); });
  engine.RunAfter(20ms, [&] { at_20ms.set_value(Clock::now()); });
  engine.Run([&] { on_worker.set_value(engine.IsWorkerThread()); });
  auto worker = on_worker.get_future();
  auto t20 = at_20ms.get_future();
  auto t50 = at_50ms.get_future();
  ASSERT_EQ(worker.wait_for(kHang), std::future_status::ready);
  ASSERT_EQ(t20.wait_for(kHang), std::future_status::ready);
  ASSERT_EQ(t50.wait_for(kHang), std::future_status::ready);
  EXPECT_TRUE(worker.get());
  EXPECT_GE(t20.get() - start, 20ms);
  EXPECT_GE(t50.get() - start, 50ms);
}

TEST(QuietEventEngine, ACancelledTaskNeverRunsAndIsFreed) {
  auto captured = std::make_shared<int>(0);
  bool ran = false;
  {
    QuietEventEngine engine;
    const auto handle = engine.RunAfter(1h, [&ran, captured] { ran = true; });
    EXPECT_EQ(captured.use_count(), 2);
    EXPECT_TRUE(engine.Cancel(handle));
    EXPECT_EQ(captured.use_count(), 1);   // the task is gone, not just marked
    EXPECT_FALSE(engine.Cancel(handle));  // once
  }
  EXPECT_FALSE(ran);
}

TEST(QuietEventEngine, CancelFailsForATaskThatRanAndForAnotherEnginesHandle) {
  QuietEventEngine engine, other;
  std::promise<void> ran;
  const auto handle = engine.RunAfter(0ms, [&] { ran.set_value(); });
  ASSERT_EQ(ran.get_future().wait_for(kHang), std::future_status::ready);
  EXPECT_FALSE(engine.Cancel(handle));
  const auto far = engine.RunAfter(1h, [] {});
  EXPECT_FALSE(other.Cancel(far));
  EXPECT_TRUE(engine.Cancel(far));
}

TEST(QuietEventEngine, ATaskThatBlocksDoesNotHoldUpTheNext) {
  QuietEventEngine engine;
  std::promise<void> release, first_done;
  auto released = release.get_future();
  engine.Run([&] {
    released.wait();  // until the second task runs
    first_done.set_value();
  });
  engine.Run([&] { release.set_value(); });
  ASSERT_EQ(first_done.get_future().wait_for(kHang), std::future_status::ready);
  EXPECT_EQ(engine.threads(), 2);
}

TEST(QuietEventEngine, DestroyingItFromItsOwnTaskIsSafe) {
  auto engine = std::make_unique<QuietEventEngine>();
  std::promise<void> destroyed;
  engine->Run([&] {
    engine.reset();  // as gRPC may drop its last reference on a worker
    destroyed.set_value();
  });
  ASSERT_EQ(destroyed.get_future().wait_for(kHang), std::future_status::ready);
}

// The point of the engine: gRPC's default timer thread wakes every second whatever is
// pending; ours sleeps until the earliest task is due.
TEST(QuietEventEngine, AThreadWithOnlyAFarTimerStaysAsleep) {
  QuietEventEngine engine;
  engine.RunAfter(1h, [] {});
  std::promise<void> ran;
  engine.Run([&] { ran.set_value(); });
  ASSERT_EQ(ran.get_future().wait_for(kHang), std::future_status::ready);
  const auto threads = EngineThreads();
  ASSERT_EQ(threads.size(), static_cast<size_t>(engine.threads()));
  // Every engine thread blocked in its wait (the one that ran the task may still be on
  // its way back to it).
  for (const auto& t : threads) {
    for (int i = 0; i < 30000 && SchedulerState(t) != 'S'; ++i) std::this_thread::yield();
    ASSERT_EQ(SchedulerState(t), 'S') << t;
  }
  std::vector<long> before;
  for (const auto& t : threads) before.push_back(VoluntarySwitches(t));
  std::this_thread::sleep_for(2500ms);  // the quiet period observed (gRPC's: 2 wake-ups)
  for (size_t i = 0; i < threads.size(); ++i) {
    EXPECT_EQ(VoluntarySwitches(threads[i]), before[i]) << threads[i];
  }
}

TEST(QuietEventEngine, DnsLookupsFailThroughTheirCallback) {
  QuietEventEngine engine;
  auto resolver = engine.GetDNSResolver({});
  ASSERT_NE(resolver, nullptr);
  std::promise<absl::Status> looked_up;
  resolver->LookupHostname(
      [&](absl::StatusOr<std::vector<QuietEventEngine::ResolvedAddress>> r) {
        looked_up.set_value(r.status());
      },
      "localhost", "80", 1s);
  auto status = looked_up.get_future();
  ASSERT_EQ(status.wait_for(kHang), std::future_status::ready);
  EXPECT_EQ(status.get().code(), absl::StatusCode::kUnimplemented);
}

TEST(QuietEventEngine, UseQuietEventEngineInstallsItForGrpc) {
  EXPECT_TRUE(UseQuietEventEngine());
  auto created = grpc_event_engine::experimental::CreateEventEngine();
  EXPECT_NE(dynamic_cast<QuietEventEngine*>(created.get()), nullptr);
  grpc_event_engine::experimental::EventEngineFactoryReset();
}

}  // namespace
}  // namespace rdmadp::server

#endif
