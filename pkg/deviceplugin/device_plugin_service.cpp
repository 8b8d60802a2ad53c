#include "pkg/deviceplugin/device_plugin_service.h"

#include <algorithm>

#include "pkg/log/log.h"
#include "pkg/pool/preferred_allocation.h"
#include "pkg/text/cat.h"
#include "pkg/text/json.h"

namespace rdmadp::deviceplugin {

grpc::Status DevicePluginHandlers::GetDevicePluginOptions(
    const v1beta1::Empty& /*request*/, v1beta1::DevicePluginOptions* response) const {
  // slots: every slot exposes the whole pool, so the kubelet's own choice is as good as
  // any. perHca: which HCAs a container gets is ours to prefer. No PreStartContainer.
  response->set_pre_start_required(false);
  response->set_get_preferred_allocation_available(hub_->Current()->per_hca());
  return grpc::Status::OK;
}

grpc::Status DevicePluginHandlers::GetPreferredAllocation(
    const v1beta1::PreferredAllocationRequest& request,
    v1beta1::PreferredAllocationResponse* response) const {
  const pool::SnapshotPtr snap = hub_->Current();
  for (const auto& container : request.container_requests()) {
    auto* answer = response->add_container_responses();
    if (!snap->per_hca()) {
      // Without preference: only the IDs the kubelet says must be included; it fills the
      // rest itself.
      *answer->mutable_deviceids() = container.must_include_deviceids();
      continue;
    }
    const std::vector<std::string> available(container.available_deviceids().begin(),
                                             container.available_deviceids().end());
    const std::vector<std::string> must(container.must_include_deviceids().begin(),
                                        container.must_include_deviceids().end());
    for (auto& id : pool::PreferredAllocation(snap->hcas(), snap->per_hca_ids(), available, must,
                                              container.allocation_size())) {
      answer->add_deviceids(std::move(id));
    }
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginHandlers::Reject(const pool::PoolSnapshot& snap, std::string_view id) {
  std::string advertised;
  if (snap.advertised().slots == 0) {
    advertised = ": the pool has no devices";
  } else if (snap.per_hca()) {
    advertised = Cat(": advertised IDs are <PCI address>-0..", snap.advertised().shares_per_hca - 1,
                     " for its HCAs ", Join(snap.advertised().hca_addresses, ", "));
  } else {
    advertised = Cat(": advertised IDs are 0..", snap.advertised().slots - 1);
  }
  const std::string message =
      Cat("unknown device ID ", QuotedExcerpt(id), " for ", snap.resource().FullName(), advertised);
  rejections_.fetch_add(1, std::memory_order_relaxed);
  if (const uint64_t suppressed = rejection_log_.Admit(); suppressed != log::kRateLimited) {
    log::Warn(Cat(
        "Allocate rejected: ", message,
        suppressed > 0 ? Cat(" (", suppressed, " more rejection(s) not logged)") : std::string()));
  }
  return {grpc::StatusCode::INVALID_ARGUMENT, message};
}

grpc::Status DevicePluginHandlers::TooLarge(size_t containers, size_t bytes) {
  rejections_.fetch_add(1, std::memory_order_relaxed);
  return {grpc::StatusCode::INVALID_ARGUMENT,
          Cat(containers, " containers in one Allocate would make a ", bytes,
              "-byte answer, over the kubelet's ", pool::kKubeletMaxMessageBytes,
              "-byte message limit")};
}

grpc::Status DevicePluginHandlers::Allocate(const v1beta1::AllocateRequest& request,
                                            v1beta1::AllocateResponse* response) {
  const pool::SnapshotPtr snap = hub_->Current();
  const auto containers = static_cast<size_t>(request.container_requests_size());
  if (!snap->per_hca()) {
    // Every container gets the whole pool's answer. An answer over the kubelet's message
    // limit could not reach it anyway; building it would only leave megabytes in the
    // allocator.
    const size_t per_container = snap->container_response_bytes() + 8;  // + framing
    if (containers * per_container > pool::kKubeletMaxMessageBytes) {
      return TooLarge(containers, containers * per_container);
    }
  }
  size_t bytes = 0;
  for (const auto& container : request.container_requests()) {
    std::vector<size_t> hcas;  // perHca: the HCAs of this container's IDs
    for (const auto& id : container.devices_ids()) {
      if (!snap->per_hca()) {
        if (!snap->HasDeviceId(id)) return Reject(*snap, id);
      } else if (auto hca = snap->HcaOfDeviceId(id)) {
        hcas.push_back(*hca);
      } else {
        return Reject(*snap, id);
      }
    }
    if (!snap->per_hca()) {
      *response->add_container_responses() = snap->container_response();
      continue;
    }
    std::sort(hcas.begin(), hcas.end());
    hcas.erase(std::unique(hcas.begin(), hcas.end()), hcas.end());
    auto* answer = response->add_container_responses();
    *answer = snap->ContainerResponseFor(hcas);
    bytes += answer->ByteSizeLong() + 8;
    if (bytes > pool::kKubeletMaxMessageBytes) {
      response->Clear();
      return TooLarge(containers, bytes);
    }
  }
  allocations_.fetch_add(1, std::memory_order_relaxed);
  if (on_allocate_) on_allocate_();
  if (log::Enabled(log::Level::kDebug)) {
    int nodes = 0;
    for (const auto& c : response->container_responses()) nodes += c.devices_size();
    log::Debug(Cat("Allocate ", snap->resource().FullName(), ": ",
                   request.container_requests_size(), " container(s), ", nodes,
                   " device node(s) in all, ", snap->per_hca() ? "perHca" : "slots"));
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginHandlers::PreStartContainer(
    const v1beta1::PreStartContainerRequest& /*request*/,
    v1beta1::PreStartContainerResponse* /*response*/) {
  return grpc::Status::OK;
}

}  // namespace rdmadp::deviceplugin
