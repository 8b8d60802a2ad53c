// The DRA front end's figures, on the same fake node, kubelet simulator (DRA side) and fake
// kube-apiserver (Node.js, TLS) as the tests:
//  - wipe -> slices back: the kubelet deletes the node's ResourceSlices at every start; the
//    reference Go helper republishes after its 30 s sync delay (target <= 1 s);
//  - Prepare latency through the kubelet's gRPC API, against the same run's bare GET of the
//    claim with the same client (the floor: Prepare is one GET plus our work);
//  - API writes during an idle window, as writes per hour (target 0);
//  - RSS with the DRA front end on (it maps libcurl and OpenSSL's TLS state).
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "pkg/kube/rest_client.h"
#include "pkg/text/cat.h"
#include "test/bench/bench_common.h"
#include "test/support/dra_kubelet.h"
#include "test/support/fake_apiserver.h"
#include "test/support/plugin_harness.h"

using namespace rdmadp;
using namespace rdmadp::bench;
using namespace std::chrono_literals;

int main() {
  testing::FakeApiServer api;
  testing::DraKubelet dra([&](const std::string& driver) {
    nlohmann::json sel = {{"spec.nodeName", "n1"}};
    if (!driver.empty()) sel["spec.driver"] = driver;
    api.Admin("/wipe", {{"fieldSelector", sel}});
  });
  testing::PluginHarness h;
  h.AddDemoHcas();
  h.WriteConfig(R"({"periodicUpdateInterval": 0, "configList": [
    {"resourceName": "hca_ib", "rdmaHcaMax": 4, "frontend": "dra",
     "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]}}]})");
  const std::string cdi = h.root() + "/cdi";
  std::filesystem::create_directories(cdi);
  h.kubelet().EnableWatcher();
  h.kubelet().SetHandler("DRAPlugin", &dra);
  if (!h.kubelet().Start().ok()) return 1;
  std::vector<std::string> flags = api.PluginFlags();
  flags.push_back("--dra-driver-name=rdma.example.com");
  flags.push_back("--node-name=n1");
  flags.push_back("--cdi-spec-dir=" + cdi);
  h.StartPlugin(flags);
  if (!api.Await("slices.length === 1")["ok"].get<bool>() ||
      !dra.WaitFor([](const auto& s) { return s.registrations == 1; }, 20s)) {
    std::fprintf(stderr, "the plugin did not publish and register:\n%s", h.PluginLog().c_str());
    return 1;
  }

  // Wipe -> back.
  std::vector<double> back;
  for (int i = 0; i < 20; ++i) {
    const int creates = api.Stats()["creates"].get<int>();
    const auto t = Clock::now();
    api.Admin("/wipe", {{"fieldSelector", {{"spec.nodeName", "n1"}}}});
    if (!api.Await(Cat("slices.length === 1 && stats.creates === ", creates + 1))["ok"]
             .get<bool>()) {
      std::fprintf(stderr, "slices did not come back\n");
      return 1;
    }
    back.push_back(MsSince(t));
  }
  Row("dra", "wipe -> slices back p50", Median(back), "ms", "Go helper: 30000 ms (sync delay)",
      "<= 1000", Median(back) <= 1000 ? "ok" : "MISSED");
  Row("dra", "wipe -> slices back max", Percentile(back, 100), "ms", "", "<= 1000",
      Percentile(back, 100) <= 1000 ? "ok" : "MISSED");

  // Prepare latency against the bare GET.
  nlohmann::json claim = {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", "bench"}, {"namespace", "default"}}},
      {"spec",
       {{"devices",
         {{"requests", nlohmann::json::array(
                           {{{"name", "rdma"}, {"exactly", {{"deviceClassName", "hca-ib"}}}}})}}}}},
      {"status",
       {{"allocation",
         {{"devices",
           {{"results", nlohmann::json::array({{{"request", "rdma"},
                                                {"driver", "rdma.example.com"},
                                                {"pool", "n1/hca-ib"},
                                                {"device", "hca-0000-10-00-0"}}})}}}}}}}};
  claim = api.Admin("/claims", claim);
  testing::drav1::Claim c;
  c.set_namespace_("default");
  c.set_name("bench");
  c.set_uid(claim["metadata"]["uid"].get<std::string>());
  auto client = kube::RestClient::Create({api.server(), api.ca_file(), api.token_file(), "bench"});
  if (!client.ok()) return 1;
  std::vector<double> get_us;
  std::vector<double> prepare_us;
  const int n =
      std::getenv("BENCH_DRA_PREPARES") ? std::atoi(std::getenv("BENCH_DRA_PREPARES")) : 500;
  for (int i = 0; i < n; ++i) {
    auto t = Clock::now();
    auto r =
        (*client)->Call("GET", "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/bench");
    get_us.push_back(MsSince(t) * 1000);
    t = Clock::now();
    auto p = dra.Prepare("rdma.example.com", {c});
    prepare_us.push_back(MsSince(t) * 1000);
    if (!r.ok() || !p.ok() || !p->claims().begin()->second.error().empty()) {
      std::fprintf(stderr, "prepare failed\n");
      return 1;
    }
  }
  const double p50 = Median(prepare_us);
  const double p99 = Percentile(prepare_us, 99);
  Row("dra", "Prepare p50", p50, "us", Cat("bare GET ", Fmt(Median(get_us), 0), " us"), "info",
      "info");
  Row("dra", "Prepare p99", p99, "us", Cat("bare GET ", Fmt(Percentile(get_us, 99), 0), " us"),
      "info", "info");

  // Idle writes.
  const int idle_seconds =
      std::getenv("BENCH_IDLE_SECONDS") ? std::atoi(std::getenv("BENCH_IDLE_SECONDS")) : 60;
  const int writes = api.Stats()["writes"].get<int>();
  auto quiet = api.Await(Cat("stats.writes > ", writes), std::chrono::seconds(idle_seconds));
  const double per_hour = (quiet["stats"]["writes"].get<int>() - writes) * 3600.0 / idle_seconds;
  Row("dra", Cat("API writes per idle hour (", idle_seconds, " s window)"), per_hour, "writes", "",
      "0", per_hour == 0 ? "ok" : "MISSED");
  const ProcessFigures f = Figures(h.plugin().pid());
  Row("dra", "RSS with the DRA front end on", f.rss_kib / 1024.0, "MiB", "", "info", "info");
  return 0;
}
