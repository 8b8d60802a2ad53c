// Server-streaming calls that send the newest of a series of whole values, and the hub that
// feeds every open call the current one: the device plugin's ListAndWatch (a pool snapshot,
// pkg/deviceplugin/list_and_watch.h) and the DRA health streams (a device list,
// pkg/dra/kubelet/health_stream.h). Each message replaces the one before, so a stream that
// cannot keep up loses nothing by skipping: values offered while a write is in flight
// replace each other, and only the newest is written.
//
// A stream gets the current value when it opens, then each value the hub publishes. It
// owns itself while gRPC can still deliver one of its tags, and is the hub's while it is
// open; Offer() and End() after it finished are no-ops. A write that fails ends the call
// with UNAVAILABLE; End() ends it with OK once the write in flight is done.
//
// Threads: LatestValueHub is thread-safe: Publish(), Resend() and EndAll() from the owner's
// thread (the event loop), Opened() and Closed() from the server's completion-queue thread,
// where every tag of a stream runs. Locks: the hub's, then a stream's; gRPC operations
// start after unlocking the stream and never block; QueueGate's lock is a leaf.
#pragma once

#include <grpcpp/completion_queue.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/async_stream.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "pkg/rpc/cq_call.h"

namespace rdmadp::rpc {

template <class Value>
class LatestValueHub;

// One open stream, as its hub sees it.
template <class Value>
class LatestValueSink {
 public:
  virtual ~LatestValueSink() = default;
  virtual void Offer(Value value) = 0;  // sent when no write is in flight, else replaces
  virtual void End() = 0;               // finish OK once the write in flight is done
  uint64_t id() const { return id_; }   // 1, 2, ... in the order opened; 0 until then

 private:
  friend class LatestValueHub<Value>;
  uint64_t id_ = 0;  // set once, under the hub's lock, before the stream is shared
};

template <class Value>
class LatestValueHub {
 public:
  // When a stream ends, or is ended to make room (max_streams), but not after EndAll(): its
  // id, and whether it was the newest. Which stream is the kubelet's is the caller's to
  // decide. Called without the hub's lock.
  using StreamEndFn = std::function<void(uint64_t id, bool was_newest)>;
  // When a stream opens, before its end can be reported. Called under the hub's lock: it
  // must not call the hub (the owner's hook posts to its loop).
  using StreamOpenFn = std::function<void(uint64_t id)>;
  struct Options {
    // Open streams at most (0: no limit); one more ends the oldest. The peer holds one per
    // connection, but any process that can reach the socket could open thousands.
    size_t max_streams = 0;
    StreamEndFn on_end;    // completion-queue thread
    StreamOpenFn on_open;  // completion-queue thread, under the hub's lock
  };

  explicit LatestValueHub(Value initial, Options options = {})
      : current_(std::move(initial)), options_(std::move(options)) {}

  Value Current() const {
    std::lock_guard lock(mu_);
    return current_;
  }
  // Swaps in `next` and offers it to every open stream. A value is never empty (a null
  // pointer): streams write whatever they are offered.
  void Publish(const Value& next) {
    PublishIf(next, [](const Value&, const Value&) { return true; });
  }
  // Swaps in `next`; offers it only when `changed(previous, next)`. Returns whether it did.
  template <class Changed>
  bool PublishIf(const Value& next, Changed changed) {
    std::vector<std::shared_ptr<LatestValueSink<Value>>> streams;
    {
      std::lock_guard lock(mu_);
      const bool offer = changed(current_, next);
      current_ = next;
      if (!offer) return false;
      streams = streams_;
    }
    for (const auto& s : streams) s->Offer(next);
    return true;
  }
  // Offers the current value to every open stream again, changed or not (the peer's view
  // may be another instance's: the last writer wins).
  void Resend() {
    std::vector<std::shared_ptr<LatestValueSink<Value>>> streams;
    Value current;
    {
      std::lock_guard lock(mu_);
      streams = streams_;
      current = current_;
    }
    for (const auto& s : streams) s->Offer(current);
  }
  // Ends every open stream, and every stream that opens from now on.
  void EndAll() {
    std::vector<std::shared_ptr<LatestValueSink<Value>>> streams;
    {
      std::lock_guard lock(mu_);
      ending_ = true;
      streams = streams_;
    }
    for (const auto& s : streams) s->End();
  }
  size_t open_streams() const {
    std::lock_guard lock(mu_);
    return streams_.size();
  }
  // The id of the latest stream opened (0: none yet).
  uint64_t streams_opened() const {
    std::lock_guard lock(mu_);
    return next_id_ - 1;
  }

