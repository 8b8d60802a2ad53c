// The DRA front end end to end: the real plugin binary, a fake node, the kubelet simulator
// with its DRA side (plugin watcher registration, Prepare, the health stream, the wipe at
// kubelet start) and the fake kube-apiserver (TLS, token, schema-checked writes). What a
// cluster sees: slices published once and kept, a registration per kubelet start, Prepare
// answered from the claim's allocation with CDI IDs the reference CDI library resolves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "pkg/text/cat.h"
#include "test/support/dra_kubelet.h"
#include "test/support/fake_apiserver.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kDriver[] = "rdma.example.com";

// One DRA resource over the two InfiniBand HCAs, one device-plugin resource over RoCE.
std::string Config() {
  return R"({
  "periodicUpdateInterval": 0,
  "configList": [
    {"resourceName": "hca_ib", "rdmaHcaMax": 4, "frontend": "dra",
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}},
    {"resourceName": "hca_roce", "rdmaHcaMax": 8,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}}
  ]
})";
}

nlohmann::json Claim(const std::string& name, const std::vector<std::string>& devices,
                     const std::string& driver = kDriver) {
  nlohmann::json results = nlohmann::json::array();
  int share = 0;
  for (const auto& d : devices) {
    results.push_back({{"request", "rdma"},
                       {"driver", driver},
                       {"pool", "n1/hca-ib"},
                       {"device", d},
                       {"shareID", Cat("00000000-0000-0000-0000-00000000000", share++)}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", name}, {"namespace", "team-a"}}},
          {"spec", {{"devices", {{"requests", nlohmann::json::array({{{"name", "rdma"}, {"exactly", {{"deviceClassName", "hca-ib"}}}}})}}}}},
          {"status", {{"allocation", {{"devices", {{"results", results}}}}}}}};
}

drav1::Claim KubeletClaim(const nlohmann::json& stored) {
  drav1::Claim c;
  c.set_namespace_(stored["metadata"]["namespace"].get<std::string>());
  c.set_name(stored["metadata"]["name"].get<std::string>());
  c.set_uid(stored["metadata"]["uid"].get<std::string>());
  return c;
}

class Dra : public ::testing::Test {
 protected:
  void SetUp() override {
    h.AddDemoHcas();
    h.WriteConfig(Config());
    cdi_dir = h.root() + "/cdi";
    std::filesystem::create_directories(cdi_dir);
    h.kubelet().EnableWatcher();
    h.kubelet().SetHandler("DRAPlugin", &dra);
    ASSERT_TRUE(h.kubelet().Start().ok());
    std::vector<std::string> flags = api.PluginFlags();
    for (const auto& f : {Cat("--dra-driver-name=", kDriver), std::string("--node-name=n1"),
                          "--cdi-spec-dir=" + cdi_dir, std::string("--log-level=debug")}) {
      flags.push_back(f);
    }
    h.StartPlugin(flags);
  }
  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "--- plugin log ---\n%s\n", h.PluginLog().c_str());
  }

  FakeApiServer api;
  DraKubelet dra{[this](const std::string& driver) {
    nlohmann::json sel = {{"spec.nodeName", "n1"}};
    if (!driver.empty()) sel["spec.driver"] = driver;
    api.Admin("/wipe", {{"fieldSelector", sel}});
  }};
  PluginHarness h;
  std::string cdi_dir;
};

TEST_F(Dra, PublishesRegistersAndReportsHealth) {
  auto r = api.Await("slices.length === 1 && stats.creates === 1");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  const auto& spec = r["slices"][0]["spec"];
  EXPECT_EQ(spec["driver"], kDriver);
  EXPECT_EQ(spec["pool"]["name"], "n1/hca-ib");
  ASSERT_EQ(spec["devices"].size(), 2u);
  EXPECT_EQ(spec["devices"][0]["name"], "hca-0000-10-00-0");
  EXPECT_EQ(spec["devices"][0]["capacity"]["shares"]["value"], "4");
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) {
    return s.registrations == 1 && s.health.size() == 2;
  }, 20s));
  const DraKubeletState s = dra.State();
  EXPECT_EQ(s.service, "v1.DRAPlugin");
  EXPECT_EQ(s.health.at("n1/hca-ib/hca-0000-10-00-0").health, "Healthy");
  EXPECT_EQ(s.health.at("n1/hca-ib/hca-0000-11-00-0").health, "Healthy");
  // The device-plugin resource is served beside it, through kubelet.sock.
  EXPECT_TRUE(h.kubelet().WaitRegistered({"rdma/hca_roce"}, 1, 20s));
  EXPECT_EQ(h.kubelet().State().resources.count("rdma/hca_ib"), 0u);
  // Nothing is written while nothing changes.
  auto quiet = api.Await("stats.writes > 1", 2s);
  EXPECT_FALSE(quiet["ok"].get<bool>());
  EXPECT_THAT(quiet["stats"]["invalid"], ::testing::IsEmpty());
  EXPECT_EQ(dra.State().registrations, 1);
}

