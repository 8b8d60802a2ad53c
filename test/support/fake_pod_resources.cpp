#include "test/support/fake_pod_resources.h"

#include "absl/status/status.h"

namespace rdmadp::testing {

class FakePodResources::Service final : public v1::PodResourcesLister::Service {
 public:
  explicit Service(FakePodResources* owner) : owner_(owner) {}
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* out) override {
    ++owner_->calls_;
    *out = owner_->List();
    return grpc::Status::OK;
  }

 private:
  FakePodResources* owner_;
};

FakePodResources::FakePodResources(int minor) : minor_(minor) {}

FakePodResources::~FakePodResources() {
  if (server_) server_->Shutdown();
}

absl::StatusOr<std::unique_ptr<FakePodResources>> FakePodResources::Start(const std::string& socket,
                                                                          int kubelet_minor) {
  std::unique_ptr<FakePodResources> fake(new FakePodResources(kubelet_minor));
  fake->service_ = std::make_unique<Service>(fake.get());
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
  builder.RegisterService(fake->service_.get());
  fake->server_ = builder.BuildAndStart();
  if (!fake->server_) return absl::UnavailableError("cannot serve pod-resources on " + socket);
  return fake;
}

void FakePodResources::SetPods(std::vector<FakePod> pods) {
  std::lock_guard lock(mu_);
  pods_ = std::move(pods);
}

v1::ListPodResourcesResponse FakePodResources::List() {
  const bool active_only = minor_ >= 34;        // KubeletPodResourcesListUseActivePods
  const bool dynamic_resources = minor_ >= 34;  // KubeletPodResourcesDynamicResources
  std::lock_guard lock(mu_);
  v1::ListPodResourcesResponse out;
  for (const FakePod& pod : pods_) {
    if (active_only && pod.finished) continue;
    v1::PodResources* p = out.add_pod_resources();
    p->set_name(pod.name);
    p->set_namespace_(pod.pod_namespace);
    auto add = [&](const FakeContainer& c) {
      v1::ContainerResources* cr = p->add_containers();
      cr->set_name(c.name);
      for (const FakeDevices& d : c.devices) {
        v1::ContainerDevices* cd = cr->add_devices();
        cd->set_resource_name(d.resource);
        for (const std::string& id : d.ids) cd->add_device_ids(id);
      }
      if (!dynamic_resources) return;
      for (const FakeClaimDevice& claim : c.claims) {
        v1::DynamicResource* r = cr->add_dynamic_resources();
        r->set_claim_name(claim.claim_name);
        r->set_claim_namespace(claim.claim_namespace);
        v1::ClaimResource* res = r->add_claim_resources();
        res->set_driver_name(claim.driver);
        res->set_pool_name(claim.pool);
        res->set_device_name(claim.device);
        res->add_cdi_devices()->set_name(claim.driver + "=" + claim.device);
      }
    };
    for (const FakeContainer& c : pod.containers) {
      if (c.init && c.restartable) add(c);
    }
    for (const FakeContainer& c : pod.containers) {
      if (!c.init) add(c);
    }
  }
  return out;
}

}  // namespace rdmadp::testing
