// The DRA driver's kubelet-facing sockets: its endpoint (the kubelet's DRA plugin API,
// v1.DRAPlugin and v1beta1.DRAPlugin, and the resource-health stream in v1alpha1, v1beta1
// and v1) and its registration socket in plugins_registry (pluginregistration.Registration:
// type "DRAPlugin", the driver's name, the endpoint, the services implemented — and only
// those). One gRPC server listens on both; each file is published atomically, the endpoint
// first, so the kubelet never learns of an endpoint that does not answer yet.
//
// Threads: one completion-queue thread (never blocks) and one worker thread on which
// Prepare and Unprepare run, one request at a time (they wait on the API server). Created,
// used and destroyed on the event loop.
#pragma once

#include <grpcpp/server.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/api/dra_health_v1.grpc.pb.h"
#include "pkg/api/dra_health_v1alpha1.grpc.pb.h"
#include "pkg/api/dra_v1.grpc.pb.h"
#include "pkg/api/dra_v1beta1.grpc.pb.h"
#include "pkg/api/pluginregistration.grpc.pb.h"
#include "pkg/dra/kubelet/health_stream.h"
#include "pkg/rpc/plugin_watcher.h"
#include "pkg/rpc/unix_server.h"

namespace rdmadp::dra {

namespace drav1 = k8s::io::kubelet::pkg::apis::dra::v1;
namespace drav1beta1 = k8s::io::kubelet::pkg::apis::dra::v1beta1;

// The services a DRA driver registration advertises, newest first (the kubelet takes the
// first it knows). Only services some k8s.io/kubelet release defines: DRAPlugin v1beta1 and
// v1 (pkg/apis/dra), DRAResourceHealth v1alpha1 (1.34+) and v1 (1.37,
// pkg/apis/dra-health); there is no v1beta1.DRAResourceHealth.
inline const std::vector<std::string> kDraServices = {
    "v1.DRAPlugin", "v1beta1.DRAPlugin", "v1.DRAResourceHealth", "v1alpha1.DRAResourceHealth"};

struct DraServerOptions {
  std::string driver;
  std::string endpoint_path;            // <kubelet root>/plugins/<driver>/dra-<instance>.sock
  std::string registration_path;        // <kubelet root>/plugins_registry/<driver>-<instance>.sock
  rpc::WatcherHandlers::Hooks watcher;  // gRPC thread
  // Worker threads (kDraWorkers of them, `worker` says which); may block, but should give
  // up on a claim once `deadline` (the kubelet's) has passed: nobody waits for it then.
  std::function<drav1::NodePrepareResourcesResponse(const drav1::NodePrepareResourcesRequest&,
                                                    int worker,
                                                    std::chrono::system_clock::time_point deadline)>
      prepare;
  std::function<drav1::NodeUnprepareResourcesResponse(const drav1::NodeUnprepareResourcesRequest&)>
      unprepare;
  // Any thread, once, when the server is torn down: ends what the workers are blocked on
  // (the claim GETs), so that tearing down never waits for a slow API server.
  std::function<void()> cancel;
};

// Prepare calls run on this many worker threads: one slow claim GET does not hold up the
// kubelet's other pods (50 concurrent Prepares with 1 s GETs took 26 s with one worker).
inline constexpr int kDraWorkers = 4;

class DraServer {
 public:
  static absl::StatusOr<std::unique_ptr<DraServer>> Start(DraServerOptions options,
                                                          HealthPayload initial_health);
  // Answers what the worker has not started yet with an error, ends the health streams,
  // stops the server and removes both socket files (if still ours).
  ~DraServer();
  DraServer(const DraServer&) = delete;
  DraServer& operator=(const DraServer&) = delete;

  // The full device list to every health stream (a change, or the heartbeat).
  void PublishHealth(const HealthPayload& payload) { health_.Publish(payload); }
  size_t open_health_streams() const { return health_.open_streams(); }
  uint64_t health_streams_opened() const { return health_.streams_opened(); }
  const std::string& endpoint_path() const { return options_.endpoint_path; }
  // Where the plugin watcher finds us.
  const std::string& registration_path() const { return options_.registration_path; }

 private:
  DraServer(DraServerOptions options, HealthPayload initial_health);
  void ServeCalls(grpc::ServerCompletionQueue* cq);
  void Work(int worker);  // a worker thread
  void Enqueue(std::function<void(bool run, int worker)> job);

  const DraServerOptions options_;
  HealthHub health_;
  rpc::WatcherHandlers watcher_;
  drav1::DRAPlugin::AsyncService v1_;
  drav1beta1::DRAPlugin::AsyncService v1beta1_;
  v1alpha1::DRAResourceHealth::AsyncService health_v1alpha1_;
  v1::DRAResourceHealth::AsyncService health_v1_;
  pluginregistration::Registration::AsyncService registration_;

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void(bool run, int worker)>> jobs_;  // run=false: "shutting down"
  bool stopping_ = false;
  std::vector<std::thread> workers_;
  std::unique_ptr<rpc::UnixServer> rpc_;  // last: goes first, before what it serves
};

}  // namespace rdmadp::dra
