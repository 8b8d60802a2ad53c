// The kubelet's plugin watcher (pluginregistration.Registration): it asks who we are, then
// tells us the outcome. Served by both front ends on their registration sockets: a device
// plugin in watcher mode answers type "DevicePlugin", version "v1beta1"; a DRA driver
// "DRAPlugin" and the gRPC services it implements ("v1.DRAPlugin", ...).
//
// Threads: the handlers run on the serving completion-queue thread and never block; the
// hooks are called there.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pkg/api/pluginregistration.grpc.pb.h"
#include "pkg/rpc/cq_call.h"

namespace rdmadp::rpc {

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

// Puts GetInfo and NotifyRegistrationStatus of `service` in wait on `cq`, answered by
// `handlers` (which must outlive the server).
void ServeWatcher(pluginregistration::Registration::AsyncService* service,
                  const WatcherHandlers* handlers, grpc::ServerCompletionQueue* cq);

}  // namespace rdmadp::rpc
