// The DRA side of the kubelet simulator, as the kubelet's DRA manager behaves
// (pkg/kubelet/cm/dra/plugin, 1.34+): RegisterPlugin picks the first service in the
// plugin's list that it supports ("v1.DRAPlugin", "v1beta1.DRAPlugin"), rejects a second
// registration of one endpoint, keeps every plugin of a driver and calls the newest; it
// opens the resource-health stream (v1alpha1.DRAResourceHealth in 1.34-1.35) and keeps the
// latest report per device; at start it wipes the node's ResourceSlices, and when a driver's
// last plugin goes it wipes that driver's after `wipe_delay` (30 s), unless one comes back.
// Wipes go through `wipe` (the test points it at the fake API server).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/api/dra_health_v1alpha1.grpc.pb.h"
#include "pkg/api/dra_v1.grpc.pb.h"
#include "pkg/api/dra_v1beta1.grpc.pb.h"
#include "test/support/kubelet_sim.h"

namespace rdmadp::testing {

namespace drav1 = k8s::io::kubelet::pkg::apis::dra::v1;

struct DraDeviceHealth {
  std::string health;  // "Healthy", "Unhealthy", "Unknown", as the plugin last reported it
  std::string message;
  int64_t last_updated = 0;
  // The kubelet's own bookkeeping (healthinfo.go): when the report arrived, the timeout the
  // plugin asked for (0 = the kubelet's 30 s), and the longest gap between two reports.
  std::chrono::steady_clock::time_point received;
  std::chrono::seconds timeout{0};
  std::chrono::steady_clock::duration longest_gap{0};
};

struct DraKubeletState {
  int registrations = 0;
  int deregistrations = 0;
  std::vector<std::string> rejected;
  std::string driver;
  std::string endpoint;  // of the plugin the kubelet calls
  std::string service;   // chosen, e.g. "v1.DRAPlugin"
  int plugins = 0;       // registered plugins of the driver
  int health_streams = 0;
  int health_lists = 0;
  std::map<std::string, DraDeviceHealth> health;  // "pool/device"
  int wipes = 0;
};

class DraKubelet : public PluginTypeHandler {
 public:
  using WipeFn = std::function<void(const std::string& driver)>;  // "" = all drivers
  explicit DraKubelet(WipeFn wipe, std::chrono::milliseconds wipe_delay = std::chrono::seconds(30),
                      std::vector<std::string> supported = {"v1.DRAPlugin", "v1beta1.DRAPlugin"});
  ~DraKubelet() override;

  std::string Register(const std::string& name, const std::string& endpoint,
                       const std::vector<std::string>& versions) override;
  void Deregister(const std::string& name, const std::string& endpoint) override;
  void KubeletStarted() override;
  void KubeletStopped() override;

  // One NodePrepareResources / NodeUnprepareResources batch to the driver's newest plugin,
  // through the chosen service.
  absl::StatusOr<drav1::NodePrepareResourcesResponse> Prepare(
      const std::string& driver, const std::vector<drav1::Claim>& claims);
  absl::StatusOr<drav1::NodeUnprepareResourcesResponse> Unprepare(
      const std::string& driver, const std::vector<drav1::Claim>& claims);

  // The deadline of Prepare and Unprepare calls: the kubelet's 45 s
  // (pkg/kubelet/cm/dra/plugin: PluginClientTimeout); shorter in tests of the driver's use
  // of it.
  void SetCallTimeout(std::chrono::milliseconds timeout) {
    std::lock_guard lock(mu_);
    call_timeout_ = timeout;
  }
  std::chrono::milliseconds CallTimeout() const {
    std::lock_guard lock(mu_);
    return call_timeout_;
  }

  // The services this kubelet knows, newest first (before any registration).
  void SetSupported(std::vector<std::string> services) { supported_ = std::move(services); }
  // The delay after a driver's last plugin goes before its slices are wiped (30 s in the
  // kubelet; shorter in tests that wait for it).
  void SetWipeDelay(std::chrono::milliseconds delay) {
    std::lock_guard lock(mu_);
    wipe_delay_ = delay;
  }

  DraKubeletState State() const;
  // The health the kubelet puts in pod status now (healthinfo.go getHealthInfo): the last
  // report, or "Unknown" with no message once it is older than the device's timeout.
  DraDeviceHealth HealthNow(const std::string& pool_device) const;
  bool WaitFor(const std::function<bool(const DraKubeletState&)>& pred,
               std::chrono::milliseconds timeout);

 private:
  struct Plugin {
    std::string endpoint;
    std::string service;
    std::shared_ptr<grpc::Channel> channel;
    std::shared_ptr<grpc::ClientContext> health_ctx;
    std::thread health;
  };
  void HealthLoop(std::shared_ptr<grpc::Channel> channel, std::shared_ptr<grpc::ClientContext> ctx);
  void StopPlugin(Plugin& p);  // not under mu_
  std::shared_ptr<Plugin> Newest(const std::string& driver);

  const WipeFn wipe_;
  std::chrono::milliseconds wipe_delay_;
  std::chrono::milliseconds call_timeout_{45000};
  std::vector<std::string> supported_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<std::shared_ptr<Plugin>>> store_;
  std::map<std::string, std::chrono::steady_clock::time_point> pending_wipes_;
  std::thread wiper_;
  bool stopping_ = false;
  DraKubeletState state_;
};

}  // namespace rdmadp::testing
