#include "pkg/server/stream_hub.h"

#include <algorithm>

namespace rdmadp::server {

SnapshotStream::SnapshotStream(StreamHub* hub, uint64_t id) : hub_(hub), id_(id) {}

void SnapshotStream::Offer(pool::SnapshotPtr snapshot) {
  std::unique_lock lock(mu_);
  if (ending_) return;
  pending_ = std::move(snapshot);
  Pump(lock);
}

void SnapshotStream::End() {
  std::unique_lock lock(mu_);
  ending_ = true;
  pending_.reset();
  Pump(lock);
}

void SnapshotStream::OnWriteDone(bool ok) {
  std::unique_lock lock(mu_);
  in_flight_.reset();
  if (!ok) {
    failed_ = true;
    ending_ = true;
    pending_.reset();
  }
  Pump(lock);
}

void SnapshotStream::OnCancel() { End(); }

void SnapshotStream::OnDone() {
  hub_->Closed(this);
  self_.reset();  // may destroy this object: nothing after this line
}

void SnapshotStream::Pump(std::unique_lock<std::mutex>& lock) {
  if (in_flight_ || finished_) return;
  if (pending_) {
    in_flight_ = std::move(pending_);
    const auto* message = &in_flight_->list_response();
    lock.unlock();
    StartWrite(message);
    return;
  }
  if (ending_) {
    finished_ = true;
    const bool failed = failed_;
    lock.unlock();
    Finish(failed ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream write failed")
                  : grpc::Status::OK);
  }
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

SnapshotStream* StreamHub::OpenStream() {
  std::lock_guard lock(mu_);
  auto stream = std::make_shared<SnapshotStream>(this, next_id_++);
  stream->self_ = stream;
  // Safe under the lock: the reactor is not bound to its call yet (we are inside the
  // ListAndWatch handler), so gRPC only queues these operations and runs no reaction.
  // Offering here also orders the first list before any concurrent Publish().
  if (ending_) {
    stream->End();
  } else {
    streams_.push_back(stream);
    stream->Offer(current_);  // the full list first, on every stream
    // Under the lock, so the open is reported before Closed() can report the end.
    if (on_open_) on_open_(stream->id());
  }
  return stream.get();
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
    if (it == streams_.end()) return;  // never registered (opened while ending)
    streams_.erase(it);
    was_newest = id == next_id_ - 1;
    if (!ending_) on_end = on_end_;
  }
  if (on_end) on_end(id, was_newest);
}

}  // namespace rdmadp::server
