#include "pkg/server/resource_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/status/status.h"
#include "pkg/server/grpc_runtime.h"
#include "pkg/server/socket_path.h"
#include "pkg/text/cat.h"

namespace rdmadp::server {

ResourceServer::ResourceServer(ResourceServerOptions options, pool::SnapshotPtr initial)
    : options_(std::move(options)),
      hub_(std::move(initial), options_.on_stream_end, options_.on_stream_open),
      plugin_(&hub_, options_.on_allocate) {}

absl::StatusOr<std::unique_ptr<ResourceServer>> ResourceServer::Start(ResourceServerOptions options,
                                                                      pool::SnapshotPtr initial) {
  if (auto ready = PrepareSocketPath(options.socket_path); !ready.ok()) return ready;
  const std::string hidden = HiddenSocketPath(options.socket_path);
  std::unique_ptr<ResourceServer> rs(new ResourceServer(std::move(options), std::move(initial)));
  grpc::ServerBuilder builder;
  DisableBandwidthProbing(builder);  // grpc_runtime.h: no probe timers to wake us later
  int bound = 0;
  builder.AddListeningPort("unix:" + hidden, grpc::InsecureServerCredentials(), &bound);
  builder.RegisterService(&rs->plugin_service_);
  if (rs->options_.serve_watcher_registration) {
    rs->watcher_ = std::make_unique<WatcherHandlers>(
        rs->snapshot()->resource().FullName(), rs->options_.socket_path, rs->options_.watcher);
    rs->watcher_service_ = std::make_unique<pluginregistration::Registration::AsyncService>();
    builder.RegisterService(rs->watcher_service_.get());
  }
  rs->cq_ = builder.AddCompletionQueue();
  rs->server_ = builder.BuildAndStart();
  if (!rs->server_ || bound == 0) {
    ::unlink(hidden.c_str());
    return absl::UnavailableError(
        Cat("cannot listen on ", hidden, ": check that its directory is writable"));
  }
  rs->ServeCalls();
  rs->cq_thread_ = std::make_unique<CqThread>(rs->cq_.get());
  auto inode = PublishSocket(rs->options_.socket_path);
  if (!inode.ok()) return inode.status();
  rs->inode_ = *inode;
  return rs;
}

void ResourceServer::ServeCalls() {
  using namespace v1beta1;  // NOLINT(google-build-using-namespace): the message types
  grpc::ServerCompletionQueue* cq = cq_.get();
  auto* svc = &plugin_service_;
  UnaryCall<Empty, DevicePluginOptions>::Serve(
      [svc](auto* ctx, auto* req, auto* writer, auto* q, void* tag) {
        svc->RequestGetDevicePluginOptions(ctx, req, writer, q, q, tag);
      },
      &DevicePluginHandlers::GetDevicePluginOptions, cq);
  UnaryCall<PreferredAllocationRequest, PreferredAllocationResponse>::Serve(
      [svc](auto* ctx, auto* req, auto* writer, auto* q, void* tag) {
        svc->RequestGetPreferredAllocation(ctx, req, writer, q, q, tag);
      },
      &DevicePluginHandlers::GetPreferredAllocation, cq);
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
  SnapshotStream::Serve(&hub_, svc, cq);
  if (!watcher_service_) return;
  auto* reg = watcher_service_.get();
  const WatcherHandlers* watcher = watcher_.get();
  UnaryCall<pluginregistration::InfoRequest, pluginregistration::PluginInfo>::Serve(
      [reg](auto* ctx, auto* req, auto* writer, auto* q, void* tag) {
        reg->RequestGetInfo(ctx, req, writer, q, q, tag);
      },
      [watcher](const auto& req, auto* resp) { return watcher->GetInfo(req, resp); }, cq);
  UnaryCall<pluginregistration::RegistrationStatus,
            pluginregistration::RegistrationStatusResponse>::
      Serve([reg](auto* ctx, auto* req, auto* writer, auto* q,
                  void* tag) { reg->RequestNotifyRegistrationStatus(ctx, req, writer, q, q, tag); },
            [watcher](const auto& req, auto* resp) {
              return watcher->NotifyRegistrationStatus(req, resp);
            },
            cq);
}

ResourceServer::~ResourceServer() {
  if (server_) {
    hub_.EndAllStreams();
    // Streams were asked to finish; the deadline only bounds a kubelet that stopped reading.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  }
  if (cq_) {
    QueueGate::Shutdown(cq_.get());
    if (cq_thread_) {
      cq_thread_.reset();  // joins once every call's last tag was delivered
    } else {
      void* tag = nullptr;
      bool ok = false;
      while (cq_->Next(&tag, &ok)) static_cast<Tag*>(tag)->on(ok);
    }
    QueueGate::Forget(cq_.get());
  }
  server_.reset();
  cq_.reset();
  RemoveOwnSocket(options_.socket_path, inode_);
}

}  // namespace rdmadp::server
