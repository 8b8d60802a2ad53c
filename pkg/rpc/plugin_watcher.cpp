#include "pkg/rpc/plugin_watcher.h"

namespace rdmadp::rpc {

grpc::Status WatcherHandlers::GetInfo(const pluginregistration::InfoRequest& /*request*/,
                                      pluginregistration::PluginInfo* response) const {
  response->set_type(type_);
  response->set_name(resource_name_);
  response->set_endpoint(endpoint_);
  for (const auto& v : versions_) response->add_supported_versions(v);
  if (hooks_.on_get_info) hooks_.on_get_info();
  return grpc::Status::OK;
}

grpc::Status WatcherHandlers::NotifyRegistrationStatus(
    const pluginregistration::RegistrationStatus& request,
    pluginregistration::RegistrationStatusResponse* /*response*/) const {
  if (hooks_.on_status) hooks_.on_status(request.plugin_registered(), request.error());
  return grpc::Status::OK;
}

void ServeWatcher(pluginregistration::Registration::AsyncService* service,
                  const WatcherHandlers* handlers, grpc::ServerCompletionQueue* cq) {
  UnaryCall<pluginregistration::InfoRequest, pluginregistration::PluginInfo>::Serve(
      [service](auto* ctx, auto* req, auto* writer, auto* q, void* tag) {
        service->RequestGetInfo(ctx, req, writer, q, q, tag);
      },
      [handlers](const auto& req, auto* resp) { return handlers->GetInfo(req, resp); }, cq);
  UnaryCall<pluginregistration::RegistrationStatus,
            pluginregistration::RegistrationStatusResponse>::
      Serve(
          [service](auto* ctx, auto* req, auto* writer, auto* q, void* tag) {
            service->RequestNotifyRegistrationStatus(ctx, req, writer, q, q, tag);
          },
          [handlers](const auto& req, auto* resp) {
            return handlers->NotifyRegistrationStatus(req, resp);
          },
          cq);
}

}  // namespace rdmadp::rpc
