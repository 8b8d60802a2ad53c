// An EventEngine for gRPC that costs nothing while nothing is scheduled.
//
// Why: gRPC 1.51 creates its default EventEngine as soon as a server starts, with three
// pool threads and a timer thread that wakes once a second for ever (its timer list refills
// in windows of at most 1 s, whether or not a timer is pending): 60 of an idle plugin's 120
// wake-ups a minute. This process hardly uses it: our servers and the kubelet client run on
// gRPC's own I/O manager (1.51 uses an engine for listeners, clients and DNS only under
// experiments we do not enable); what comes is the reconnect back-off of a client channel
// whose connection attempt failed (Subchannel::OnConnectingFinished), rare here since the
// registrar dials only sockets that have a listener (seen with the plugin under valgrind, not
// in the lifecycle group's kubelet restarts). This engine starts no thread until a task arrives,
// and its threads block without a deadline while nothing is due, or until the earliest task when
// one is: no wake-up while idle.
//
// Contract: Run() tasks run soon, RunAfter() tasks no earlier than their delay, each on one
// of the engine's threads (IsWorkerThread() is true there). A task that blocks does not hold
// up others: when every thread is busy, a new one starts (at most kMaxThreads; beyond that
// tasks wait their turn). Cancel() succeeds for a task that has not started; it is then
// never run. Listeners, outgoing connections and DNS are not offered: CreateListener
// returns an error, Connect and the resolver's lookups report one through their callbacks.
// Destruction stops the threads once their running tasks return; tasks still pending are
// dropped unrun (gRPC destroys its engine only after its own work has finished).
//
// Threads: every method may be called from any thread, including from inside a task.
#pragma once

#include <memory>

// The engine interface this file implements is gRPC 1.51's (it is still experimental and
// changes between releases); with another gRPC, only UseQuietEventEngine() exists.
#if __has_include(<grpcpp/version_info.h>)
#include <grpcpp/version_info.h>
#if GRPC_CPP_VERSION_MAJOR == 1 && GRPC_CPP_VERSION_MINOR == 51
#define RDMADP_QUIET_EVENT_ENGINE 1
#include <grpc/event_engine/event_engine.h>
#endif
#endif

namespace rdmadp::server {

#ifdef RDMADP_QUIET_EVENT_ENGINE
class QuietEventEngine final : public grpc_event_engine::experimental::EventEngine {
 public:
  static constexpr int kMaxThreads = 8;
  static constexpr char kThreadName[] = "quiet_ee";  // what ps and /proc show

  QuietEventEngine();
  QuietEventEngine(const QuietEventEngine&) = delete;
  QuietEventEngine& operator=(const QuietEventEngine&) = delete;
  ~QuietEventEngine() override;

  bool IsWorkerThread() override;
  void Run(Closure* closure) override;
  void Run(absl::AnyInvocable<void()> closure) override;
  TaskHandle RunAfter(Duration when, Closure* closure) override;
  TaskHandle RunAfter(Duration when, absl::AnyInvocable<void()> closure) override;
  bool Cancel(TaskHandle handle) override;

  absl::StatusOr<std::unique_ptr<Listener>> CreateListener(
      Listener::AcceptCallback on_accept, absl::AnyInvocable<void(absl::Status)> on_shutdown,
      const grpc_event_engine::experimental::EndpointConfig& config,
      std::unique_ptr<grpc_event_engine::experimental::MemoryAllocatorFactory>
          memory_allocator_factory) override;
  ConnectionHandle Connect(OnConnectCallback on_connect, const ResolvedAddress& addr,
                           const grpc_event_engine::experimental::EndpointConfig& args,
                           grpc_event_engine::experimental::MemoryAllocator memory_allocator,
                           Duration timeout) override;
  bool CancelConnect(ConnectionHandle handle) override;
  std::unique_ptr<DNSResolver> GetDNSResolver(const DNSResolver::ResolverOptions& options) override;

  // Threads started so far (they stay until destruction). For tests.
  int threads() const;

 private:
  struct State;  // shared with the threads, which may outlive the engine by one task
  std::shared_ptr<State> state_;
};
#endif

// Makes gRPC create a QuietEventEngine wherever it would create its default engine. Call
// before gRPC creates one (before the first server or channel). Returns false, and changes
// nothing, when gRPC's engine interface is not the one this engine was written against
// (a gRPC other than 1.51).
bool UseQuietEventEngine();

}  // namespace rdmadp::server