TEST_F(Dra, PrepareAnswersFromTheAllocationStatelessly) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto both = api.Admin("/claims", Claim("both", {"hca-0000-10-00-0", "hca-0000-11-00-0"}));
  const auto other = api.Admin("/claims", Claim("gpu-only", {"gpu-0"}, "gpu.example.com"));
  auto gone = Claim("gone", {"hca-0000-10-00-0"});
  const auto stored_gone = api.Admin("/claims", gone);
  drav1::Claim wrong_uid = KubeletClaim(stored_gone);
  wrong_uid.set_uid("not-the-uid");
  auto resp = dra.Prepare(kDriver, {KubeletClaim(both), KubeletClaim(other), wrong_uid});
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->claims_size(), 3);
  const auto& b = resp->claims().at(both["metadata"]["uid"].get<std::string>());
  EXPECT_EQ(b.error(), "");
  ASSERT_EQ(b.devices_size(), 2);
  EXPECT_EQ(b.devices(0).pool_name(), "n1/hca-ib");
  EXPECT_THAT(b.devices(0).request_names(), ElementsAre("rdma"));
  EXPECT_THAT(b.devices(0).cdi_device_ids(), ElementsAre("rdma.example.com/hca=hca-0000-10-00-0"));
  EXPECT_EQ(resp->claims().at(other["metadata"]["uid"].get<std::string>()).devices_size(), 0);
  EXPECT_THAT(resp->claims().at("not-the-uid").error(), HasSubstr("deleted and re-created"));
  // The CDI spec of every published HCA is on disk.
  for (const char* hca : {"hca-0000-10-00-0", "hca-0000-11-00-0"}) {
    const std::string spec = ReadFileOrEmpty(Cat(cdi_dir, "/k8s-rdma-shared-dp_dra_", hca, ".json"));
    EXPECT_THAT(spec, HasSubstr(Cat("\"name\": \"", hca, "\""))) << hca;
    EXPECT_THAT(spec, HasSubstr("\"kind\": \"rdma.example.com/hca\""));
  }
  // The same batch again (a kubelet restart replays it): the same answer.
  auto again = dra.Prepare(kDriver, {KubeletClaim(both)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->claims().at(both["metadata"]["uid"].get<std::string>()).SerializeAsString(),
            b.SerializeAsString());
  auto un = dra.Unprepare(kDriver, {KubeletClaim(both)});
  ASSERT_TRUE(un.ok());
  EXPECT_EQ(un->claims_size(), 1);
  EXPECT_EQ(un->claims().begin()->second.error(), "");
  EXPECT_THAT(h.PluginLog(), HasSubstr("(share 00000000-0000-0000-0000-000000000001)"));
}

TEST_F(Dra, AKubeletRestartWipesAndTheSlicesComeBack) {
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(h.kubelet().Restart().ok());  // wipes the node's slices at start
  auto r = api.Await("slices.length === 1 && stats.creates === 2");
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  std::printf("[measured] kubelet wipe -> slices back: %.1f ms\n",
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                  .count());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 2; }, 20s));
  EXPECT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations > 2; }, 2s) ==
              false);
  EXPECT_EQ(dra.State().rejected.size(), 0u);
}

std::string Maps(pid_t pid) { return ReadFileOrEmpty(Cat("/proc/", pid, "/maps")); }

// The DRA front end's HTTPS client is loaded only when an entry uses it: a device-plugin-only
// node never maps libcurl (nor has it initialise OpenSSL).
TEST_F(Dra, OnlyTheDraFrontEndLoadsLibcurl) {
  ASSERT_TRUE(api.Await("slices.length === 1")["ok"].get<bool>());
  EXPECT_THAT(Maps(h.plugin().pid()), HasSubstr("libcurl"));
  PluginHarness plain;
  plain.AddDemoHcas();
  plain.WriteConfig(PluginHarness::DemoConfig(0));
  ASSERT_TRUE(plain.kubelet().Start().ok());
  plain.StartPlugin();
  ASSERT_TRUE(plain.kubelet().WaitRegistered({"rdma/hca_shared_devices_a"}, 1, 20s));
  const std::string maps = Maps(plain.plugin().pid());
  ASSERT_THAT(maps, HasSubstr("libgrpc"));
  EXPECT_THAT(maps, ::testing::Not(HasSubstr("libcurl")));
}

}  // namespace
}  // namespace rdmadp::testing
