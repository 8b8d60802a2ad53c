// The kubelet's DRA resource-health streams (NodeWatchResources, in every version the
// kubelet may call: v1alpha1, v1beta1, v1; their messages are identical on the wire). Each
// stream gets the full device list when it opens and whenever the hub publishes (a change
// or a heartbeat); when writes back up, only the newest list is sent.
//
// Threads: HealthHub is thread-safe: Publish() from the event loop, streams open and end
// on the server's completion-queue thread. Same lifetime rules as SnapshotStream.
#pragma once

#include <grpcpp/completion_queue.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/async_stream.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pkg/rpc/cq_call.h"

namespace rdmadp::dra {

// A device list, serialised once (a v1 NodeWatchResourcesResponse).
using HealthPayload = std::shared_ptr<const std::string>;

// Open health streams at most: the kubelet holds one per driver connection. Any process
// that can reach the socket could open thousands (1,000 streams: +1,000 fds, +32 MiB); the
// oldest is ended when one more opens (the newest is the kubelet's current one).
inline constexpr size_t kMaxHealthStreams = 16;

class HealthStreamBase {
 public:
  virtual ~HealthStreamBase() = default;
  virtual void Offer(HealthPayload payload) = 0;
  virtual void End() = 0;
};

class HealthHub {
 public:
  explicit HealthHub(HealthPayload initial) : current_(std::move(initial)) {}
  HealthPayload Current() const;
  void Publish(const HealthPayload& next);  // to every open stream
  void EndAll();
  size_t open_streams() const;
  uint64_t streams_opened() const;

  void Opened(const std::shared_ptr<HealthStreamBase>& s);
  void Closed(const HealthStreamBase* s);

 private:
  mutable std::mutex mu_;
  HealthPayload current_;
  std::vector<std::shared_ptr<HealthStreamBase>> streams_;
  uint64_t opened_ = 0;
  bool ending_ = false;
};

// One stream of service version `Service` (its AsyncService and response type).
template <class Service, class Request, class Response>
class HealthStream final
    : public HealthStreamBase,
      public std::enable_shared_from_this<HealthStream<Service, Request, Response>> {
 public:
  static void Serve(HealthHub* hub, Service* service, grpc::ServerCompletionQueue* cq) {
    std::shared_ptr<HealthStream> s(new HealthStream(hub, service, cq));
    s->self_ = s;
    s->ctx_.AsyncNotifyWhenDone(&s->call_done_);
    service->RequestNodeWatchResources(&s->ctx_, &s->request_, &s->writer_, cq, cq, &s->accepted_);
  }

  void Offer(HealthPayload payload) override {
    std::unique_lock lock(mu_);
    if (ending_ || call_done_seen_) return;
    pending_ = std::move(payload);
    Pump(lock);
  }
  void End() override {
    std::unique_lock lock(mu_);
    ending_ = true;
    pending_.reset();
    Pump(lock);
  }

 private:
  HealthStream(HealthHub* hub, Service* service, grpc::ServerCompletionQueue* cq)
      : hub_(hub), service_(service), cq_(cq), writer_(&ctx_) {
    accepted_.on = [this](bool ok) {
      if (!ok) {
        self_.reset();  // shutting down: may destroy this object
        return;
      }
      rpc::QueueGate::StartOp(cq_, [&] { Serve(hub_, service_, cq_); });  // the next one
      hub_->Opened(this->shared_from_this());
    };
    op_done_.on = [this](bool ok) {
      std::unique_lock lock(mu_);
      op_in_flight_ = false;
      if (!ok && !finish_started_) {
        ending_ = true;
        pending_.reset();
      }
      Pump(lock);
    };
    call_done_.on = [this](bool) {
      hub_->Closed(this);
      std::unique_lock lock(mu_);
      call_done_seen_ = true;
      pending_.reset();
      Pump(lock);
    };
  }

  void Pump(std::unique_lock<std::mutex>& lock) {
    if (!op_in_flight_ && !finish_started_ && !call_done_seen_) {
      if (pending_) {
        message_.ParseFromString(*pending_);  // same wire format in every version
        pending_.reset();
        op_in_flight_ = true;
        lock.unlock();
        if (rpc::QueueGate::StartOp(cq_, [&] { writer_.Write(message_, &op_done_); })) return;
        lock.lock();  // shutting down: the call-done tag releases the stream
        op_in_flight_ = false;
      } else if (ending_) {
        finish_started_ = op_in_flight_ = true;
        lock.unlock();
        if (rpc::QueueGate::StartOp(cq_, [&] { writer_.Finish(grpc::Status::OK, &op_done_); })) {
          return;
        }
        lock.lock();
        op_in_flight_ = false;
      }
    }
    if (!call_done_seen_ || op_in_flight_) return;
    auto self = std::move(self_);
    lock.unlock();
  }

  HealthHub* const hub_;
  Service* const service_;
  grpc::ServerCompletionQueue* const cq_;
  grpc::ServerContext ctx_;
  Request request_;
  Response message_;
  grpc::ServerAsyncWriter<Response> writer_;
  rpc::Tag accepted_, op_done_, call_done_;
  std::shared_ptr<HealthStream> self_;
  std::mutex mu_;
  HealthPayload pending_;
  bool op_in_flight_ = false;
  bool ending_ = false;
  bool finish_started_ = false;
  bool call_done_seen_ = false;
};

}  // namespace rdmadp::dra
