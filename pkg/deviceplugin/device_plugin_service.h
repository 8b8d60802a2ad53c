// What one resource answers: v1beta1.DevicePlugin (in watcher mode ResourceServer adds the
// plugin watcher's Registration service, pkg/rpc/plugin_watcher.h). Plain functions of a
// request; ResourceServer wires them to gRPC. They run on the server's completion-queue thread,
// read the current immutable snapshot and never block.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "pkg/deviceplugin/list_and_watch.h"
#include "pkg/log/rate_limit.h"

namespace rdmadp::deviceplugin {

class DevicePluginHandlers {
 public:
  // `on_allocate` (optional) runs on the gRPC thread after each Allocate answered.
  explicit DevicePluginHandlers(const StreamHub* hub, std::function<void()> on_allocate = nullptr)
      : hub_(hub), on_allocate_(std::move(on_allocate)) {}

  // GetPreferredAllocation is offered for perHca pools (pool/preferred_allocation.h); a
  // model switch restarts the server, so the options a registration read stay true.
  grpc::Status GetDevicePluginOptions(const v1beta1::Empty& request,
                                      v1beta1::DevicePluginOptions* response) const;
  grpc::Status GetPreferredAllocation(const v1beta1::PreferredAllocationRequest& request,
                                      v1beta1::PreferredAllocationResponse* response) const;
  grpc::Status Allocate(const v1beta1::AllocateRequest& request,
                        v1beta1::AllocateResponse* response);
  static grpc::Status PreStartContainer(const v1beta1::PreStartContainerRequest& request,
                                        v1beta1::PreStartContainerResponse* response);

  uint64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }
  uint64_t rejections() const { return rejections_.load(std::memory_order_relaxed); }

 private:
  // An Allocate refused: counted, logged within the rate limit, the ID and what is
  // advertised named.
  grpc::Status Reject(const pool::PoolSnapshot& snap, std::string_view id);
  grpc::Status TooLarge(size_t containers, size_t bytes);

  const StreamHub* const hub_;
  const std::function<void()> on_allocate_;
  std::atomic<uint64_t> allocations_{0};
  std::atomic<uint64_t> rejections_{0};
  log::RateLimit rejection_log_;  // a misbehaving client must not flood the log
};

}  // namespace rdmadp::deviceplugin
