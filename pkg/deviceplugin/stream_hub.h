// The live state one resource server shares between the event loop and its gRPC thread:
// the current pool snapshot and the open ListAndWatch streams.
// Thread-safe. Publish() is called by the event loop; streams open and end on the server's
// completion-queue thread. The locks guard only pointer swaps and the stream list; gRPC
// operations are started after unlocking, and never block.
#pragma once

#include <grpcpp/completion_queue.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/async_stream.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "pkg/pool/snapshot.h"
#include "pkg/rpc/cq_call.h"

namespace rdmadp::deviceplugin {

class StreamHub;

// The device-plugin service with ListAndWatch taking and sending raw bytes: a snapshot's
// list is serialized once (pool::PoolSnapshot::list_response_bytes) and written as is to
// every stream. The other methods stay typed.
using DevicePluginService =
    v1beta1::DevicePlugin::WithRawMethod_ListAndWatch<v1beta1::DevicePlugin::AsyncService>;

// One kubelet ListAndWatch stream. Sends the current snapshot first, then each newer one;
// if several snapshots arrive while a write is in flight only the newest is sent, since
// every message is a full list. Owned by itself while gRPC can still deliver one of its
// tags, and by the hub while it is open; Offer()/End() after it finished are no-ops.
class SnapshotStream final : public std::enable_shared_from_this<SnapshotStream> {
 public:
  // Puts one stream in wait for the next ListAndWatch call; each accepted call puts the
  // next one in wait, until the server shuts down.
  static void Serve(StreamHub* hub, DevicePluginService* service, grpc::ServerCompletionQueue* cq);

  void Offer(pool::SnapshotPtr snapshot);
  void End();  // finish OK (server stopping)
  uint64_t id() const { return id_; }

 private:
  SnapshotStream(StreamHub* hub, DevicePluginService* service, grpc::ServerCompletionQueue* cq);
  void OnAccepted(bool ok);
  void OnOpDone(bool ok);  // a Write or the Finish completed
  void OnCallDone();       // the call is over: finished, cancelled or its peer gone
  // Starts the next gRPC operation if none is in flight; unlocks first.
  void Pump(std::unique_lock<std::mutex>& lock);
  // Drops the self-reference once no tag can be delivered any more. Called unlocked.
  void MaybeRelease(std::unique_lock<std::mutex>& lock);

  friend class StreamHub;
  StreamHub* const hub_;
  DevicePluginService* const service_;
  grpc::ServerCompletionQueue* const cq_;
  uint64_t id_ = 0;  // set when the hub takes the stream in
  grpc::ServerContext ctx_;
  grpc::ByteBuffer request_;  // an Empty: nothing to read
  grpc::ServerAsyncWriter<grpc::ByteBuffer> writer_;
  rpc::Tag accepted_, op_done_, call_done_;
  std::shared_ptr<SnapshotStream> self_;  // while a tag may still come

  std::mutex mu_;
  pool::SnapshotPtr pending_;
  bool op_in_flight_ = false;
  bool ending_ = false;  // finish once the write in flight is done
  bool finish_started_ = false;
  bool failed_ = false;
  bool call_done_seen_ = false;
};

class StreamHub {
 public:
  // Called on the gRPC thread when a stream ends: its id, and whether it was the newest
  // stream. Which stream is the kubelet's is the state machine's to decide (by id).
  using StreamEndFn = std::function<void(uint64_t id, bool was_newest)>;
  // Called on the gRPC thread when a stream opens, before its end can be reported.
  using StreamOpenFn = std::function<void(uint64_t id)>;

  explicit StreamHub(pool::SnapshotPtr initial, StreamEndFn on_end = nullptr,
                     StreamOpenFn on_open = nullptr);

  pool::SnapshotPtr Current() const;
  // Swaps in `next`; pushes it to every open stream when what the kubelet sees changed.
  // Returns whether it was pushed.
  bool Publish(const pool::SnapshotPtr& next);
  // Pushes the current snapshot to every open stream again, changed or not: the kubelet's
  // view of the resource may be another instance's list (last writer wins).
  void Resend();

  void EndAllStreams();
  size_t open_streams() const;
  uint64_t streams_opened() const;

 private:
  friend class SnapshotStream;
  void Opened(const std::shared_ptr<SnapshotStream>& stream);
  void Closed(SnapshotStream* stream);

  mutable std::mutex mu_;
  pool::SnapshotPtr current_;
  std::vector<std::shared_ptr<SnapshotStream>> streams_;
  uint64_t next_id_ = 1;
  bool ending_ = false;
  StreamEndFn on_end_;
  StreamOpenFn on_open_;
};

}  // namespace rdmadp::deviceplugin
