#include "pkg/dra/kubelet/dra_server.h"

#include <chrono>

namespace rdmadp::dra {
namespace {

// v1beta1 and v1 of the DRA plugin API are the same messages on the wire, but for v1's
// Device.share_id (field 5), which v1beta1 never had: it is not sent to a v1beta1 kubelet.
template <class To, class From>
To Convert(const From& from) {
  To to;
  to.ParseFromString(from.SerializeAsString());
  to.DiscardUnknownFields();  // recursively: Device is nested in the map values
  return to;
}

// A v1beta1 handler made of the v1 one.
template <class BetaRequest, class BetaResponse, class V1Request, class V1Response, class V1Fn>
auto ViaV1(V1Fn v1) {
  return [v1](const BetaRequest& req, auto done, auto deadline) {
    v1(
        Convert<V1Request>(req),
        [done](grpc::Status st, V1Response r) { done(st, Convert<BetaResponse>(r)); }, deadline);
  };
}

}  // namespace

DraServer::DraServer(DraServerOptions options, HealthPayload initial_health)
    : options_(std::move(options)),
      health_(std::move(initial_health), HealthHubOptions()),
      watcher_(options_.driver, options_.endpoint_path, options_.watcher, "DRAPlugin",
               kDraServices) {}

absl::StatusOr<std::unique_ptr<DraServer>> DraServer::Start(DraServerOptions options,
                                                            HealthPayload initial_health) {
  std::unique_ptr<DraServer> s(new DraServer(std::move(options), std::move(initial_health)));
  for (int i = 0; i < kDraWorkers; ++i) {
    s->workers_.emplace_back([raw = s.get(), i] { raw->Work(i); });
  }
  rpc::UnixServerSpec spec;
  // The endpoint first: the kubelet dials it as soon as it reads the registration.
  spec.socket_paths = {s->options_.endpoint_path, s->options_.registration_path};
  spec.services = {&s->v1_, &s->v1beta1_, &s->health_v1alpha1_, &s->health_v1_, &s->registration_};
  spec.serve_calls = [raw = s.get()](grpc::ServerCompletionQueue* cq) { raw->ServeCalls(cq); };
  auto server = rpc::UnixServer::Start(spec);
  if (!server.ok()) return server.status();
  s->rpc_ = std::move(*server);
  return s;
}

void DraServer::Enqueue(std::function<void(bool run, int worker)> job) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      jobs_.push_back(std::move(job));
      wake_.notify_one();
      return;
    }
  }
  job(false, -1);
}

void DraServer::Work(int worker) {
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left to answer
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    const bool run = !stopping_;
    lock.unlock();
    job(run, worker);
    lock.lock();
  }
}

void DraServer::ServeCalls(grpc::ServerCompletionQueue* cq) {
  using rpc::DeferredUnaryCall;
  const grpc::Status stopping(grpc::StatusCode::UNAVAILABLE, "the DRA driver is stopping");
  auto prepare = [this, stopping](const drav1::NodePrepareResourcesRequest& req, auto done,
                                  auto deadline) {
    Enqueue([this, req, done, stopping, deadline](bool run, int worker) {
      if (!run) return done(stopping, {});
      done(grpc::Status::OK, options_.prepare(req, worker, deadline));
    });
  };
  auto unprepare = [this, stopping](const drav1::NodeUnprepareResourcesRequest& req, auto done,
                                    auto /*deadline*/) {
    Enqueue([this, req, done, stopping](bool run, int /*worker*/) {
      if (!run) return done(stopping, {});
      done(grpc::Status::OK, options_.unprepare(req));
    });
  };
  auto* v1 = &v1_;
  DeferredUnaryCall<drav1::NodePrepareResourcesRequest, drav1::NodePrepareResourcesResponse>::Serve(
      [v1](auto* ctx, auto* req, auto* w, auto* q, void* tag) {
        v1->RequestNodePrepareResources(ctx, req, w, q, q, tag);
      },
      prepare, cq);
  DeferredUnaryCall<drav1::NodeUnprepareResourcesRequest, drav1::NodeUnprepareResourcesResponse>::
      Serve([v1](auto* ctx, auto* req, auto* w, auto* q,
                 void* tag) { v1->RequestNodeUnprepareResources(ctx, req, w, q, q, tag); },
            unprepare, cq);
  auto* beta = &v1beta1_;
  using BetaPrepareResponse = drav1beta1::NodePrepareResourcesResponse;
  using BetaUnprepareResponse = drav1beta1::NodeUnprepareResourcesResponse;
  DeferredUnaryCall<drav1beta1::NodePrepareResourcesRequest, BetaPrepareResponse>::Serve(
      [beta](auto* ctx, auto* req, auto* w, auto* q, void* tag) {
        beta->RequestNodePrepareResources(ctx, req, w, q, q, tag);
      },
      ViaV1<drav1beta1::NodePrepareResourcesRequest, BetaPrepareResponse,
            drav1::NodePrepareResourcesRequest, drav1::NodePrepareResourcesResponse>(prepare),
      cq);
  DeferredUnaryCall<drav1beta1::NodeUnprepareResourcesRequest, BetaUnprepareResponse>::Serve(
      [beta](auto* ctx, auto* req, auto* w, auto* q, void* tag) {
        beta->RequestNodeUnprepareResources(ctx, req, w, q, q, tag);
      },
      ViaV1<drav1beta1::NodeUnprepareResourcesRequest, BetaUnprepareResponse,
            drav1::NodeUnprepareResourcesRequest, drav1::NodeUnprepareResourcesResponse>(unprepare),
      cq);
  ServeHealth<v1alpha1::DRAResourceHealth::AsyncService, v1alpha1::NodeWatchResourcesRequest,
              v1alpha1::NodeWatchResourcesResponse>(&health_, &health_v1alpha1_, cq);
  ServeHealth<v1::DRAResourceHealth::AsyncService, v1::NodeWatchResourcesRequest,
              v1::NodeWatchResourcesResponse>(&health_, &health_v1_, cq);
  rpc::ServeWatcher(&registration_, &watcher_, cq);
}

DraServer::~DraServer() {
  // The registration goes first: the plugin watcher deregisters us while we still answer.
  if (rpc_) rpc_->Unpublish(1);
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (options_.cancel) options_.cancel();  // a running claim GET ends now, not in 20 s
  for (auto& w : workers_) {
    if (w.joinable()) w.join();  // every accepted call is answered now
  }
  health_.EndAll();
  rpc_.reset();
}

}  // namespace rdmadp::dra
