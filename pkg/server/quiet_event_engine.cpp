#include "pkg/server/quiet_event_engine.h"

#ifdef RDMADP_QUIET_EVENT_ENGINE

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace rdmadp::server {

using grpc_event_engine::experimental::EventEngine;

namespace {

constexpr char kNotOffered[] =
    "not offered by this process's event engine (gRPC's own I/O manager serves sockets)";

// The resolver gRPC would get from GetDNSResolver: every lookup fails (see the header).
class NoDnsResolver final : public EventEngine::DNSResolver {
 public:
  explicit NoDnsResolver(EventEngine* engine) : engine_(engine) {}
  LookupTaskHandle LookupHostname(LookupHostnameCallback on_resolve, absl::string_view,
                                  absl::string_view, EventEngine::Duration) override {
    return FailSoon(std::move(on_resolve));
  }
  LookupTaskHandle LookupSRV(LookupSRVCallback on_resolve, absl::string_view,
                             EventEngine::Duration) override {
    return FailSoon(std::move(on_resolve));
  }
  LookupTaskHandle LookupTXT(LookupTXTCallback on_resolve, absl::string_view,
                             EventEngine::Duration) override {
    return FailSoon(std::move(on_resolve));
  }
  bool CancelLookup(LookupTaskHandle) override { return false; }

 private:
  // A resolver reports through its callback, never from inside the lookup call.
  template <typename Callback>
  LookupTaskHandle FailSoon(Callback on_resolve) {
    engine_->Run(
        [cb = std::move(on_resolve)]() mutable { cb(absl::UnimplementedError(kNotOffered)); });
    return {};
  }

  EventEngine* engine_;
};

}  // namespace

struct QuietEventEngine::State {
  using Clock = std::chrono::steady_clock;

  std::mutex mu;
  std::condition_variable wake;
  // Pending tasks by due time, then id (ids grow: tasks due at the same time keep their
  // order); and each pending id's due time, for Cancel.
  std::map<std::pair<Clock::time_point, intptr_t>, absl::AnyInvocable<void()>> due;
  std::map<intptr_t, Clock::time_point> due_time;
  intptr_t next_id = 1;
  int idle = 0;  // threads not running a task
  bool stopping = false;
  std::vector<std::thread> threads;

  TaskHandle Schedule(Clock::time_point when, absl::AnyInvocable<void()> task,
                      const std::shared_ptr<State>& self) {
    std::lock_guard lock(mu);
    const intptr_t id = next_id++;
    due.emplace(std::make_pair(when, id), std::move(task));
    due_time.emplace(id, when);
    if (idle == 0 && threads.size() < kMaxThreads) {
      StartThread(self);
    } else {
      wake.notify_one();  // an idle thread re-reads the earliest due time
    }
    return TaskHandle{{id, reinterpret_cast<intptr_t>(this)}};
  }

  void Work(const std::shared_ptr<State>& self) {
    current = this;
    pthread_setname_np(pthread_self(), kThreadName);
    std::unique_lock lock(mu);
    while (!stopping) {
      if (!due.empty() && due.begin()->first.first <= Clock::now()) {
        auto node = due.extract(due.begin());
        due_time.erase(node.key().second);
        --idle;
        // While this task runs, a thread waits for the next one (a task may block).
        if (idle == 0 && !due.empty() && threads.size() < kMaxThreads) StartThread(self);
        lock.unlock();
        node.mapped()();
        node = {};  // the task's captures go before the lock is taken again
        lock.lock();
        ++idle;
        continue;
      }
      if (due.empty()) {
        wake.wait(lock);  // no deadline: nothing to do until a task arrives
      } else {
        // A copy: the task's entry may be gone (run, cancelled) when the wait re-reads it.
        const Clock::time_point earliest = due.begin()->first.first;
        wake.wait_until(lock, earliest);
      }
    }
  }

  // REQUIRES: mu held. A new thread counts as idle from now: it looks for a task before
  // it first waits, so tasks scheduled before it runs need no other thread.
  void StartThread(const std::shared_ptr<State>& self) {
    ++idle;
    threads.emplace_back([self] { self->Work(self); });
  }

  static thread_local const State* current;  // the State whose thread this is, if any
};

thread_local const QuietEventEngine::State* QuietEventEngine::State::current = nullptr;

QuietEventEngine::QuietEventEngine() : state_(std::make_shared<State>()) {}

QuietEventEngine::~QuietEventEngine() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
    threads.swap(state_->threads);
  }
  state_->wake.notify_all();
  for (auto& t : threads) {
    // gRPC may drop its last reference from inside a task: that thread finishes the task
    // on its own (it shares the state) and then sees `stopping`.
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();
    } else {
      t.join();
    }
  }
}

