// The DRA front end: one driver instance serves every configList entry with "frontend":
// "dra". Its pools become one DraView (slices, devices, CDI specs, health), published to the
// API server by the SlicePublisher and served to the kubelet by the DraServer, registered
// through plugins_registry with the same state machine (pkg/lifecycle) as a device plugin
// in watcher mode, without the device plugin's stream expectations.
//
// Threads: the event loop's (pkg/frontend/front_end.h), except Prepare and Unprepare, which
// run on the DraServer's workers and read the view, the API clients and the claim status
// writer through Shared. The publisher's and the status writer's threads post their results
// back through the loop.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/dra/kubelet/dra_server.h"
#include "pkg/dra/slices/slice_publisher.h"
#include "pkg/dra/status/status_writer.h"
#include "pkg/dra/view/dra_view.h"
#include "pkg/frontend/front_end.h"
#include "pkg/frontend/registration_timer.h"
#include "pkg/kube/backoff.h"
#include "pkg/kube/rest_client.h"
#include "pkg/lifecycle/registration_fsm.h"
#include "pkg/pool/pool_model.h"
#include "pkg/sync/mutex.h"

namespace rdmadp::dra {

struct FrontEndOptions {
  std::string driver = "rdma.k8s-rdma-shared-dp.io";
  std::string node_name;
  std::string kube_api_server;  // "" = no API server: slices are not published
  std::string kube_ca_file;
  std::string kube_token_file;
  std::string user_agent;
  std::string cdi_spec_dir = "/var/run/cdi";
  std::string memlock_hook{};  // installed hook path ("" = none): SliceContext::memlock_hook
  // The health stream's timeout the kubelet is told: a device not reported for this long
  // shows Unknown. The driver reports every third of it (a heartbeat), changed or not.
  std::chrono::seconds health_timeout{30};
};

// The problems of `config` this front end cannot serve with `options` under the kubelet
// root, one line per DRA entry naming it: no node name, a driver name that is not a DNS
// subdomain, a registration socket path too long. Start and reload both run these (one
// path: a reload adding a DRA entry without NODE_NAME is refused as a start is).
// `indices`: LoadedConfig::indices.
std::vector<std::string> ConfigProblems(const FrontEndOptions& options,
                                        const std::string& kubelet_root_dir,
                                        const config::Config& config,
                                        const std::vector<size_t>& indices);
// The same but the node's name (which only a pod has): the driver name and the registration
// socket's length. `validate` runs these.
std::vector<std::string> DriverProblems(const std::string& driver,
                                        const std::string& kubelet_root_dir,
                                        const config::Config& config,
                                        const std::vector<size_t>& indices);

// What the loop and the DraServer's workers share: the view (swapped whole) and one API
// client per worker, under a mutex the compiler checks (pkg/sync/mutex.h); the Prepare
// counters are atomics.
// Threads: every call from any thread. The loop sets; the workers read.
class DriverShared {
 public:
  DraViewPtr view() const ABSL_LOCKS_EXCLUDED(mu_) {
    sync::MutexLock lock(mu_);
    return view_;
  }
  void set_view(DraViewPtr view) ABSL_LOCKS_EXCLUDED(mu_) {
    sync::MutexLock lock(mu_);
    view_ = std::move(view);
  }
  // Worker `worker`'s client (null until the API client could be created).
  std::shared_ptr<kube::RestClient> Claims(int worker) const ABSL_LOCKS_EXCLUDED(mu_) {
    sync::MutexLock lock(mu_);
    return worker >= 0 && static_cast<size_t>(worker) < claims_.size() ? claims_[worker] : nullptr;
  }
  void set_claims(std::vector<std::shared_ptr<kube::RestClient>> clients) ABSL_LOCKS_EXCLUDED(mu_) {
    sync::MutexLock lock(mu_);
    claims_ = std::move(clients);
  }

  // The claim status writer (null until the API client could be created).
  std::shared_ptr<ClaimStatusWriter> status() const ABSL_LOCKS_EXCLUDED(mu_) {
    sync::MutexLock lock(mu_);
    return status_;
  }
  void set_status(std::shared_ptr<ClaimStatusWriter> status) ABSL_LOCKS_EXCLUDED(mu_) {
    sync::MutexLock lock(mu_);
    status_ = std::move(status);
  }

  std::atomic<uint64_t> prepares{0}, prepare_failures{0}, prepare_calls{0}, unprepares{0};
  std::atomic<uint64_t> prepare_nanos{0};

 private:
  mutable sync::Mutex mu_;
  DraViewPtr view_ ABSL_GUARDED_BY(mu_);
  // One per DRA worker thread (kDraWorkers; a client serves one thread at a time): read the
  // claims Prepare is asked for.
  std::vector<std::shared_ptr<kube::RestClient>> claims_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<ClaimStatusWriter> status_ ABSL_GUARDED_BY(mu_);
};

class DraFrontEnd final : public frontend::FrontEnd {
 public:
  DraFrontEnd(frontend::Host& host, FrontEndOptions options);
  ~DraFrontEnd() override;

