// The live state one resource server shares between the event loop and gRPC threads:
// the current pool snapshot and the open ListAndWatch streams.
// Thread-safe. Publish() is called by the event loop; everything else by gRPC threads.
// The lock guards only pointer swaps and the stream list, never I/O.
#pragma once

#include <grpcpp/support/server_callback.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "pkg/pool/snapshot.h"

namespace rdmadp::server {

class StreamHub;

// One kubelet ListAndWatch stream. Sends the current snapshot first, then each newer one;
// if several snapshots arrive while a write is in flight only the newest is sent, since
// every message is a full list. Shared-owned: gRPC's reference is dropped in OnDone(), the
// hub's when the stream closes, so the hub can call Offer()/End() without holding its lock.
// Offer()/End() after the stream finished are no-ops.
class SnapshotStream final : public grpc::ServerWriteReactor<v1beta1::ListAndWatchResponse>,
                             public std::enable_shared_from_this<SnapshotStream> {
 public:
  SnapshotStream(StreamHub* hub, uint64_t id);
  void Offer(pool::SnapshotPtr snapshot);
  void End();  // finish OK (server stopping)

  uint64_t id() const { return id_; }

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  // Decides the next gRPC operation under the lock; performs it after unlocking.
  void Pump(std::unique_lock<std::mutex>& lock);

  friend class StreamHub;
  StreamHub* const hub_;
  const uint64_t id_;
  std::shared_ptr<SnapshotStream> self_;  // gRPC's reference, released in OnDone
  std::mutex mu_;
  pool::SnapshotPtr in_flight_;
  pool::SnapshotPtr pending_;
  bool ending_ = false;
  bool finished_ = false;
  bool failed_ = false;
};

class StreamHub {
 public:
  // Called on a gRPC thread when a stream ends: its id, and whether it was the newest stream
  // (only the newest stream's end means the kubelet lost us).
  using StreamEndFn = std::function<void(uint64_t id, bool was_newest)>;
  // Called on a gRPC thread when a stream opens, before its end can be reported.
  using StreamOpenFn = std::function<void(uint64_t id)>;

  explicit StreamHub(pool::SnapshotPtr initial, StreamEndFn on_end = nullptr,
                     StreamOpenFn on_open = nullptr);

  pool::SnapshotPtr Current() const;
  // Swaps in `next`; pushes it to every open stream when what the kubelet sees changed.
  // Returns whether it was pushed.
  bool Publish(const pool::SnapshotPtr& next);

  SnapshotStream* OpenStream();
  void EndAllStreams();
  size_t open_streams() const;
  uint64_t streams_opened() const;

 private:
  friend class SnapshotStream;
  void Closed(SnapshotStream* stream);

  mutable std::mutex mu_;
  pool::SnapshotPtr current_;
  std::vector<std::shared_ptr<SnapshotStream>> streams_;
  uint64_t next_id_ = 1;
  bool ending_ = false;
  StreamEndFn on_end_;
  StreamOpenFn on_open_;
};

}  // namespace rdmadp::server
