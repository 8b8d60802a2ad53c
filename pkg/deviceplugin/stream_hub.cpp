#include "pkg/deviceplugin/stream_hub.h"

#include <algorithm>

namespace rdmadp::deviceplugin {

SnapshotStream::SnapshotStream(StreamHub* hub, DevicePluginService* service,
                               grpc::ServerCompletionQueue* cq)
    : hub_(hub), service_(service), cq_(cq), writer_(&ctx_) {
  accepted_.on = [this](bool ok) { OnAccepted(ok); };
  op_done_.on = [this](bool ok) { OnOpDone(ok); };
  call_done_.on = [this](bool /*ok*/) { OnCallDone(); };
}

void SnapshotStream::Serve(StreamHub* hub, DevicePluginService* service,
                           grpc::ServerCompletionQueue* cq) {
  std::shared_ptr<SnapshotStream> s(new SnapshotStream(hub, service, cq));
  s->self_ = s;
  // Reports the end of the call however it ends, the peer going away included.
  s->ctx_.AsyncNotifyWhenDone(&s->call_done_);
  service->RequestListAndWatch(&s->ctx_, &s->request_, &s->writer_, cq, cq, &s->accepted_);
}

void SnapshotStream::OnAccepted(bool ok) {
  if (!ok) {        // the server is shutting down; an unmatched call never reports its end
    self_.reset();  // may destroy this object: nothing after this line
    return;
  }
  rpc::QueueGate::StartOp(cq_, [&] { Serve(hub_, service_, cq_); });  // the next one
  hub_->Opened(shared_from_this());
}

void SnapshotStream::Offer(pool::SnapshotPtr snapshot) {
  std::unique_lock lock(mu_);
  if (ending_ || call_done_seen_) return;
  pending_ = std::move(snapshot);
  Pump(lock);
}

void SnapshotStream::End() {
  std::unique_lock lock(mu_);
  ending_ = true;
  pending_.reset();
  Pump(lock);
}

void SnapshotStream::OnOpDone(bool ok) {
  std::unique_lock lock(mu_);
  op_in_flight_ = false;
  if (!ok && !finish_started_) {
    failed_ = true;
    ending_ = true;
    pending_.reset();
  }
  Pump(lock);
}

void SnapshotStream::OnCallDone() {
  hub_->Closed(this);
  std::unique_lock lock(mu_);
  call_done_seen_ = true;
  pending_.reset();
  Pump(lock);
}

void SnapshotStream::Pump(std::unique_lock<std::mutex>& lock) {
  if (!op_in_flight_ && !finish_started_ && !call_done_seen_) {
    if (pending_) {
      const pool::SnapshotPtr next = std::move(pending_);
      op_in_flight_ = true;
      lock.unlock();
      const std::string& bytes = next->list_response_bytes();
      grpc::Slice slice(bytes.data(), bytes.size());  // a copy: gRPC owns it from here
      if (rpc::QueueGate::StartOp(cq_,
                                  [&] { writer_.Write(grpc::ByteBuffer(&slice, 1), &op_done_); })) {
        return;
      }
      lock.lock();  // shutting down: the call-done tag releases the stream
      op_in_flight_ = false;
      MaybeRelease(lock);
      return;
    }
    if (ending_) {
      finish_started_ = true;
      op_in_flight_ = true;
      const bool failed = failed_;
      lock.unlock();
      const grpc::Status status =
          failed ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream write failed")
                 : grpc::Status::OK;
      if (rpc::QueueGate::StartOp(cq_, [&] { writer_.Finish(status, &op_done_); })) return;
      lock.lock();
      op_in_flight_ = false;
      MaybeRelease(lock);
      return;
    }
  }
  MaybeRelease(lock);
}

void SnapshotStream::MaybeRelease(std::unique_lock<std::mutex>& lock) {
  if (!call_done_seen_ || op_in_flight_) return;
  std::shared_ptr<SnapshotStream> self = std::move(self_);
  lock.unlock();
  // `self` may hold the last reference: this object may be gone when it goes out of scope.
}

StreamHub::StreamHub(pool::SnapshotPtr initial, StreamEndFn on_end, StreamOpenFn on_open)
    : current_(std::move(initial)), on_end_(std::move(on_end)), on_open_(std::move(on_open)) {}

pool::SnapshotPtr StreamHub::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

bool StreamHub::Publish(const pool::SnapshotPtr& next) {
  std::vector<std::shared_ptr<SnapshotStream>> streams;
  {
    std::lock_guard lock(mu_);
    const bool changed = current_->advertised() != next->advertised();
    current_ = next;
    if (!changed) return false;
    streams = streams_;
  }
  for (const auto& s : streams) s->Offer(next);
  return true;
}

void StreamHub::Resend() {
  std::vector<std::shared_ptr<SnapshotStream>> streams;
  pool::SnapshotPtr current;
  {
    std::lock_guard lock(mu_);
    streams = streams_;
    current = current_;
  }
  for (const auto& s : streams) s->Offer(current);
}

void StreamHub::Opened(const std::shared_ptr<SnapshotStream>& stream) {
  std::lock_guard lock(mu_);
  stream->id_ = next_id_++;
  if (ending_) {
    stream->End();
    return;
  }
  streams_.push_back(stream);
  // Under the lock: the full list goes first on every stream, before any concurrent
  // Publish(); and the open is reported before Closed() can report the end. Starting a
  // write here never blocks, and its completion runs on this same thread, later.
  stream->Offer(current_);
  if (on_open_) on_open_(stream->id());
}

void StreamHub::EndAllStreams() {
  std::vector<std::shared_ptr<SnapshotStream>> streams;
  {
    std::lock_guard lock(mu_);
    ending_ = true;
    streams = streams_;
  }
  for (const auto& s : streams) s->End();
}

size_t StreamHub::open_streams() const {
  std::lock_guard lock(mu_);
  return streams_.size();
}

uint64_t StreamHub::streams_opened() const {
  std::lock_guard lock(mu_);
  return next_id_ - 1;
}

void StreamHub::Closed(SnapshotStream* stream) {
  bool was_newest = false;
  uint64_t id = stream->id();
  StreamEndFn on_end;
  {
    std::lock_guard lock(mu_);
    auto it = std::find_if(streams_.begin(), streams_.end(),
                           [stream](const auto& s) { return s.get() == stream; });
    if (it == streams_.end()) return;  // never taken in (opened while ending)
    streams_.erase(it);
    was_newest = id == next_id_ - 1;
    if (!ending_) on_end = on_end_;
  }
  if (on_end) on_end(id, was_newest);
}

}  // namespace rdmadp::deviceplugin
