#include "pkg/deviceplugin/device_plugin_service.h"

#include "pkg/log/log.h"
#include "pkg/text/cat.h"
#include "pkg/text/json.h"

namespace rdmadp::deviceplugin {

grpc::Status DevicePluginHandlers::GetDevicePluginOptions(const v1beta1::Empty& /*request*/,
                                                          v1beta1::DevicePluginOptions* response) {
  // Every slot exposes the whole pool, so the kubelet's own choice is as good as any:
  // no GetPreferredAllocation, no PreStartContainer.
  response->set_pre_start_required(false);
  response->set_get_preferred_allocation_available(false);
  return grpc::Status::OK;
}

grpc::Status DevicePluginHandlers::GetPreferredAllocation(
    const v1beta1::PreferredAllocationRequest& request,
    v1beta1::PreferredAllocationResponse* response) {
  // Valid but without preference: one answer per container, holding only the IDs the
  // kubelet says must be included; it fills the rest itself.
  for (const auto& container : request.container_requests()) {
    auto* answer = response->add_container_responses();
    *answer->mutable_deviceids() = container.must_include_deviceids();
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginHandlers::Allocate(const v1beta1::AllocateRequest& request,
                                            v1beta1::AllocateResponse* response) {
  const pool::SnapshotPtr snap = hub_->Current();
  // Every container gets the whole pool's answer. An answer over the kubelet's message limit
  // could not reach it anyway; building it would only leave megabytes in the allocator.
  const size_t per_container = snap->container_response_bytes() + 8;  // + framing
  const auto containers = static_cast<size_t>(request.container_requests_size());
  if (containers * per_container > pool::kKubeletMaxMessageBytes) {
    rejections_.fetch_add(1, std::memory_order_relaxed);
    return {grpc::StatusCode::INVALID_ARGUMENT,
            Cat(containers, " containers in one Allocate would make a ", containers * per_container,
                "-byte answer, over the kubelet's ", pool::kKubeletMaxMessageBytes,
                "-byte message limit")};
  }
  for (const auto& container : request.container_requests()) {
    for (const auto& id : container.devices_ids()) {
      if (!snap->HasDeviceId(id)) {
        const std::string message =
            Cat("unknown device ID ", QuotedExcerpt(id), " for ", snap->resource().FullName(),
                snap->advertised().slots == 0
                    ? std::string(": the pool has no devices")
                    : Cat(": advertised IDs are 0..", snap->advertised().slots - 1));
        rejections_.fetch_add(1, std::memory_order_relaxed);
        if (const uint64_t suppressed = rejection_log_.Admit(); suppressed != log::kRateLimited) {
          log::Warn(Cat("Allocate rejected: ", message,
                        suppressed > 0 ? Cat(" (", suppressed, " more rejection(s) not logged)")
                                       : std::string()));
        }
        return {grpc::StatusCode::INVALID_ARGUMENT, message};
      }
    }
    *response->add_container_responses() = snap->container_response();
  }
  allocations_.fetch_add(1, std::memory_order_relaxed);
  if (on_allocate_) on_allocate_();
  if (log::Enabled(log::Level::kDebug)) {
    log::Debug(Cat("Allocate ", snap->resource().FullName(), ": ",
                   request.container_requests_size(), " container(s), ", snap->hcas().size(),
                   " HCA(s), ", snap->container_response().devices_size(), " device node(s) each"));
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginHandlers::PreStartContainer(
    const v1beta1::PreStartContainerRequest& /*request*/,
    v1beta1::PreStartContainerResponse* /*response*/) {
  return grpc::Status::OK;
}

}  // namespace rdmadp::deviceplugin
