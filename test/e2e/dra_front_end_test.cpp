// The DRA front end in-process: constructed on a FakeHost (fake time, a kubelet root in a
// temporary directory) against the fake kube-apiserver over real TLS. What lives only in the
// front end is asserted on the server's objects and the front end's metrics view: the
// device model gated on what the server keeps, and HCAs whose CDI spec cannot be written
// published tainted, and a CDI spec no longer wanted that cannot be removed tried again until
// it is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

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
using testing::FakeFunction;
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
  // An Apply of `config_text` over the node as it is now, as a rescan makes.
  void Rescan(const std::string& config_text) {
    auto loaded = config::ParseConfig(config_text);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    front_end_->Apply(loaded->config, sysfs::Scanner(node_.sysfs_root(), node_.dev_root()).Scan(),
                      "rescan");
  }
  // What the front end reported as class "cdi", in order.
  std::vector<std::string> CdiReports() const {
    std::vector<std::string> out;
    for (const auto& p : host_.problems()) {
      if (p.error_class == "cdi") out.push_back(p.message);
    }
    return out;
  }
  // The CDI spec file of the HCA at PCI address `address`.
  std::string SpecOf(const std::string& address) const {
    return cdi_dir() + "/k8s-rdma-shared-dp_dra_" + HcaDeviceName(address) + ".json";
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  static bool IsFile(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }
  static bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }
  // Makes the spec at `path` one that cannot be removed, whoever the test runs as: root
  // ignores a read-only directory's mode, but unlink() refuses a directory (EISDIR), so a
  // non-empty directory of the same name stands in for the spec while the obstacle lasts.
  void BlockRemoval(const std::string& path) {
    ASSERT_EQ(::unlink(path.c_str()), 0) << path;
    ASSERT_EQ(::mkdir(path.c_str(), 0755), 0) << path;
    std::ofstream(path + "/obstacle") << "unlink() refuses a directory";
  }
  // The obstacle goes: the spec is a file again, holding `content`, and can be removed.
  void UnblockRemoval(const std::string& path, const std::string& content) {
    ASSERT_EQ(::unlink((path + "/obstacle").c_str()), 0) << path;
    ASSERT_EQ(::rmdir(path.c_str()), 0) << path;
    std::ofstream(path) << content;
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

// The spec of an HCA that left, which cannot be removed (EACCES, EBUSY, a read-only
// directory for a while), is not forgotten: reported once as class "cdi", tried again at every
// rescan and on the front end's own timer (1 s jittered to [0.5 s, 1 s], then 2 s to [1 s,
// 2 s]), and removed by the first retry after the obstacle goes, without a rescan and with
// nothing more reported. The HCA that stays keeps its spec.
TEST_P(DraInProcess, AStaleCdiSpecThatCannotBeRemovedIsRetriedUntilRemoved) {
  Start(kPerHca);
  // The server's capabilities known first: no Publish of the publisher's own comes between
  // the steps below, so only the rescans and the timer retry the removal.
  auto r = RunUntil("slices.length === 1 && stats.creates === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const std::string kept = SpecOf(FakeNode::ConnectX(0, 0, /*infiniband=*/true).address);
  const std::string gone_hca = FakeNode::ConnectX(1, 0, /*infiniband=*/true).address;
  const std::string gone = SpecOf(gone_hca);
  ASSERT_TRUE(IsFile(kept)) << kept;
  ASSERT_TRUE(IsFile(gone)) << gone;
  const std::string stale = Read(gone);
  BlockRemoval(gone);

  node_.Remove(gone_hca);
  Rescan(kPerHca);
  EXPECT_TRUE(Exists(gone));  // could not be removed
  EXPECT_THAT(CdiReports(), ::testing::ElementsAre(::testing::HasSubstr(gone)));
  Rescan(kPerHca);                    // tried again, in vain: not said again
  host_.scheduler().Advance(1000ms);  // the timer's first retry, by 1 s: in vain too
  EXPECT_TRUE(Exists(gone));
  EXPECT_EQ(CdiReports().size(), 1u);

  UnblockRemoval(gone, stale);
  // The second retry comes 1 s to 2 s after the first, which came 0.5 s to 1 s after the
  // failed removal: not before 1.5 s in all, and by 3 s, with no rescan.
  host_.scheduler().Advance(499ms);
  EXPECT_TRUE(IsFile(gone));
  host_.scheduler().Advance(1501ms);
  EXPECT_FALSE(Exists(gone)) << "the stale spec is still there";
  EXPECT_EQ(CdiReports().size(), 1u);  // nothing more said once it is removed
  Rescan(kPerHca);
  host_.scheduler().Advance(2000ms);
  EXPECT_EQ(CdiReports().size(), 1u);
  EXPECT_TRUE(IsFile(kept));
}

// A spec whose removal is pending and that is wanted again (its HCA back before a retry
// removed it) is written, not removed: no retry takes it away afterwards.
TEST_P(DraInProcess, AStaleCdiSpecWantedAgainIsWrittenNotRemoved) {
  Start(kPerHca);
  auto r = RunUntil("slices.length === 1 && stats.creates === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const FakeFunction hca = FakeNode::ConnectX(1, 0, /*infiniband=*/true);
  const std::string spec = SpecOf(hca.address);
  ASSERT_TRUE(IsFile(spec)) << spec;
  BlockRemoval(spec);
  node_.Remove(hca.address);
  Rescan(kPerHca);
  EXPECT_EQ(CdiReports().size(), 1u);

  const std::string old = "not what the front end writes";
  UnblockRemoval(spec, old);
  node_.Add(hca);
  Rescan(kPerHca);
  ASSERT_TRUE(IsFile(spec));
  EXPECT_NE(Read(spec), old);         // written again
  host_.scheduler().Advance(3000ms);  // past any retry the removal had
  EXPECT_TRUE(IsFile(spec));
  EXPECT_NE(Read(spec), old);
  EXPECT_EQ(CdiReports().size(), 1u);
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
