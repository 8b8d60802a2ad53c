#include "test/support/dra_kubelet.h"

#include <algorithm>

#include "pkg/text/cat.h"

namespace rdmadp::testing {
namespace {

namespace drav1beta1 = k8s::io::kubelet::pkg::apis::dra::v1beta1;

template <class To, class From>
To Convert(const From& from) {
  To to;
  to.ParseFromString(from.SerializeAsString());
  return to;
}

const char* HealthName(v1alpha1::HealthStatus h) {
  switch (h) {
    case v1alpha1::HEALTHY:
      return "Healthy";
    case v1alpha1::UNHEALTHY:
      return "Unhealthy";
    default:
      return "Unknown";
  }
}

constexpr std::chrono::seconds kDraHealthTimeout{30};  // DefaultHealthTimeout

}  // namespace

DraKubelet::DraKubelet(WipeFn wipe, std::chrono::milliseconds wipe_delay,
                       std::vector<std::string> supported)
    : wipe_(std::move(wipe)), wipe_delay_(wipe_delay), supported_(std::move(supported)) {
  // The kubelet's TimedWorkerQueue: wipes a driver's slices once its delay passed.
  wiper_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      auto next = std::chrono::steady_clock::time_point::max();
      for (const auto& [driver, at] : pending_wipes_) next = std::min(next, at);
      if (next == std::chrono::steady_clock::time_point::max()) {
        cv_.wait(lock);
        continue;
      }
      if (cv_.wait_until(lock, next) != std::cv_status::timeout) continue;
      for (auto it = pending_wipes_.begin(); it != pending_wipes_.end();) {
        if (it->second > std::chrono::steady_clock::now()) {
          ++it;
          continue;
        }
        const std::string driver = it->first;
        it = pending_wipes_.erase(it);
        ++state_.wipes;
        lock.unlock();
        wipe_(driver);
        lock.lock();
        cv_.notify_all();
      }
    }
  });
}

DraKubelet::~DraKubelet() {
  KubeletStopped();
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  wiper_.join();
}

std::string DraKubelet::Register(const std::string& name, const std::string& endpoint,
                                 const std::vector<std::string>& versions) {
  std::string chosen;
  for (const auto& v : versions) {
    if (std::find(supported_.begin(), supported_.end(), v) != supported_.end()) {
      chosen = v;
      break;
    }
  }
  std::lock_guard lock(mu_);
  if (versions.empty()) {
    state_.rejected.push_back("empty list of supported gRPC services (aka supported versions)");
    return state_.rejected.back();
  }
  if (chosen.empty()) {
    state_.rejected.push_back(
        "none of services supported by the plugin are supported by the kubelet");
    return state_.rejected.back();
  }
  for (const auto& p : store_[name]) {
    if (p->endpoint == endpoint) {
      state_.rejected.push_back(
          Cat("endpoint ", endpoint, " already registered for DRA driver plugin ", name));
      return state_.rejected.back();
    }
  }
  auto p = std::make_shared<Plugin>();
  p->endpoint = endpoint;
  p->service = chosen;
  p->channel = grpc::CreateChannel("unix:" + endpoint, grpc::InsecureChannelCredentials());
  p->health_ctx = std::make_shared<grpc::ClientContext>();
  p->health = std::thread([this, ch = p->channel, ctx = p->health_ctx] { HealthLoop(ch, ctx); });
  store_[name].push_back(p);
  pending_wipes_.erase(name);  // usable again
  ++state_.registrations;
  state_.driver = name;
  state_.endpoint = endpoint;
  state_.service = chosen;
  state_.plugins = static_cast<int>(store_[name].size());
  cv_.notify_all();
  return "";
}

void DraKubelet::StopPlugin(Plugin& p) {
  p.health_ctx->TryCancel();
  if (p.health.joinable()) p.health.join();
}

void DraKubelet::Deregister(const std::string& name, const std::string& endpoint) {
  std::shared_ptr<Plugin> gone;
  {
    std::lock_guard lock(mu_);
    auto& plugins = store_[name];
    auto it = std::find_if(plugins.begin(), plugins.end(),
                           [&](const auto& p) { return p->endpoint == endpoint; });
    if (it == plugins.end()) return;
    gone = *it;
    plugins.erase(it);
    ++state_.deregistrations;
    state_.plugins = static_cast<int>(plugins.size());
    if (plugins.empty()) {
      store_.erase(name);
      pending_wipes_[name] = std::chrono::steady_clock::now() + wipe_delay_;
    }
    cv_.notify_all();
  }
  StopPlugin(*gone);
}

void DraKubelet::KubeletStarted() {
  wipe_("");  // NewDRAPluginManager: no driver is usable before it registers again
  std::lock_guard lock(mu_);
  ++state_.wipes;
  cv_.notify_all();
}

void DraKubelet::KubeletStopped() {
  std::vector<std::shared_ptr<Plugin>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, plugins] : store_) all.insert(all.end(), plugins.begin(), plugins.end());
    store_.clear();
    pending_wipes_.clear();
    state_.plugins = 0;
  }
  for (auto& p : all) StopPlugin(*p);
}

