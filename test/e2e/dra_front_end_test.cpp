// The DRA front end in-process: constructed on a FakeHost (fake time, a kubelet root in a
// temporary directory) against the fake kube-apiserver over real TLS. What lives only in the
// front end is asserted on the server's objects and the front end's metrics view: the
// device model gated on what the server keeps, and HCAs whose CDI spec cannot be written
// published tainted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "pkg/config/config.h"
#include "pkg/dra/front_end.h"
#include "pkg/dra/slices/resource_slices.h"
#include "pkg/sysfs/scanner.h"
#include "test/support/fake_apiserver.h"
#include "test/support/fake_host.h"
#include "test/support/fake_node.h"
#include "test/support/temp_dir.h"

namespace rdmadp::dra {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;
using testing::FakeHost;
using testing::FakeNode;

constexpr char kDriver[] = "rdma.example.com";

// Two InfiniBand HCAs, 4 shares each, published per HCA where the server can share one.
const char* kPerHca = R"({"configList": [{"resourceName": "hca_ib", "rdmaHcaMax": 4,
    "frontend": "dra", "deviceModel": "perHca", "selectors": {"vendors": ["15b3"]}}]})";

class DraInProcess : public ::testing::TestWithParam<std::string> {
 protected:
  DraInProcess()
      : api_(0, GetParam()), node_(dir_.path() + "/node"), host_(dir_.path() + "/kubelet") {
    node_.Add(FakeNode::ConnectX(0, 0, /*infiniband=*/true));
    node_.Add(FakeNode::ConnectX(1, 0, /*infiniband=*/true));
    for (const std::string& d :
         {host_.Dirs().root, host_.Dirs().PluginsRegistry(), host_.Dirs().Plugins(), cdi_dir()}) {
      ::mkdir(d.c_str(), 0755);
    }
  }
  ~DraInProcess() override { front_end_.reset(); }

  std::string cdi_dir() const { return dir_.path() + "/cdi"; }
  bool ConsumableCapacity() const { return GetParam() >= "1.36"; }
  void Start(const std::string& config_text, std::string token_file = "") {
    FrontEndOptions o;
    o.driver = kDriver;
    o.node_name = "node-a";
    o.kube_api_server = api_.server();
    o.kube_ca_file = api_.ca_file();
    o.kube_token_file = token_file.empty() ? api_.token_file() : token_file;
    o.cdi_spec_dir = cdi_dir();
    front_end_ = std::make_unique<DraFrontEnd>(host_, o);
    auto loaded = config::ParseConfig(config_text);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    front_end_->Apply(loaded->config, sysfs::Scanner(node_.sysfs_root(), node_.dev_root()).Scan(),
                      "start");
  }
  // Runs what the publisher's threads post (its capabilities, its problems) until the server
  // shows `until` (a JavaScript expression over stats and slices); the server's answer.
  nlohmann::json RunUntil(const std::string& until) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      host_.scheduler().AwaitPosted(50ms);
      auto r = api_.Await(until, 1ms);
      if (r["ok"].get<bool>()) {
        host_.scheduler().RunPosted();
        return r;
      }
    }
    return api_.Await(until, 1ms);
  }
  metrics::DraView Collect() const {
    metrics::View view;
    front_end_->Collect(view);
    return view.dra.value_or(metrics::DraView{});
  }

  testing::TempDir dir_;
  FakeApiServer api_;
  FakeNode node_;
  FakeHost host_;
  std::unique_ptr<DraFrontEnd> front_end_;
};

