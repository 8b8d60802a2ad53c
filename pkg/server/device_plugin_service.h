// What one resource answers: v1beta1.DevicePlugin, and in watcher mode the
// pluginregistration.Registration service on the same socket. Plain functions of a request;
// ResourceServer wires them to gRPC. They run on the server's completion-queue thread, read
// the current immutable snapshot and never block.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "pkg/api/pluginregistration.grpc.pb.h"
#include "pkg/log/rate_limit.h"
#include "pkg/server/stream_hub.h"

namespace rdmadp::server {

class DevicePluginHandlers {
 public:
  // `on_allocate` (optional) runs on the gRPC thread after each Allocate answered.
  explicit DevicePluginHandlers(const StreamHub* hub, std::function<void()> on_allocate = nullptr)
      : hub_(hub), on_allocate_(std::move(on_allocate)) {}

  static grpc::Status GetDevicePluginOptions(const v1beta1::Empty& request,
                                             v1beta1::DevicePluginOptions* response);
  static grpc::Status GetPreferredAllocation(const v1beta1::PreferredAllocationRequest& request,
                                             v1beta1::PreferredAllocationResponse* response);
  grpc::Status Allocate(const v1beta1::AllocateRequest& request,
                        v1beta1::AllocateResponse* response);
  static grpc::Status PreStartContainer(const v1beta1::PreStartContainerRequest& request,
                                        v1beta1::PreStartContainerResponse* response);

  uint64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }
  uint64_t rejections() const { return rejections_.load(std::memory_order_relaxed); }

 private:
  const StreamHub* const hub_;
  const std::function<void()> on_allocate_;
  std::atomic<uint64_t> allocations_{0};
  std::atomic<uint64_t> rejections_{0};
  log::RateLimit rejection_log_;  // a misbehaving client must not flood the log
};

// Watcher mode: the kubelet's plugin watcher asks who we are, then tells us the outcome.
// A device plugin answers type "DevicePlugin", version "v1beta1"; a DRA driver "DRAPlugin"
// and the gRPC services it implements ("v1.DRAPlugin", ...).
class WatcherHandlers {
 public:
  struct Hooks {
    std::function<void()> on_get_info;                                  // gRPC thread
    std::function<void(bool registered, std::string error)> on_status;  // gRPC thread
  };
  WatcherHandlers(std::string resource_name, std::string endpoint, Hooks hooks,
                  std::string type = "DevicePlugin",
                  std::vector<std::string> versions = {"v1beta1"})
      : resource_name_(std::move(resource_name)),
        endpoint_(std::move(endpoint)),
        hooks_(std::move(hooks)),
        type_(std::move(type)),
        versions_(std::move(versions)) {}

  grpc::Status GetInfo(const pluginregistration::InfoRequest& request,
                       pluginregistration::PluginInfo* response) const;
  grpc::Status NotifyRegistrationStatus(
      const pluginregistration::RegistrationStatus& request,
      pluginregistration::RegistrationStatusResponse* response) const;

 private:
  const std::string resource_name_;
  const std::string endpoint_;
  const Hooks hooks_;
  const std::string type_;
  const std::vector<std::string> versions_;
};

}  // namespace rdmadp::server
