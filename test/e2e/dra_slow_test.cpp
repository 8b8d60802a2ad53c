// The DRA scenario that takes the API server's own time (about 90 s; run by
// scripts/slow-tests.sh, not by the default ctest run): an API server down for a full
// minute. (The health stream's timeout runs on a short --dra-health-timeout in
// dra_e2e_test: DraWithAShortHealthTimeout.)
#include <thread>

#include "test/e2e/dra_fixture.h"

namespace rdmadp::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr char kHca0[] = "n1/hca-ib/hca-0000-10-00-0";

// The API server is down for a minute (an upgrade of the control plane). The node keeps
// serving what it already serves: the kubelet's health stream reports the port that went
// down at once, the device-plugin resource allocates; Prepare of a claim it cannot read
// fails with the reason. When the API server is back the slice is rewritten once, with
// the taint, within the grid of a waiting change (9.5 s; 30 s after two minutes of
// failures), and nothing is rewritten after that.
TEST_F(Dra, AMinuteWithoutTheApiServer) {
  ASSERT_TRUE(api.Await("slices.length === 1 && stats.creates === 1")["ok"].get<bool>());
  ASSERT_TRUE(dra.WaitFor([](const DraKubeletState& s) { return s.registrations == 1; }, 20s));
  const auto claim = api.Admin("/claims", Claim("c", {"hca-0000-11-00-0"}));
  ASSERT_TRUE(h.kubelet().WaitRegistered({"rdma/hca_roce"}, 1, 20s));
  api.Admin("/down");
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  h.plugin().Signal(SIGHUP);
  EXPECT_TRUE(dra.WaitFor(
      [](const DraKubeletState& s) {
        auto it = s.health.find(kHca0);
        return it != s.health.end() && it->second.health == "Unhealthy";
      },
      20s));
  EXPECT_TRUE(h.kubelet().Allocate("rdma/hca_roce", {"0"}).ok());
  auto prepared = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_THAT(prepared->claims().at(claim["metadata"]["uid"].get<std::string>()).error(),
              HasSubstr("resourceclaim"));
  std::this_thread::sleep_for(60s);  // the outage itself
  ASSERT_TRUE(api.Admin("/up").is_object());
  auto r = api.Await("stats.updates === 1", 45s);  // a 30 s grid at most
  ASSERT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["slices"][0]["spec"]["devices"][0]["taints"][0]["key"], "rdma.example.com/port-down");
  EXPECT_EQ(r["slices"][0]["spec"]["pool"]["generation"], 2);
  auto quiet = api.Await("stats.writes > 2", 3s);
  EXPECT_FALSE(quiet["ok"].get<bool>());
  EXPECT_EQ(quiet["stats"]["creates"], 1);
  EXPECT_THAT(quiet["stats"]["invalid"], ::testing::IsEmpty());
  prepared = dra.Prepare(kDriver, {KubeletClaim(claim)});
  ASSERT_TRUE(prepared.ok());
  EXPECT_EQ(prepared->claims().at(claim["metadata"]["uid"].get<std::string>()).error(), "");
  EXPECT_EQ(dra.State().registrations, 1);
}

}  // namespace
}  // namespace rdmadp::testing