  // The streams' side (completion-queue thread).
  void Opened(const std::shared_ptr<LatestValueSink<Value>>& stream) {
    std::shared_ptr<LatestValueSink<Value>> evicted;
    StreamEndFn on_end;
    {
      std::lock_guard lock(mu_);
      stream->id_ = next_id_++;
      if (ending_) {
        stream->End();
        return;
      }
      if (options_.max_streams != 0 && streams_.size() >= options_.max_streams) {
        evicted = streams_.front();  // the newest is the peer's current one
        streams_.erase(streams_.begin());
        on_end = options_.on_end;  // its own Closed() will find it gone
      }
      streams_.push_back(stream);
      // Under the lock: the whole value goes first on every stream, before any concurrent
      // Publish(); and the open is reported before Closed() can report the end. Starting a
      // write never blocks, and its completion runs on this same thread, later.
      stream->Offer(current_);
      if (options_.on_open) options_.on_open(stream->id());
    }
    if (evicted) {
      evicted->End();
      if (on_end) on_end(evicted->id(), false);
    }
  }
  void Closed(const LatestValueSink<Value>* stream) {
    bool was_newest = false;
    StreamEndFn on_end;
    {
      std::lock_guard lock(mu_);
      auto it = std::find_if(streams_.begin(), streams_.end(),
                             [stream](const auto& s) { return s.get() == stream; });
      if (it == streams_.end()) return;  // never taken in (opened while ending), or evicted
      streams_.erase(it);
      was_newest = stream->id() == next_id_ - 1;
      if (!ending_) on_end = options_.on_end;
    }
    if (on_end) on_end(stream->id(), was_newest);
  }

