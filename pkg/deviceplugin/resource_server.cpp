#include "pkg/deviceplugin/resource_server.h"

namespace rdmadp::deviceplugin {
namespace {

StreamHub::Options HubOptions(const ResourceServerOptions& options) {
  StreamHub::Options hub;
  hub.on_end = options.on_stream_end;
  hub.on_open = options.on_stream_open;
  return hub;
}

}  // namespace

ResourceServer::ResourceServer(ResourceServerOptions options, pool::SnapshotPtr initial)
    : options_(std::move(options)),
      hub_(std::move(initial), HubOptions(options_)),
      plugin_(&hub_, options_.on_allocate) {}

absl::StatusOr<std::unique_ptr<ResourceServer>> ResourceServer::Start(ResourceServerOptions options,
                                                                      pool::SnapshotPtr initial) {
  std::unique_ptr<ResourceServer> rs(new ResourceServer(std::move(options), std::move(initial)));
  rpc::UnixServerSpec spec;
  spec.socket_paths = {rs->options_.socket_path};
  spec.services = {&rs->plugin_service_};
  if (rs->options_.serve_watcher_registration) {
    rs->watcher_ = std::make_unique<rpc::WatcherHandlers>(
        rs->snapshot()->resource().FullName(), rs->options_.socket_path, rs->options_.watcher);
    rs->watcher_service_ = std::make_unique<pluginregistration::Registration::AsyncService>();
    spec.services.push_back(rs->watcher_service_.get());
  }
  spec.serve_calls = [raw = rs.get()](grpc::ServerCompletionQueue* cq) { raw->ServeCalls(cq); };
  auto server = rpc::UnixServer::Start(spec);
  if (!server.ok()) return server.status();
  rs->rpc_ = std::move(*server);
  return rs;
}

void ResourceServer::ServeCalls(grpc::ServerCompletionQueue* cq) {
  using namespace v1beta1;  // NOLINT(google-build-using-namespace): the message types
  using rpc::UnaryCall;
  auto* svc = &plugin_service_;
  UnaryCall<Empty, DevicePluginOptions>::Serve(
      [svc](auto* ctx, auto* req, auto* writer, auto* q, void* tag) {
        svc->RequestGetDevicePluginOptions(ctx, req, writer, q, q, tag);
      },
      [this](const Empty& req, DevicePluginOptions* resp) {
        return plugin_.GetDevicePluginOptions(req, resp);
      },
      cq);
  UnaryCall<PreferredAllocationRequest, PreferredAllocationResponse>::Serve(
      [svc](auto* ctx, auto* req, auto* writer, auto* q, void* tag) {
        svc->RequestGetPreferredAllocation(ctx, req, writer, q, q, tag);
      },
      [this](const PreferredAllocationRequest& req, PreferredAllocationResponse* resp) {
        return plugin_.GetPreferredAllocation(req, resp);
      },
      cq);
  UnaryCall<AllocateRequest, AllocateResponse>::Serve(
      [svc](auto* ctx, auto* req, auto* writer, auto* q, void* tag) {
        svc->RequestAllocate(ctx, req, writer, q, q, tag);
      },
      [this](const AllocateRequest& req, AllocateResponse* resp) {
        return plugin_.Allocate(req, resp);
      },
      cq);
  UnaryCall<PreStartContainerRequest, PreStartContainerResponse>::Serve(
      [svc](auto* ctx, auto* req, auto* writer, auto* q, void* tag) {
        svc->RequestPreStartContainer(ctx, req, writer, q, q, tag);
      },
      &DevicePluginHandlers::PreStartContainer, cq);
  ServeListAndWatch(&hub_, svc, cq);
  if (watcher_service_) rpc::ServeWatcher(watcher_service_.get(), watcher_.get(), cq);
}

ResourceServer::~ResourceServer() {
  // Streams are asked to finish first; the server's grace period only bounds a kubelet that
  // stopped reading.
  hub_.EndAll();
  rpc_.reset();
}

}  // namespace rdmadp::deviceplugin
