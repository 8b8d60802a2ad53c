// PrepareGrpcRuntime() changes process-wide state once, so each test runs it in a child
// process (a gtest death test that exits 0) and leaves this process as it was.
#include "pkg/rpc/grpc_runtime.h"

#include <absl/synchronization/mutex.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace rdmadp::rpc {
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

// Debian's Abseil aborts by default; one built with NDEBUG ignores cycles by default, and the
// test below would pass there without PrepareGrpcRuntime. So each child first sets the mode
// Debian's build starts in, and the control proves the scenario aborts without the fix.
TEST_F(GrpcRuntime, LockOrderInversionAbortsWithTheDetectorOn) {
  EXPECT_DEATH(
      {
        absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kAbort);
        TakeTwoLocksInBothOrders();
        std::exit(0);
      },
      "");
}

TEST_F(GrpcRuntime, LockOrderInversionDoesNotAbortAfterPrepare) {
  EXPECT_EXIT(
      {
        absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kAbort);
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

}  // namespace
}  // namespace rdmadp::rpc
