// The device plugin's ListAndWatch streams: rpc::LatestValueStream (pkg/rpc/
// latest_value_stream.h) with a pool snapshot as the value. A snapshot's list is serialized
// once (pool::PoolSnapshot::list_response_bytes) and written as is to every stream.
//
// Threads: the hub is thread-safe (Publish from the event loop; streams open and end on the
// server's completion-queue thread), as LatestValueHub says.
#pragma once

#include <grpcpp/completion_queue.h>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "pkg/pool/snapshot.h"
#include "pkg/rpc/latest_value_stream.h"

namespace rdmadp::deviceplugin {

// The device-plugin service with ListAndWatch taking and sending raw bytes. The other
// methods stay typed.
using DevicePluginService =
    v1beta1::DevicePlugin::WithRawMethod_ListAndWatch<v1beta1::DevicePlugin::AsyncService>;

using StreamHub = rpc::LatestValueHub<pool::SnapshotPtr>;

// Whether what the kubelet sees of the resource differs between two snapshots.
bool AdvertisedChanged(const pool::SnapshotPtr& before, const pool::SnapshotPtr& after);

// Puts one ListAndWatch stream in wait; each accepted call puts the next one in wait, until
// the server shuts down.
void ServeListAndWatch(StreamHub* hub, DevicePluginService* service,
                       grpc::ServerCompletionQueue* cq);

}  // namespace rdmadp::deviceplugin
