// gRPC handlers of one resource: v1beta1.DevicePlugin, and in watcher mode the
// pluginregistration.Registration service on the same socket. Handlers run on gRPC threads,
// read the current immutable snapshot and never block on I/O.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "pkg/api/pluginregistration.grpc.pb.h"
#include "pkg/server/stream_hub.h"

namespace rdmadp::server {

class DevicePluginService final : public v1beta1::DevicePlugin::CallbackService {
 public:
  explicit DevicePluginService(StreamHub* hub) : hub_(hub) {}

  grpc::ServerUnaryReactor* GetDevicePluginOptions(grpc::CallbackServerContext* ctx,
                                                   const v1beta1::Empty* request,
                                                   v1beta1::DevicePluginOptions* response) override;
  grpc::ServerWriteReactor<v1beta1::ListAndWatchResponse>* ListAndWatch(
      grpc::CallbackServerContext* ctx, const v1beta1::Empty* request) override;
  grpc::ServerUnaryReactor* GetPreferredAllocation(
      grpc::CallbackServerContext* ctx, const v1beta1::PreferredAllocationRequest* request,
      v1beta1::PreferredAllocationResponse* response) override;
  grpc::ServerUnaryReactor* Allocate(grpc::CallbackServerContext* ctx,
                                     const v1beta1::AllocateRequest* request,
                                     v1beta1::AllocateResponse* response) override;
  grpc::ServerUnaryReactor* PreStartContainer(
      grpc::CallbackServerContext* ctx, const v1beta1::PreStartContainerRequest* request,
      v1beta1::PreStartContainerResponse* response) override;

  uint64_t allocations() const { return allocations_.load(std::memory_order_relaxed); }
  uint64_t rejections() const { return rejections_.load(std::memory_order_relaxed); }

 private:
  StreamHub* const hub_;
  std::atomic<uint64_t> allocations_{0};
  std::atomic<uint64_t> rejections_{0};
};

// Watcher mode: the kubelet's plugin watcher asks who we are, then tells us the outcome.
class WatcherRegistrationService final : public pluginregistration::Registration::CallbackService {
 public:
  struct Hooks {
    std::function<void()> on_get_info;                                  // gRPC thread
    std::function<void(bool registered, std::string error)> on_status;  // gRPC thread
  };
  WatcherRegistrationService(std::string resource_name, std::string endpoint, Hooks hooks)
      : resource_name_(std::move(resource_name)),
        endpoint_(std::move(endpoint)),
        hooks_(std::move(hooks)) {}

  grpc::ServerUnaryReactor* GetInfo(grpc::CallbackServerContext* ctx,
                                    const pluginregistration::InfoRequest* request,
                                    pluginregistration::PluginInfo* response) override;
  grpc::ServerUnaryReactor* NotifyRegistrationStatus(
      grpc::CallbackServerContext* ctx, const pluginregistration::RegistrationStatus* request,
      pluginregistration::RegistrationStatusResponse* response) override;

 private:
  const std::string resource_name_;
  const std::string endpoint_;
  const Hooks hooks_;
};

}  // namespace rdmadp::server
