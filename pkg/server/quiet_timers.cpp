#include "pkg/server/quiet_timers.h"

// Written against gRPC 1.51's I/O-manager timer interface (src/core/lib/iomgr/timer.h of that
// release), which is internal to gRPC and changes between releases.
#if __has_include(<grpcpp/version_info.h>)
#include <grpcpp/version_info.h>
#if GRPC_CPP_VERSION_MAJOR == 1 && GRPC_CPP_VERSION_MINOR == 51
#define RDMADP_QUIET_TIMERS 1
#endif
#endif

#ifdef RDMADP_QUIET_TIMERS

#include <dlfcn.h>
#include <grpc/support/time.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "pkg/server/timer_horizon.h"

namespace rdmadp::server {
namespace {

// gRPC 1.51's grpc_timer_vtable. Its grpc_core::Timestamp is a trivially copyable class
// holding one int64_t (milliseconds after process start), so it is passed and returned as
// one; grpc_timer and grpc_closure are only handed through.
struct TimerTable {
  void (*init)(void* timer, int64_t deadline, void* closure);
  void (*cancel)(void* timer);
  int (*check)(int64_t* next);
  void (*list_init)();
  void (*list_shutdown)();
  void (*consume_kick)();
};
// grpc_timer_check_result: GRPC_TIMERS_NOT_CHECKED, _CHECKED_AND_EMPTY, _FIRED.
constexpr int kCheckedAndEmpty = 1;
constexpr int kFired = 2;

struct Grpc {
  const TimerTable* own = nullptr;  // grpc_generic_timer_vtable
  void (*set_default_platform)() = nullptr;
  void (*set_timer_impl)(TimerTable*) = nullptr;
  void (*kick_timer_thread)() = nullptr;              // grpc_kick_poller
  int64_t (*timestamp_from)(gpr_timespec) = nullptr;  // Timestamp::FromTimespecRoundDown
};

Grpc g_grpc;

// Never destroyed: gRPC may call in while the process exits.
std::mutex& Mutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
TimerHorizon& Horizon() {
  static auto* horizon = new TimerHorizon;
  return *horizon;
}

// Whether gRPC's timer thread runs, so that a kick can reach it: from its first check until
// gRPC shuts its I/O manager down (the thread has stopped then, and its lock is gone). A timer
// armed before that first check is seen by it.
bool g_timer_thread_checks = false;  // under Mutex()

int64_t Now() { return g_grpc.timestamp_from(gpr_now(GPR_CLOCK_MONOTONIC)); }

void Init(void* timer, int64_t deadline, void* closure) {
  g_grpc.own->init(timer, deadline, closure);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(Mutex());
    wake = Horizon().Arm(timer, deadline) && g_timer_thread_checks;
  }
  if (wake) g_grpc.kick_timer_thread();
}

void Cancel(void* timer) {
  {
    std::lock_guard<std::mutex> lock(Mutex());
    Horizon().Cancel(timer);
  }
  g_grpc.own->cancel(timer);
}

int Check(int64_t* next) {
  // Without `next`: gRPC's I/O-manager shutdown (its only such caller in 1.51), after its
  // timer thread stopped; it fires everything. gRPC's own check alone.
  if (next == nullptr) {
    {
      std::lock_guard<std::mutex> lock(Mutex());
      g_timer_thread_checks = false;
    }
    return g_grpc.own->check(nullptr);
  }
  const int64_t caller_next = *next;
  // Read before gRPC's check reads its clock: what is due at `now` is due for that check too.
  const int64_t now = Now();
  const int result = g_grpc.own->check(next);
  std::lock_guard<std::mutex> lock(Mutex());
  g_timer_thread_checks = true;
  if (result == kFired) {
    Horizon().Fired(now);  // gRPC's timer thread checks again before it sleeps
  } else if (result == kCheckedAndEmpty) {
    *next = std::min(caller_next, Horizon().Sleep(now, *next));
  }
  return result;
}

void ListInit() {
  g_grpc.own->list_init();
  std::lock_guard<std::mutex> lock(Mutex());
  Horizon().Reset();
}

void ListShutdown() {
  g_grpc.own->list_shutdown();
  std::lock_guard<std::mutex> lock(Mutex());
  Horizon().Reset();
}

void ConsumeKick() { g_grpc.own->consume_kick(); }

TimerTable g_quiet_table{Init, Cancel, Check, ListInit, ListShutdown, ConsumeKick};

template <typename T>
bool Find(const char* name, T* out) {
  *out = reinterpret_cast<T>(::dlsym(RTLD_DEFAULT, name));
  return *out != nullptr;
}

}  // namespace

bool UseQuietTimers() {
  Grpc found;
  const bool all =
      Find("grpc_generic_timer_vtable", &found.own) &&
      Find("_Z31grpc_set_default_iomgr_platformv", &found.set_default_platform) &&
      Find("_Z19grpc_set_timer_implP17grpc_timer_vtable", &found.set_timer_impl) &&
      Find("_Z16grpc_kick_pollerv", &found.kick_timer_thread) &&
      Find("_ZN9grpc_core9Timestamp21FromTimespecRoundDownE12gpr_timespec", &found.timestamp_from);
  if (!all) return false;
  g_grpc = found;
  // gRPC's start sets the platform (and with it the timer table) only if none is set yet.
  g_grpc.set_default_platform();
  g_grpc.set_timer_impl(&g_quiet_table);
  return true;
}

}  // namespace rdmadp::server

#else

namespace rdmadp::server {
bool UseQuietTimers() { return false; }
}  // namespace rdmadp::server

#endif
