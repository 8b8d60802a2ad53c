// The plumbing of gRPC's completion-queue (async) server API, kept apart from what the
// handlers mean. Why this API: the callback API of gRPC 1.51 runs "nexting" threads that
// wake ~4 times a second while the plugin is idle; a thread blocked in
// ServerCompletionQueue::Next() without a deadline does not wake at all.
//
// Every operation started on the queue carries a Tag; the queue's thread calls the tag's
// function with the operation's outcome. A Tag is owned by the call object it belongs to,
// and that object frees itself once none of its tags can be delivered any more.
//
// Threads: CqThread drains one queue on its own thread; every tag function runs there.
#pragma once

#include <grpcpp/completion_queue.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/async_unary_call.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace rdmadp::rpc {

struct Tag {
  std::function<void(bool ok)> on;
};

// Queues being shut down. gRPC aborts the process when an operation starts on a queue after
// its Shutdown(), and a call accepted just before a server's shutdown deadline is still
// answered from the queue's thread after that deadline. So answers, stream writes and
// finishes, and the requests for the next call, start through StartOp (here and in
// latest_value_stream.h), and owners shut their queue down through Shutdown. Thread-safe; the
// lock is a leaf (nothing is locked inside it but the start of one operation).
class QueueGate {
 public:
  // Runs `start`, which starts one operation on `cq`, unless `cq` is being shut down.
  template <class Fn>
  static bool StartOp(const grpc::CompletionQueue* cq, Fn&& start) {
    std::lock_guard lock(Mu());
    if (Closing().count(cq) != 0) return false;
    start();
    return true;
  }
  // Marks `cq` closing, then shuts it down: no operation starts on it afterwards.
  static void Shutdown(grpc::ServerCompletionQueue* cq) {
    std::lock_guard lock(Mu());
    Closing().insert(cq);
    cq->Shutdown();
  }
  // Once `cq` is drained, before it is destroyed (its address may be reused).
  static void Forget(const grpc::CompletionQueue* cq) {
    std::lock_guard lock(Mu());
    Closing().erase(cq);
  }

 private:
  static std::mutex& Mu() {
    static std::mutex mu;
    return mu;
  }
  static std::set<const grpc::CompletionQueue*>& Closing() {
    static std::set<const grpc::CompletionQueue*> closing;
    return closing;
  }
};

// Drains `cq` on a thread of its own until the queue is shut down and empty.
class CqThread {
 public:
  explicit CqThread(grpc::ServerCompletionQueue* cq)
      : thread_([cq] {
          void* tag = nullptr;
          bool ok = false;
          while (cq->Next(&tag, &ok)) static_cast<Tag*>(tag)->on(ok);
        }) {}
  ~CqThread() { thread_.join(); }  // after the server and the queue were shut down
  CqThread(const CqThread&) = delete;
  CqThread& operator=(const CqThread&) = delete;

 private:
  std::thread thread_;
};

// One unary RPC method: keeps exactly one call waiting for the next request; each accepted
// call goes to `handle`, which answers through `done`, exactly once, from any thread (the
// DRA Prepare, which waits on the API server, answers from a worker). The call frees itself
// once its answer went out. The owner must answer every accepted call before it shuts the
// server down.
template <class Request, class Response>
class DeferredUnaryCall {
 public:
  using RequestFn =
      std::function<void(grpc::ServerContext*, Request*, grpc::ServerAsyncResponseWriter<Response>*,
                         grpc::ServerCompletionQueue*, void* tag)>;
  using DoneFn = std::function<void(grpc::Status, Response)>;
  // `deadline`: the caller's (gRPC's ServerContext::deadline(); far future when none).
  using HandleFn = std::function<void(const Request&, DoneFn done,
                                      std::chrono::system_clock::time_point deadline)>;

  static void Serve(RequestFn request, HandleFn handle, grpc::ServerCompletionQueue* cq) {
    Spawn(std::make_shared<Method>(Method{std::move(request), std::move(handle), cq}));
  }

 private:
  struct Method {
    RequestFn request;
    HandleFn handle;
    grpc::ServerCompletionQueue* cq;
  };

  // One call waiting for the next request, unless the queue is shutting down.
  static void Spawn(const std::shared_ptr<const Method>& method) {
    QueueGate::StartOp(method->cq, [&] { new DeferredUnaryCall(method); });
  }

  explicit DeferredUnaryCall(std::shared_ptr<const Method> method)
      : method_(std::move(method)), responder_(&ctx_) {
    tag_.on = [this](bool ok) { Proceed(ok); };
    method_->request(&ctx_, &request_, &responder_, method_->cq, &tag_);
  }

  void Proceed(bool ok) {
    if (answered_ || !ok) {
      // The answer may have been written on another thread: gRPC orders that before this
      // tag, but inside uninstrumented code; the lock shows TSan the same order.
      { std::lock_guard lock(answer_mu_); }
      delete this;
      return;
    }
    Spawn(method_);
    answered_ = true;
    method_->handle(
        request_,
        [this](grpc::Status status, Response response) {
          bool started = false;
          {
            std::lock_guard lock(answer_mu_);
            response_ = std::move(response);
            started = QueueGate::StartOp(method_->cq, [&] {
              if (status.ok()) {
                responder_.Finish(response_, status, &tag_);
              } else {
                responder_.FinishWithError(status, &tag_);
              }
            });
          }
          // The server is shutting down: the call was cancelled and no tag will come for it.
          if (!started) delete this;
        },
        ctx_.deadline());
  }

  const std::shared_ptr<const Method> method_;
  grpc::ServerContext ctx_;
  Request request_;
  Response response_;
  grpc::ServerAsyncResponseWriter<Response> responder_;
  Tag tag_;
  bool answered_ = false;
  std::mutex answer_mu_;
};

// The common case: `handle` answers at once, on the queue's thread (it must not block).
template <class Request, class Response>
struct UnaryCall {
  using RequestFn = typename DeferredUnaryCall<Request, Response>::RequestFn;
  using HandleFn = std::function<grpc::Status(const Request&, Response*)>;

  // Starts serving the method until the server shuts down.
  static void Serve(RequestFn request, HandleFn handle, grpc::ServerCompletionQueue* cq) {
    DeferredUnaryCall<Request, Response>::Serve(
        std::move(request),
        [handle = std::move(handle)](const Request& req, auto done, auto /*deadline*/) {
          Response response;
          const grpc::Status status = handle(req, &response);
          done(status, std::move(response));
        },
        cq);
  }
};

}  // namespace rdmadp::rpc
