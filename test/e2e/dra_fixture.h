// The DRA end-to-end fixture of dra_e2e_test: the real plugin
// binary on a fake node with one DRA resource (two InfiniBand HCAs, 4 shares each) and one
// device-plugin resource, the kubelet simulator with its DRA side, and the fake
// kube-apiserver, whose wipe the simulated kubelet calls.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#define CPPHTTPLIB_NO_EXCEPTIONS
#include <httplib.h>

#include "pkg/text/cat.h"
#include "test/support/dra_kubelet.h"
#include "test/support/fake_apiserver.h"
#include "test/support/fs_wait.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {

inline constexpr char kDriver[] = "rdma.example.com";

// One DRA resource over the two InfiniBand HCAs, one device-plugin resource over RoCE.
inline std::string Config() {
  return R"({
  "periodicUpdateInterval": 0,
  "configList": [
    {"resourceName": "hca_ib", "rdmaHcaMax": 4, "frontend": "dra",
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}, "envHints": ["nccl"]},
    {"resourceName": "hca_roce", "rdmaHcaMax": 8,
     "selectors": {"vendors": ["15b3"], "linkTypes": ["ether"]}}
  ]
})";
}

inline nlohmann::json Claim(const std::string& name, const std::vector<std::string>& devices,
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
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", name}, {"namespace", "team-a"}}},
      {"spec",
       {{"devices",
         {{"requests", nlohmann::json::array(
                           {{{"name", "rdma"}, {"exactly", {{"deviceClassName", "hca-ib"}}}}})}}}}},
      // Node-local devices: the scheduler confines the allocation to the node (kube-apiserver's
      // 1.36+ claim-status authorization reads this to let the node's driver write status).
      {"status",
       {{"allocation",
         {{"devices", {{"results", results}}},
          {"nodeSelector",
           {{"nodeSelectorTerms",
             {{{"matchFields",
                {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"n1"}}}}}}}}}}}}}}};
}

inline drav1::Claim KubeletClaim(const nlohmann::json& stored) {
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
    h.WriteConfig(ConfigText());
    cdi_dir = h.root() + "/cdi";
    std::filesystem::create_directories(cdi_dir);
    h.kubelet().EnableWatcher();
    h.kubelet().SetHandler("DRAPlugin", &dra);
    ASSERT_TRUE(h.kubelet().Start().ok());
    BeforeThePluginStarts();
    // Every request of the plugin's is authorized as the DaemonSet's service account with the
    // RBAC the manifests give it.
    api.AuthorizeAsTheDraDaemonSet(kDriver, "n1");
    std::vector<std::string> flags = api.PluginFlags();
    for (const auto& f : {Cat("--dra-driver-name=", kDriver), std::string("--node-name=n1"),
                          "--cdi-spec-dir=" + cdi_dir, std::string("--log-level=debug"),
                          std::string("--metrics-address=127.0.0.1:0")}) {
      flags.push_back(f);
    }
    for (const auto& f : ExtraFlags()) flags.push_back(f);
    h.StartPlugin(flags);
  }
  int MetricsPort() { return h.MetricsPort(); }
  std::pair<int, std::string> Http(const std::string& path) { return h.MetricsHttp(path); }
  // Polls `path` until it answers `status` (50 ms apart); the last answer either way.
  std::pair<int, std::string> AwaitHttp(const std::string& path, int status,
                                        std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto r = Http(path);
    while (r.first != status && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      r = Http(path);
    }
    return r;
  }
  // Polls /readyz until its answer says `reason` (50 ms apart); the last answer either way.
  // The kubelet simulator can see a registration before the plugin's event loop has
  // handled its Notify, so the first 503 may still give an earlier reason.
  std::pair<int, std::string> AwaitNotReadyBecause(const std::string& reason,
                                                   std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto r = Http("/readyz");
    while (r.second.find(reason) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      r = Http("/readyz");
    }
    return r;
  }
  double Sample(const std::string& series) { return h.Metric(series); }
  // The config file a case starts with (Config() by default).
  virtual std::string ConfigText() { return Config(); }
  // What a case changes on the node between the kubelet's start and the plugin's.
  virtual void BeforeThePluginStarts() {}
  // Flags a case adds to the plugin's.
  virtual std::vector<std::string> ExtraFlags() { return {}; }
  void TearDown() override {
    // Every field the plugin sent is one the type declares: the fake drops unknown fields
    // with a warning as kube-apiserver does (fieldValidation unset), so a typo would
    // otherwise pass unseen.
    const nlohmann::json stats = api.Stats();
    EXPECT_THAT(stats["unknownFields"], ::testing::IsEmpty());
    // No write (the capability probe included) was refused by the validation the fake ports
    // from kube-apiserver (docs/dra.md, "Using it"); injected faults are not in this list.
    EXPECT_EQ(stats["invalid"].size(), expected_refusals) << stats["invalid"].dump(2);
    // Nothing the plugin asked for was outside the RBAC images/components/dra/rbac.yaml gives.
    EXPECT_EQ(stats["forbidden"].size(), expected_forbidden) << stats["forbidden"].dump(2);
    if (HasFailure()) std::fprintf(stderr, "--- plugin log ---\n%s\n", h.PluginLog().c_str());
  }

  FakeApiServer api;
  DraKubelet dra{[this](const std::string& driver) { api.WipeNodeSlices("n1", driver); }};
  PluginHarness h;
  std::string cdi_dir;
  // Writes a case makes the fake refuse on purpose (a claim the API server must refuse).
  size_t expected_refusals = 0;
  // Requests a case makes the RBAC refuse on purpose (a command run without its component).
  size_t expected_forbidden = 0;
};

}  // namespace rdmadp::testing