 private:
  mutable std::mutex mu_;
  Value current_;
  const Options options_;
  std::vector<std::shared_ptr<LatestValueSink<Value>>> streams_;
  uint64_t next_id_ = 1;
  bool ending_ = false;
};

// One stream of a method whose request is `Request` and whose messages are `Message`.
template <class Value, class Request, class Message>
class LatestValueStream final
    : public LatestValueSink<Value>,
      public std::enable_shared_from_this<LatestValueStream<Value, Request, Message>> {
 public:
  // Asks the service for the method's next call (the generated Request<Method> function).
  using RequestFn =
      std::function<void(grpc::ServerContext*, Request*, grpc::ServerAsyncWriter<Message>*,
                         grpc::ServerCompletionQueue*, void* tag)>;
  // Renders a value as the message to write.
  using ToMessageFn = std::function<void(const Value&, Message*)>;

  // Puts one stream in wait for the method's next call; each accepted call puts the next
  // one in wait, until the server shuts down.
  static void Serve(LatestValueHub<Value>* hub, RequestFn request, ToMessageFn to_message,
                    grpc::ServerCompletionQueue* cq) {
    Spawn(
        std::make_shared<const Method>(Method{hub, std::move(request), std::move(to_message), cq}));
  }

  void Offer(Value value) override {
    std::unique_lock lock(mu_);
    if (ending_ || call_done_seen_) return;
    pending_ = std::move(value);
    has_pending_ = true;
    Pump(lock);
  }
  void End() override {
    std::unique_lock lock(mu_);
    ending_ = true;
    DropPending();
    Pump(lock);
  }

 private:
  struct Method {
    LatestValueHub<Value>* hub;
    RequestFn request;
    ToMessageFn to_message;
    grpc::ServerCompletionQueue* cq;
  };

  static void Spawn(const std::shared_ptr<const Method>& method) {
    std::shared_ptr<LatestValueStream> s(new LatestValueStream(method));
    s->self_ = s;
    // Reports the end of the call however it ends, the peer going away included.
    s->ctx_.AsyncNotifyWhenDone(&s->call_done_);
    method->request(&s->ctx_, &s->request_, &s->writer_, method->cq, &s->accepted_);
  }

  explicit LatestValueStream(std::shared_ptr<const Method> method)
      : method_(std::move(method)), writer_(&ctx_) {
    accepted_.on = [this](bool ok) { OnAccepted(ok); };
    op_done_.on = [this](bool ok) { OnOpDone(ok); };
    call_done_.on = [this](bool /*ok*/) { OnCallDone(); };
  }

  void OnAccepted(bool ok) {
    if (!ok) {        // the server is shutting down; an unmatched call never reports its end
      self_.reset();  // may destroy this object: nothing after this line
      return;
    }
    QueueGate::StartOp(method_->cq, [&] { Spawn(method_); });  // the next one
    method_->hub->Opened(this->shared_from_this());
  }
  void OnOpDone(bool ok) {  // a Write or the Finish completed
    std::unique_lock lock(mu_);
    op_in_flight_ = false;
    if (!ok && !finish_started_) {
      failed_ = true;
      ending_ = true;
      DropPending();
    }
    Pump(lock);
  }
  void OnCallDone() {  // the call is over: finished, cancelled or its peer gone
    method_->hub->Closed(this);
    std::unique_lock lock(mu_);
    call_done_seen_ = true;
    DropPending();
    Pump(lock);
  }

  void DropPending() {  // requires mu_
    pending_ = Value();
    has_pending_ = false;
  }

  // Starts the next gRPC operation if none is in flight; unlocks first.
  void Pump(std::unique_lock<std::mutex>& lock) {
    if (!op_in_flight_ && !finish_started_ && !call_done_seen_) {
      if (has_pending_) {
        const Value next = std::move(pending_);
        DropPending();
        op_in_flight_ = true;
        lock.unlock();
        // Write() serializes the message before it returns: a local, not a member, so that
        // no stream keeps a copy of its last list (MiBs for a big pool) until its next write.
        Message message;
        method_->to_message(next, &message);
        if (QueueGate::StartOp(method_->cq, [&] { writer_.Write(message, &op_done_); })) return;
        lock.lock();  // shutting down: the call-done tag releases the stream
        op_in_flight_ = false;
      } else if (ending_) {
        finish_started_ = true;
        op_in_flight_ = true;
        const grpc::Status status =
            failed_ ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream write failed")
                    : grpc::Status::OK;
        lock.unlock();
        if (QueueGate::StartOp(method_->cq, [&] { writer_.Finish(status, &op_done_); })) return;
        lock.lock();
        op_in_flight_ = false;
      }
    }
    MaybeRelease(lock);
  }
  // Drops the self-reference once no tag can be delivered any more.
  void MaybeRelease(std::unique_lock<std::mutex>& lock) {
    if (!call_done_seen_ || op_in_flight_) return;
    std::shared_ptr<LatestValueStream> self = std::move(self_);
    lock.unlock();
    // `self` may hold the last reference: this object may be gone when it goes out of scope.
  }

  const std::shared_ptr<const Method> method_;
  grpc::ServerContext ctx_;
  Request request_;
  grpc::ServerAsyncWriter<Message> writer_;
  Tag accepted_, op_done_, call_done_;
  std::shared_ptr<LatestValueStream> self_;  // while a tag may still come

  std::mutex mu_;
  Value pending_{};
  bool has_pending_ = false;
  bool op_in_flight_ = false;
  bool ending_ = false;  // finish once the write in flight is done
  bool finish_started_ = false;
  bool failed_ = false;
  bool call_done_seen_ = false;
};

}  // namespace rdmadp::rpc