  void Apply(const config::Config& config, const sysfs::NodeInventory& inventory,
             std::string_view reason) override;
  void OnKubeletEvent(const frontend::KubeletEvent& event) override;
  std::vector<std::string> Problems(const config::Config& config,
                                    const std::vector<size_t>& indices) const override;
  void Collect(metrics::View& view) const override;
  void Stop() override;

 private:
  class Executor;  // registration.cpp: the registration machine's world
  using ViewPtr = std::shared_ptr<const DraView>;
  // Publishes pools_, in this order: the view rendered, its CDI specs written, the view
  // handed to Prepare, the slices to the publisher, the driver served while some pool is
  // wanted, the health streamed.
  void Publish();
  // The view of pools_, its problems and fallbacks reported (once each).
  ViewPtr RenderView(const SliceContext& ctx);
  // Writes the view's CDI specs; an HCA whose spec could not be written is marked unhealthy
  // (noted in `ctx`) and the view rendered again.
  ViewPtr WriteCdiSpecs(ViewPtr view, SliceContext& ctx);
  // Starts serving (socket, registration, health heartbeat) when the first DRA pool comes,
  // stops when the last goes.
  void ServeWhileWanted(bool wanted);
  // Writes the view's CDI specs; answers those that could not be written (file -> why).
  // Removes those no longer wanted, and tries again those that could not be removed before.
  std::map<std::string, std::string> SyncCdiSpecs(const DraView& view);
  // Removes the spec file `name`, no longer wanted. One that cannot be removed (EACCES,
  // EBUSY, EROFS: a directory read-only for a while) is remembered in cdi_unremoved_ and
  // reported once, until it is removed or wanted again; true when it is gone.
  bool RemoveCdiSpec(const std::string& name);
  // Tries the removals of cdi_unremoved_ again.
  void RetryCdiRemovals();
  // Arms cdi_retry_ (with back-off) while a removal is pending, unless it is armed already;
  // disarms it and resets the back-off when none is.
  void ArmCdiRetry();
  // Creates the API clients and the slice publisher (retried with back-off until it works).
  void StartApi();
  void PublishHealth();
  void Drive(const lifecycle::Event& event);
  lifecycle::Event Serve(uint64_t server_token);

  frontend::Host& host_;
  const FrontEndOptions options_;
  std::shared_ptr<DriverShared> shared_ = std::make_shared<DriverShared>();
  bool created_ = false;  // some entry used this front end since start
  // Why there is no API client ("" once there is one): for /readyz and the metrics.
  std::string api_problem_;
  // The DRA entries' pools at the latest scan, and what the API server keeps (nullopt
  // until the publisher's first capability probe answers): every wish to the publisher is
  // stamped with it, so one made before a change is never written.
  std::vector<pool::PoolModel> pools_;
  std::optional<ServerCapabilities> caps_;
  std::vector<ModelFallback> fallbacks_;  // of the latest view
  std::set<std::string> fallbacks_said_;  // resources whose fallback was logged
  std::string cdi_problem_;               // a CDI spec that could not be written ("" when none)
  // Creating the API client failed (a token not mounted yet, say): retried on this timer,
  // 1 s doubling to 30 s, jittered, not only at the next rescan.
  std::unique_ptr<loop::Alarm> api_retry_;
  kube::Backoff api_backoff_{std::chrono::seconds(1), std::chrono::seconds(30)};
  bool stale_specs_checked_ = false;  // the CDI directory was swept of specs of gone HCAs
  std::unique_ptr<lifecycle::RegistrationFsm> fsm_;
  std::unique_ptr<DraServer> server_;
  std::unique_ptr<frontend::RegistrationTimer> timer_;
  std::unique_ptr<loop::Alarm> heartbeat_;
  std::unique_ptr<SlicePublisher> publisher_;
  // The driver's one write budget: slices and claim status draw from it.
  std::shared_ptr<rate::SharedBudget> write_budget_ =
      std::make_shared<rate::SharedBudget>(kWriteBurst, kWriteInterval);
  std::map<std::string, std::string> specs_written_;  // CDI spec file name -> content
  // CDI specs no longer wanted whose removal failed: a stale spec would otherwise stay on
  // the node for ever. Tried again at every Publish and on cdi_retry_, 1 s doubling to 30 s,
  // jittered; dropped when removed or wanted again (the write path writes it then).
  std::set<std::string> cdi_unremoved_;
  std::unique_ptr<loop::Alarm> cdi_retry_;
  bool cdi_retry_armed_ = false;  // so a rescan's retry never puts the timer's off
  kube::Backoff cdi_backoff_{std::chrono::seconds(1), std::chrono::seconds(30)};
  std::string health_key_;  // what the last health list said, timestamps left out
  bool active_ = false;     // serving: some entry uses the DRA front end
};

}  // namespace rdmadp::dra
