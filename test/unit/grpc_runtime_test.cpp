// PrepareGrpcRuntime() changes process-wide state once, so each test runs it in a child
// process (a gtest death test that exits 0) and leaves this process as it was.
#include "pkg/server/grpc_runtime.h"

#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "pkg/server/quiet_event_engine.h"
#include "test/support/thread_switches.h"

namespace rdmadp::server {
namespace {

class GrpcRuntime : public ::testing::Test {
 protected:
  // Re-run the test binary for each child rather than fork a process that has gRPC threads.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// Two locks taken in both orders, one after the other: no deadlock, but a cycle in the
// lock-order graph. Debian's Abseil (built without NDEBUG) aborts the process here unless the
// detector is off.
void TakeTwoLocksInBothOrders() {
  absl::Mutex first;
  absl::Mutex second;
  {
    absl::MutexLock a(&first);
    absl::MutexLock b(&second);
  }
  {
    absl::MutexLock b(&second);
    absl::MutexLock a(&first);
  }
}

TEST_F(GrpcRuntime, LockOrderInversionDoesNotAbortAfterPrepare) {
  EXPECT_EXIT(
      {
        PrepareGrpcRuntime();
        TakeTwoLocksInBothOrders();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GrpcRuntime, TurnsBackupPollingOffWhenTheOperatorHasNotSetIt) {
  EXPECT_EXIT(
      {
        ::unsetenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS");
        PrepareGrpcRuntime();
        const char* value = std::getenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS");
        std::exit(value != nullptr && std::strcmp(value, "0") == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GrpcRuntime, KeepsTheOperatorsBackupPollingInterval) {
  EXPECT_EXIT(
      {
        ::setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "2500", 1);
        PrepareGrpcRuntime();
        const char* value = std::getenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS");
        std::exit(value != nullptr && std::strcmp(value, "2500") == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

#ifdef RDMADP_QUIET_EVENT_ENGINE
TEST_F(GrpcRuntime, InstallsTheQuietEventEngine) {
  EXPECT_EXIT(
      {
        const bool installed = PrepareGrpcRuntime();
        auto created = grpc_event_engine::experimental::CreateEventEngine();
        const bool quiet = dynamic_cast<QuietEventEngine*>(created.get()) != nullptr;
        std::exit(installed && quiet ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// Context switches of this process's gRPC I/O-manager timer threads ("grpc_global_timer").
long GrpcTimerThreadSwitches() {
  return testing::ContextSwitchesOfThreads(::getpid(), "grpc_global_tim");
}

TEST_F(GrpcRuntime, TheOperatorCanKeepGrpcsOwnTimers) {
  EXPECT_EXIT(
      {
        ::setenv("RDMADP_GRPC_TIMERS", "grpc", 1);
        std::exit(PrepareGrpcRuntime() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GrpcRuntime, AnUnknownTimersValueIsWarnedAboutAndQuietIsUsed) {
  EXPECT_EXIT(
      {
        ::setenv("RDMADP_GRPC_TIMERS", "gprc", 1);
        std::exit(PrepareGrpcRuntime() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "RDMADP_GRPC_TIMERS=gprc is not 'grpc' or 'quiet'");
}

// A call that waits for a connection that never comes ends when its deadline's timer fires:
// the timer thread, asleep for as long as nothing is due, is woken for the new deadline.
TEST_F(GrpcRuntime, CallDeadlinesFireWithTheQuietTimers) {
  EXPECT_EXIT(
      {
        const bool installed = PrepareGrpcRuntime();
        ::alarm(30);  // a timer that never fires hangs the call: fail instead
        const std::string dir =
            ::testing::TempDir() + "/quiet-timers-" + std::to_string(::getpid());
        std::filesystem::create_directories(dir);
        auto channel = grpc::CreateChannel("unix://" + dir + "/nobody.sock",
                                           grpc::InsecureChannelCredentials());
        auto stub = v1beta1::DevicePlugin::NewStub(channel);
        int deadline_exceeded = 0;
        for (int i = 0; i < 3; ++i) {
          grpc::ClientContext ctx;
          ctx.set_wait_for_ready(true);
          ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
          v1beta1::AllocateResponse response;
          const auto status = stub->Allocate(&ctx, v1beta1::AllocateRequest(), &response);
          deadline_exceeded += status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ? 1 : 0;
        }
        std::exit(installed && deadline_exceeded == 3 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A server and a connected client, idle: gRPC's own timer list would wake its thread once a
// second; with nothing due for hours (keepalives), it does not wake at all.
TEST_F(GrpcRuntime, TheTimerThreadSleepsWhileNoTimerIsDue) {
  EXPECT_EXIT(
      {
        PrepareGrpcRuntime();
        const std::string dir =
            ::testing::TempDir() + "/quiet-timers-" + std::to_string(::getpid());
        std::filesystem::create_directories(dir);
        const std::string address = "unix://" + dir + "/idle.sock";
        grpc::ServerBuilder builder;
        builder.AddListeningPort(address, grpc::InsecureServerCredentials());
        v1beta1::DevicePlugin::Service service;  // every method unimplemented
        builder.RegisterService(&service);
        auto server = builder.BuildAndStart();
        auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
        const bool connected =
            channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10));
        // Setting up the connection armed timers and kicked the thread; on a busy machine it
        // may run only now. Start counting once it has been still for half a second.
        for (long last = -1; last != GrpcTimerThreadSwitches();) {
          last = GrpcTimerThreadSwitches();
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
        }
        const long before = GrpcTimerThreadSwitches();
        std::this_thread::sleep_for(std::chrono::seconds(3));  // the measurement window
        const long wakeups = GrpcTimerThreadSwitches() - before;
        std::fprintf(stderr, "timer thread wake-ups in 3 s: %ld\n", wakeups);
        std::exit(connected && wakeups == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}
#endif

}  // namespace
}  // namespace rdmadp::server