// perHca where the server keeps consumable capacity; where it does not, slots (rdmaHcaMax
// devices, as many claims), with the fallback in the view. The wish made before the probe
// answered is never written: one create, no flip between models.
TEST_P(DraInProcess, TheDeviceModelFollowsWhatTheServerKeeps) {
  Start(kPerHca);
  auto r = RunUntil("slices.length === 1 && stats.creates === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const auto& devices = r["slices"][0]["spec"]["devices"];
  const metrics::DraView view = Collect();
  if (ConsumableCapacity()) {
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[0]["allowMultipleAllocations"], true);
    EXPECT_TRUE(view.model_fallbacks.empty());
  } else {
    ASSERT_EQ(devices.size(), 4u);
    EXPECT_EQ(devices[0]["name"], "slot-0");
    ASSERT_EQ(view.model_fallbacks.size(), 1u);
    EXPECT_EQ(view.model_fallbacks[0].configured, "perHca");
    EXPECT_EQ(view.model_fallbacks[0].published, "slots");
  }
  EXPECT_EQ(api_.Stats()["writes"], 1);
}

// An HCA whose CDI spec cannot be written is published with the CDI taint (where the server
// keeps taints) and the problem is in the view and reported once per spec as class "cdi"; the next
// Apply that writes the spec takes the taint off.
TEST_P(DraInProcess, AnUnwritableCdiSpecIsPublishedTaintedUntilWritten) {
  ::rmdir(cdi_dir().c_str());
  std::ofstream(cdi_dir()) << "a file where the directory should be";
  Start(kPerHca);
  const std::string taint = CdiUnwritableTaintKey(kDriver);
  auto r = RunUntil(
      "slices.length === 1 && slices[0].spec.devices.every(d => (d.taints || []).some(t => "
      "t.key === '" +
      taint + "'))");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_THAT(Collect().cdi_problem, ::testing::HasSubstr("CDI spec not written"));
  auto cdi_reports = [this] {
    int n = 0;
    for (const auto& p : host_.problems()) n += p.error_class == "cdi" ? 1 : 0;
    return n;
  };
  EXPECT_EQ(cdi_reports(), 2);  // one per HCA's spec file
  auto loaded = config::ParseConfig(kPerHca);
  const auto rescan = [&] {
    front_end_->Apply(loaded->config, sysfs::Scanner(node_.sysfs_root(), node_.dev_root()).Scan(),
                      "rescan");
  };
  rescan();
  EXPECT_EQ(cdi_reports(), 2);  // not again at every rescan

  ASSERT_EQ(::unlink(cdi_dir().c_str()), 0);
  ASSERT_EQ(::mkdir(cdi_dir().c_str(), 0755), 0);
  rescan();
  r = RunUntil(
      "slices.length === 1 && slices[0].spec.devices.every(d => !d.taints || "
      "d.taints.length === 0)");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(Collect().cdi_problem, "");
}

// An API client that cannot be created (the service-account token not mounted yet) is
// retried on the front end's own timer, 1 s jittered to [0.5 s, 1 s] for the first retry:
// not sooner, and without waiting for a rescan.
TEST_P(DraInProcess, AMissingTokenIsRetriedOnItsTimerNotAtTheNextRescan) {
  const std::string token = dir_.path() + "/token";
  Start(kPerHca, token);
  EXPECT_THAT(Collect().api_problem, ::testing::HasSubstr(token));
  ASSERT_EQ(host_.problems().size(), 1u);
  EXPECT_EQ(host_.problems()[0].error_class, "dra");

  std::ifstream in(api_.token_file());
  std::ofstream(token) << in.rdbuf();
  host_.scheduler().Advance(499ms);
  EXPECT_NE(Collect().api_problem, "");  // not before the back-off's least wait
  host_.scheduler().Advance(501ms);
  EXPECT_EQ(Collect().api_problem, "");  // by its longest
  auto r = RunUntil("slices.length === 1");
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
}

std::string ReleaseName(const ::testing::TestParamInfo<std::string>& release) {
  std::string n = "v" + release.param;
  n.erase(std::remove(n.begin(), n.end(), '.'), n.end());
  return n;
}

INSTANTIATE_TEST_SUITE_P(Releases, DraInProcess, ::testing::Values("1.35", "1.37"), ReleaseName);

}  // namespace
}  // namespace rdmadp::dra