bool QuietEventEngine::IsWorkerThread() { return State::current == state_.get(); }

void QuietEventEngine::Run(Closure* closure) {
  state_->Schedule(
      State::Clock::now(), [closure] { closure->Run(); }, state_);
}

void QuietEventEngine::Run(absl::AnyInvocable<void()> closure) {
  state_->Schedule(State::Clock::now(), std::move(closure), state_);
}

EventEngine::TaskHandle QuietEventEngine::RunAfter(Duration when, Closure* closure) {
  return state_->Schedule(
      State::Clock::now() + when, [closure] { closure->Run(); }, state_);
}

EventEngine::TaskHandle QuietEventEngine::RunAfter(Duration when,
                                                   absl::AnyInvocable<void()> closure) {
  return state_->Schedule(State::Clock::now() + when, std::move(closure), state_);
}

bool QuietEventEngine::Cancel(TaskHandle handle) {
  if (handle.keys[1] != reinterpret_cast<intptr_t>(state_.get())) return false;
  absl::AnyInvocable<void()> cancelled;  // destroyed after the lock is released
  std::lock_guard lock(state_->mu);
  const auto it = state_->due_time.find(handle.keys[0]);
  if (it == state_->due_time.end()) return false;  // already started, run or cancelled
  auto node = state_->due.extract(std::make_pair(it->second, it->first));
  state_->due_time.erase(it);
  cancelled = std::move(node.mapped());
  return true;
}

absl::StatusOr<std::unique_ptr<EventEngine::Listener>> QuietEventEngine::CreateListener(
    Listener::AcceptCallback, absl::AnyInvocable<void(absl::Status)>,
    const grpc_event_engine::experimental::EndpointConfig&,
    std::unique_ptr<grpc_event_engine::experimental::MemoryAllocatorFactory>) {
  return absl::UnimplementedError(std::string("listeners are ") + kNotOffered);
}

EventEngine::ConnectionHandle QuietEventEngine::Connect(
    OnConnectCallback on_connect, const ResolvedAddress&,
    const grpc_event_engine::experimental::EndpointConfig&,
    grpc_event_engine::experimental::MemoryAllocator, Duration) {
  Run([cb = std::move(on_connect)]() mutable {
    cb(absl::UnimplementedError(std::string("connections are ") + kNotOffered));
  });
  return ConnectionHandle{{0, 0}};
}

bool QuietEventEngine::CancelConnect(ConnectionHandle) { return false; }

std::unique_ptr<EventEngine::DNSResolver> QuietEventEngine::GetDNSResolver(
    const DNSResolver::ResolverOptions&) {
  return std::make_unique<NoDnsResolver>(this);
}

int QuietEventEngine::threads() const {
  std::lock_guard lock(state_->mu);
  return static_cast<int>(state_->threads.size());
}

bool UseQuietEventEngine() {
  grpc_event_engine::experimental::SetEventEngineFactory(
      [] { return std::make_unique<QuietEventEngine>(); });
  return true;
}

}  // namespace rdmadp::server

#else

namespace rdmadp::server {
bool UseQuietEventEngine() { return false; }
}  // namespace rdmadp::server

#endif