void DraKubelet::HealthLoop(std::shared_ptr<grpc::Channel> channel,
                            std::shared_ptr<grpc::ClientContext> ctx) {
  auto stub = v1alpha1::DRAResourceHealth::NewStub(channel);
  auto reader = stub->NodeWatchResources(ctx.get(), v1alpha1::NodeWatchResourcesRequest());
  {
    std::lock_guard lock(mu_);
    ++state_.health_streams;
  }
  v1alpha1::NodeWatchResourcesResponse list;
  while (reader->Read(&list)) {
    std::lock_guard lock(mu_);
    ++state_.health_lists;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& d : list.devices()) {
      DraDeviceHealth& h =
          state_.health[Cat(d.device().pool_name(), "/", d.device().device_name())];
      if (h.received != std::chrono::steady_clock::time_point{}) {
        h.longest_gap = std::max(h.longest_gap, now - h.received);
      }
      h.health = HealthName(d.health());
      h.message = d.message();
      h.last_updated = d.last_updated_time();
      h.received = now;  // the kubelet stamps its own clock, not the plugin's
      h.timeout = std::chrono::seconds(d.health_check_timeout_seconds());
    }
    cv_.notify_all();
  }
  (void)reader->Finish();
}

std::shared_ptr<DraKubelet::Plugin> DraKubelet::Newest(const std::string& driver) {
  std::lock_guard lock(mu_);
  auto it = store_.find(driver);
  if (it == store_.end() || it->second.empty()) return nullptr;
  return it->second.back();
}

namespace {

// One call through the plugin's chosen service: v1beta1 carries the same messages.
template <class Response, class BetaResponse, class BetaRequest, class Request, class V1Call,
          class BetaCall>
absl::StatusOr<Response> CallChosen(const std::string& service,
                                    const std::shared_ptr<grpc::Channel>& channel,
                                    const Request& req, V1Call v1, BetaCall beta,
                                    std::chrono::milliseconds timeout) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
  Response resp;
  grpc::Status s;
  if (service == "v1beta1.DRAPlugin") {
    BetaResponse answer;
    s = beta(*drav1beta1::DRAPlugin::NewStub(channel), &ctx, Convert<BetaRequest>(req), &answer);
    resp = Convert<Response>(answer);
  } else {
    s = v1(*drav1::DRAPlugin::NewStub(channel), &ctx, req, &resp);
  }
  if (!s.ok()) return absl::UnavailableError(s.error_message());
  return resp;
}

}  // namespace

absl::StatusOr<drav1::NodePrepareResourcesResponse> DraKubelet::Prepare(
    const std::string& driver, const std::vector<drav1::Claim>& claims) {
  auto p = Newest(driver);
  if (!p) return absl::FailedPreconditionError("DRA driver " + driver + " is not registered");
  drav1::NodePrepareResourcesRequest req;
  for (const auto& c : claims) *req.add_claims() = c;
  return CallChosen<drav1::NodePrepareResourcesResponse, drav1beta1::NodePrepareResourcesResponse,
                    drav1beta1::NodePrepareResourcesRequest>(
      p->service, p->channel, req,
      [](auto& stub, auto* ctx, const auto& r, auto* out) {
        return stub.NodePrepareResources(ctx, r, out);
      },
      [](auto& stub, auto* ctx, const auto& r, auto* out) {
        return stub.NodePrepareResources(ctx, r, out);
      },
      CallTimeout());
}

absl::StatusOr<drav1::NodeUnprepareResourcesResponse> DraKubelet::Unprepare(
    const std::string& driver, const std::vector<drav1::Claim>& claims) {
  auto p = Newest(driver);
  if (!p) return absl::FailedPreconditionError("DRA driver " + driver + " is not registered");
  drav1::NodeUnprepareResourcesRequest req;
  for (const auto& c : claims) *req.add_claims() = c;
  return CallChosen<drav1::NodeUnprepareResourcesResponse,
                    drav1beta1::NodeUnprepareResourcesResponse,
                    drav1beta1::NodeUnprepareResourcesRequest>(
      p->service, p->channel, req,
      [](auto& stub, auto* ctx, const auto& r, auto* out) {
        return stub.NodeUnprepareResources(ctx, r, out);
      },
      [](auto& stub, auto* ctx, const auto& r, auto* out) {
        return stub.NodeUnprepareResources(ctx, r, out);
      },
      CallTimeout());
}

DraKubeletState DraKubelet::State() const {
  std::lock_guard lock(mu_);
  return state_;
}

DraDeviceHealth DraKubelet::HealthNow(const std::string& pool_device) const {
  std::lock_guard lock(mu_);
  auto it = state_.health.find(pool_device);
  DraDeviceHealth h;
  h.health = "Unknown";
  if (it == state_.health.end()) return h;
  const auto timeout = it->second.timeout.count() > 0 ? it->second.timeout : kDraHealthTimeout;
  if (std::chrono::steady_clock::now() - it->second.received > timeout) {
    h.received = it->second.received;
    return h;
  }
  return it->second;
}

bool DraKubelet::WaitFor(const std::function<bool(const DraKubeletState&)>& pred,
                         std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return pred(state_); });
}

}  // namespace rdmadp::testing
