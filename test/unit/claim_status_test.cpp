// ResourceClaim status.devices (pkg/dra/status): what is reported of a prepared claim, the
// addresses' canonical form, and the writer's requests on a clock the test holds (exact
// counts and times against a scripted API server).
#include "pkg/dra/status/claim_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <mutex>

#include "pkg/dra/status/interface_addresses.h"
#include "pkg/dra/status/status_writer.h"
#include "pkg/text/cat.h"
#include "test/support/hca_fixture.h"
#include "test/support/manual_clock.h"

namespace rdmadp::dra {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;

TEST(InterfaceAddresses, Ipv6IsPrintedAsGoPrintsIt) {
  auto v6 = [](std::initializer_list<uint16_t> groups, int prefix) {
    std::array<uint8_t, 16> a{};
    size_t i = 0;
    for (uint16_t g : groups) {
      a[i++] = static_cast<uint8_t>(g >> 8);
      a[i++] = static_cast<uint8_t>(g & 0xff);
    }
    return Ipv6Cidr(a, prefix);
  };
  EXPECT_EQ(v6({0, 0, 0, 0, 0, 0, 0, 1}, 128), "::1/128");
  EXPECT_EQ(v6({0, 0, 0, 0, 0, 0, 0, 0}, 0), "::/0");
  EXPECT_EQ(v6({0x2001, 0xdb8, 0, 0, 0, 0, 0, 1}, 64), "2001:db8::1/64");
  // One zero group is not compressed (RFC 5952 4.2.2); the longest run is; the first of two
  // equal runs is.
  EXPECT_EQ(v6({0x2001, 0xdb8, 0, 1, 1, 1, 1, 1}, 64), "2001:db8:0:1:1:1:1:1/64");
  EXPECT_EQ(v6({0x2001, 0, 0, 1, 0, 0, 0, 1}, 48), "2001:0:0:1::1/48");
  EXPECT_EQ(v6({0x2001, 0xdb8, 0, 0, 1, 0, 0, 1}, 64), "2001:db8::1:0:0:1/64");
  EXPECT_EQ(v6({0xfe80, 0, 0, 0, 0xb8ce, 0xf6ff, 0xfe0a, 0xb0c}, 64),
            "fe80::b8ce:f6ff:fe0a:b0c/64");
  EXPECT_EQ(v6({0x2001, 0xdb8, 0, 0, 0, 0, 0, 0}, 32), "2001:db8::/32");
  // Go prints an IPv4-mapped address as IPv4: not what the interface holds; left out.
  EXPECT_EQ(v6({0, 0, 0, 0, 0, 0xffff, 0xc0a8, 0x0101}, 120), "");
  EXPECT_EQ(Ipv4Cidr({10, 0, 0, 5}, 24), "10.0.0.5/24");  // host bits kept, as validated
}

TEST(InterfaceAddresses, PrefixLengthOfANetmask) {
  const uint8_t m24[4] = {255, 255, 255, 0};
  const uint8_t m0[4] = {0, 0, 0, 0};
  const uint8_t holes[4] = {255, 0, 255, 0};
  const uint8_t m17[4] = {255, 255, 128, 0};
  EXPECT_EQ(PrefixLength(m24, 4), 24);
  EXPECT_EQ(PrefixLength(m0, 4), 0);
  EXPECT_EQ(PrefixLength(holes, 4), -1);
  EXPECT_EQ(PrefixLength(m17, 4), 17);
}

TEST(InterfaceAddresses, TheLoopbackOfThisNamespaceIsRead) {
  // Real getifaddrs(3): every network namespace's lo holds 127.0.0.1/8 once it is up.
  const InterfaceAddresses all = ReadInterfaceAddresses();
  ASSERT_EQ(all.count("lo"), 1u);
  EXPECT_THAT(all.at("lo"), ::testing::Contains("127.0.0.1/8"));
}

// Two HCAs, each with its netdev; the second one's port down when `second_down`.
DraView TwoHcas(bool second_down = false) {
  pool::PoolHca a = testing::ConnectXHca("0000:3b:00.0", 0);
  a.function.hardware_address = "b8:ce:f6:3b:00:00";
  pool::PoolHca b = testing::ConnectXHca("0000:3c:00.0", 0, !second_down);
  b.function.if_name = "ib1";
  b.function.rdma_devices = {{"mlx5_1", {}}};
  if (second_down) b.health_reason = "mlx5_1 port 1 DOWN";
  pool::PoolModel p;
  p.resource.resource_name = "hca_ib";
  p.resource.resource_prefix = "rdma";
  p.resource.rdma_hca_max = 4;
  p.hcas = {a, b};
  SliceContext ctx;
  ctx.driver = "rdma.example.com";
  ctx.node_name = "n1";
  ctx.model = DeviceModel::kPerHca;
  return BuildDraView({p}, ctx);
}

PreparedClaim ClaimOf(std::string name, std::string uid, std::string device,
                      std::string share = "") {
  PreparedClaim c;
  c.namespace_ = "ml";
  c.name = std::move(name);
  c.uid = std::move(uid);
  c.devices = {{"n1/hca-ib", std::move(device), std::move(share)}};
  return c;
}

TEST(ClaimStatus, AnHcaWithANetdevReportsItsNetworkData) {
  const DraView view = TwoHcas();
  const InterfaceAddresses addresses = {{"ib0", {"fe80::1/64", "10.0.0.5/24", "10.0.0.5/24"}},
                                        {"eth0", {"192.168.1.2/24"}}};
  json entries = DeviceStatusEntries(
      ClaimOf("a", "u1", "hca-0000-3b-00-0", "00000000-0000-0000-0000-000000000001"), view,
      addresses);
  StampTransitions(entries, json::array(), "2026-12-07T10:00:00Z");
  EXPECT_EQ(entries, json::parse(R"json([{
    "driver": "rdma.example.com", "pool": "n1/hca-ib", "device": "hca-0000-3b-00-0",
    "shareID": "00000000-0000-0000-0000-000000000001",
    "conditions": [{"type": "Ready", "status": "True", "reason": "Prepared",
                    "message": "prepared: HCA mlx5_0 (0000:3b:00.0, netdev ib0)",
                    "lastTransitionTime": "2026-12-07T10:00:00Z"}],
    "networkData": {"interfaceName": "ib0", "ips": ["10.0.0.5/24", "fe80::1/64"],
                    "hardwareAddress": "b8:ce:f6:3b:00:00"}}])json"));
}

TEST(ClaimStatus, DevicesOfSeveralHcasOrNoneAndUnhealthyOnesSaySo) {
  const DraView view = TwoHcas(/*second_down=*/true);
  PreparedClaim c = ClaimOf("a", "u1", "hca-0000-3c-00-0");
  c.devices.push_back({"n1/hca-ib", "pool", ""});      // an alias: both HCAs
  c.devices.push_back({"n1/hca-ib", "hca-gone", ""});  // not published
  const json entries = DeviceStatusEntries(c, view, {});
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0]["conditions"][0]["status"], "False");
  EXPECT_EQ(entries[0]["conditions"][0]["reason"], "Unhealthy");
  EXPECT_EQ(entries[0]["conditions"][0]["message"],
            "mlx5_1 port 1 DOWN (HCA mlx5_1 (0000:3c:00.0, netdev ib1))");
  EXPECT_EQ(entries[0]["networkData"], json({{"interfaceName", "ib1"}}));  // no MAC, no IPs
  EXPECT_FALSE(entries[1].contains("networkData"));
  EXPECT_THAT(entries[1]["conditions"][0]["message"].get<std::string>(),
              ::testing::HasSubstr("HCAs mlx5_0 (0000:3b:00.0, netdev ib0), mlx5_1"));
  EXPECT_EQ(entries[2]["conditions"][0]["reason"], "NotPublished");
  EXPECT_FALSE(entries[2].contains("shareID"));
}

TEST(ClaimStatus, AnHcaWithoutANetdevGetsItsConditionOnly) {
  // InfiniBand without IPoIB: no netdev, nothing for networkData to say.
  pool::PoolHca hca = testing::ConnectXHca("0000:3b:00.0", 0);
  hca.function.if_name.clear();
  pool::PoolModel p;
  p.resource.resource_name = "hca_ib";
  p.resource.resource_prefix = "rdma";
  p.resource.rdma_hca_max = 4;
  p.hcas = {hca};
  SliceContext ctx;
  ctx.driver = "rdma.example.com";
  ctx.node_name = "n1";
  ctx.model = DeviceModel::kPerHca;
  const json entries = DeviceStatusEntries(ClaimOf("a", "u1", "hca-0000-3b-00-0"),
                                           BuildDraView({p}, ctx), {{"ib0", {"10.0.0.5/24"}}});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_FALSE(entries[0].contains("networkData")) << entries.dump();
  EXPECT_EQ(entries[0]["conditions"][0]["message"], "prepared: HCA mlx5_0 (0000:3b:00.0)");
}

TEST(ClaimStatus, ATransitionKeepsItsTimeWhileTheStatusHolds) {
  json before = DeviceStatusEntries(ClaimOf("a", "u1", "hca-0000-3b-00-0"), TwoHcas(), {});
  StampTransitions(before, json::array(), "2026-12-07T10:00:00Z");
  json same = DeviceStatusEntries(ClaimOf("a", "u1", "hca-0000-3b-00-0"), TwoHcas(), {});
  StampTransitions(same, before, "2026-12-07T11:00:00Z");
  EXPECT_EQ(same, before);
  json down = DeviceStatusEntries(ClaimOf("a", "u1", "hca-0000-3c-00-0"), TwoHcas(true), {});
  json up = DeviceStatusEntries(ClaimOf("a", "u1", "hca-0000-3c-00-0"), TwoHcas(false), {});
  StampTransitions(down, json::array(), "2026-12-07T10:00:00Z");
  StampTransitions(up, down, "2026-12-07T11:00:00Z");
  EXPECT_EQ(up[0]["conditions"][0]["lastTransitionTime"], "2026-12-07T11:00:00Z");
  EXPECT_TRUE(SameReport(before, same));
  EXPECT_FALSE(SameReport(down, up));
}

TEST(ClaimStatus, TheApplyNamesTheClaimWithItsUidAndOnlyOurEntriesAreRead) {
  const PreparedClaim c = ClaimOf("a", "u1", "hca-0000-3b-00-0");
  EXPECT_EQ(ClaimStatusPath(c, "rdma.example.com"),
            "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/a/status"
            "?fieldManager=rdma.example.com&force=true");
  const json apply = ClaimStatusApply(c, json::array());
  EXPECT_EQ(apply["metadata"], json({{"name", "a"}, {"namespace", "ml"}, {"uid", "u1"}}));
  EXPECT_EQ(apply["kind"], "ResourceClaim");
  const json stored = {
      {"status",
       {{"devices",
         {{{"driver", "rdma.example.com"}, {"pool", "n1/hca-ib"}, {"device", "hca-0000-3b-00-0"}},
          {{"driver", "gpu.example.com"}, {"pool", "n1/hca-ib"}, {"device", "hca-0000-3b-00-0"}},
          {{"driver", "rdma.example.com"},
           {"pool", "n1/hca-ib"},
           {"device", "hca-0000-3c-00-0"}}}}}}};
  EXPECT_EQ(ReportedEntries(stored, "rdma.example.com", c.devices).size(), 1u);
  EXPECT_EQ(ReportedEntries(json::object(), "rdma.example.com", c.devices), json::array());
}

// --- The writer, against a scripted API server on a clock the test holds ----------------

struct Request {
  milliseconds at;
  std::string method, path;
  json body;
};

class ScriptedApi final : public kube::ApiTransport {
 public:
  ScriptedApi(testing::ManualClock& clock, std::mutex& mu, std::vector<Request>& log,
              std::deque<kube::HttpResponse>& script, const std::string& failing)
      : clock_(clock), mu_(mu), log_(log), script_(script), failing_(failing) {}
  absl::StatusOr<kube::HttpResponse> Call(std::string_view method, const std::string& path,
                                          const std::string& body, milliseconds) override {
    std::lock_guard<std::mutex> lock(mu_);
    const json sent = body.empty() ? json() : json::parse(body);
    log_.push_back({clock_.Elapsed(), std::string(method), path, sent});
    if (method == "GET") {  // a recovered claim's read: the script says, else gone
      if (script_.empty()) return kube::HttpResponse{404, "{}", 0};
      kube::HttpResponse r = script_.front();
      script_.pop_front();
      return r;
    }
    if (!failing_.empty() && path.find(failing_) != std::string::npos) {
      return kube::HttpResponse{500, "{}", 0};
    }
    if (!script_.empty()) {
      kube::HttpResponse r = script_.front();
      script_.pop_front();
      return r;
    }
    // Kept as applied: the claim with our entries.
    return kube::HttpResponse{200, sent.dump(), 0};
  }
  absl::StatusOr<long> Stream(const std::string&, const std::function<bool(std::string_view)>&,
                              const std::function<void()>&) override {
    return 0L;
  }
  void Cancel() override {}
  void ResetCancel() override {}
  void Shutdown() override {}
  int stream_retry_after_seconds() const override { return 0; }

 private:
  testing::ManualClock& clock_;
  std::mutex& mu_;
  std::vector<Request>& log_;
  std::deque<kube::HttpResponse>& script_;
  const std::string& failing_;  // requests to a path containing it answer 500
};

class StatusWriterTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }
  void Start(std::shared_ptr<rate::SharedBudget> budget = nullptr) {
    StatusWriterOptions o;
    o.driver = "rdma.example.com";
    o.clock = &clock;
    o.write_budget = budget ? budget : std::make_shared<rate::SharedBudget>(32, seconds(1));
    o.connect = [this]() -> absl::StatusOr<std::unique_ptr<kube::ApiTransport>> {
      return std::make_unique<ScriptedApi>(clock, mu, log, script, failing);
    };
    o.addresses = [] { return InterfaceAddresses{{"ib0", {"10.0.0.5/24"}}}; };
    o.wall = [this] {
      return std::chrono::system_clock::time_point(seconds(1796637600)) + clock.Elapsed();
    };
    o.jitter = [](milliseconds d) { return d; };
    o.spread = [](milliseconds) { return milliseconds(0); };
    o.phase = [](milliseconds) { return milliseconds(0); };
    o.on_info = [this](std::string line) { infos.push_back(std::move(line)); };
    o.on_problem = [this](std::string line) { problems.push_back(std::move(line)); };
    auto w = ClaimStatusWriter::Start(std::move(o));
    ASSERT_TRUE(w.ok()) << w.status();
    writer = std::move(*w);
  }
  std::vector<Request> Log() {
    clock.Settle();
    std::lock_guard<std::mutex> lock(mu);
    return log;
  }
  void Answer(long code, int retry_after = 0, std::string body = "{}") {
    std::lock_guard<std::mutex> lock(mu);
    script.push_back({code, std::move(body), retry_after});
  }
  // The claim as a replayed Prepare reads it: what the writer applied last.
  PreparedClaim Replayed(PreparedClaim c, const json& applied) {
    c.reported = ReportedEntries(applied, "rdma.example.com", c.devices);
    return c;
  }

  testing::ManualClock clock{1};
  std::mutex mu;
  std::vector<Request> log;
  std::deque<kube::HttpResponse> script;
  std::string failing;  // set before the writer starts
  std::vector<std::string> infos, problems;
  std::unique_ptr<ClaimStatusWriter> writer;
};

TEST_F(StatusWriterTest, APreparedClaimIsWrittenAtOnceAndOnlyOnce) {
  const PreparedClaim a = ClaimOf("a", "u1", "hca-0000-3b-00-0");
  writer->Prepared(a);
  EXPECT_TRUE(Log().empty());  // no view yet: nothing to say what the device is
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  auto sent = Log();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].at, milliseconds(0));
  EXPECT_EQ(sent[0].method, "PATCH");
  EXPECT_EQ(sent[0].path, ClaimStatusPath(a, "rdma.example.com"));
  EXPECT_EQ(sent[0].body["status"]["devices"][0]["networkData"]["ips"], json({"10.0.0.5/24"}));
  // A kubelet restart replays Prepare; the same view comes again at every rescan; a restart
  // of ours reads what it wrote: none of it is a request.
  writer->Prepared(Replayed(a, sent[0].body));
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  clock.Advance(seconds(30));
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  EXPECT_EQ(Log().size(), 1u);
  writer.reset();
  Start();
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  writer->Prepared(Replayed(a, sent[0].body));
  EXPECT_EQ(Log().size(), 1u);
  EXPECT_EQ(writer->stats().applies_by_code, (std::map<long, uint64_t>{}));
}

TEST_F(StatusWriterTest, AViewChangeWritesTheClaimsItChangesAndNothingAfterUnprepare) {
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  writer->Prepared(ClaimOf("a", "u1", "hca-0000-3b-00-0"));
  writer->Prepared(ClaimOf("b", "u2", "hca-0000-3c-00-0"));
  ASSERT_EQ(Log().size(), 2u);
  clock.Advance(seconds(5));
  writer->SetView(std::make_shared<const DraView>(TwoHcas(/*second_down=*/true)));
  auto sent = Log();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[2].at, seconds(5));
  EXPECT_THAT(sent[2].path, ::testing::HasSubstr("/resourceclaims/b/status"));
  const json& ready = sent[2].body["status"]["devices"][0]["conditions"][0];
  EXPECT_EQ(ready["status"], "False");
  EXPECT_EQ(ready["lastTransitionTime"], "2026-12-07T10:00:05Z");
  // b's pod ends: its claim is unprepared (then deallocated); the port comes back.
  writer->Unprepared("u2");
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  EXPECT_EQ(Log().size(), 3u);
  EXPECT_EQ(writer->stats().tracked, 1u);
}

TEST_F(StatusWriterTest, ARetryAfterIsWaitedOutWhateverComesMeanwhile) {
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  Answer(429, /*retry_after=*/5);
  writer->Prepared(ClaimOf("a", "u1", "hca-0000-3b-00-0"));
  ASSERT_EQ(Log().size(), 1u);
  writer->Prepared(ClaimOf("b", "u2", "hca-0000-3c-00-0"));  // no request before 5 s
  writer->SetView(std::make_shared<const DraView>(TwoHcas(true)));
  clock.Advance(milliseconds(4999));
  EXPECT_EQ(Log().size(), 1u);
  clock.Advance(seconds(2));
  const auto sent = Log();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[1].at, seconds(5));  // the Retry-After (its spread is 0 here)
  EXPECT_EQ(sent[2].at, seconds(5));
  EXPECT_EQ(writer->stats().applies_by_code, (std::map<long, uint64_t>{{200, 2}, {429, 1}}));
}

TEST_F(StatusWriterTest, ARefusedClaimIsGivenUpUntilItsNextPrepare) {
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  Answer(422, 0, R"({"kind":"Status","message":"status.devices[0]: Invalid value"})");
  const PreparedClaim a = ClaimOf("a", "u1", "hca-0000-3b-00-0");
  writer->Prepared(a);
  ASSERT_EQ(Log().size(), 1u);
  writer->SetView(std::make_shared<const DraView>(TwoHcas(true)));
  clock.Advance(std::chrono::minutes(10));
  EXPECT_EQ(Log().size(), 1u);
  EXPECT_THAT(problems, ElementsAre("ResourceClaim ml/a: device status not written, given up "
                                    "until it is prepared again: HTTP 422: status.devices[0]: "
                                    "Invalid value"));
  EXPECT_EQ(writer->stats().given_up_claims, 1u);
  writer->Prepared(a);
  EXPECT_EQ(Log().size(), 2u);
  EXPECT_EQ(writer->stats().problem, "");
  EXPECT_EQ(writer->stats().given_up_claims, 0u);
}

// After a restart of ours: the claims Prepare's files name are read once each, then kept true.
TEST_F(StatusWriterTest, RecoveredClaimsAreReadOnceThenKeptTrue) {
  const PreparedClaim a = ClaimOf("a", "u1", "hca-0000-3c-00-0");
  json entries = DeviceStatusEntries(a, TwoHcas(), {});
  StampTransitions(entries, json::array(), "2026-12-07T09:00:00Z");
  auto stored = [&](const std::string& uid, const json& devices) {
    json claim;
    claim["metadata"] = {{"name", "a"}, {"namespace", "ml"}, {"uid", uid}};
    const json result = {{"driver", "rdma.example.com"},
                         {"pool", "n1/hca-ib"},
                         {"device", "hca-0000-3c-00-0"},
                         {"request", "r"}};
    claim["status"]["allocation"]["devices"]["results"] = json::array({result});
    claim["status"]["devices"] = devices;
    return claim.dump();
  };
  Answer(200, 0, stored("u1", entries));        // as we wrote it before the restart
  Answer(200, 0, stored("u9", json::array()));  // re-created under its name: not ours
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  writer->Recovered("ml", "a", "u1");
  writer->Recovered("ml", "a", "u2");
  writer->Recovered("ml", "gone", "u3");  // 404
  auto sent = Log();
  ASSERT_EQ(sent.size(), 3u);  // one read each; what u1's status says still stands
  for (const auto& r : sent) EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(writer->stats().tracked, 1u);
  EXPECT_EQ(writer->stats().recovered, 1u);
  // Its port goes down: one write, Ready False.
  writer->SetView(std::make_shared<const DraView>(TwoHcas(true)));
  sent = Log();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[3].method, "PATCH");
  EXPECT_EQ(sent[3].body["status"]["devices"][0]["conditions"][0]["status"], "False");
  writer->Unprepared("u1");
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  EXPECT_EQ(Log().size(), 4u);
}

TEST_F(StatusWriterTest, AClaimThatKeepsFailingNeverHoldsUpTheOthers) {
  // Claim a's writes always fail (5xx: retried on the grid); b's work.
  writer.reset();
  failing = "/resourceclaims/a/";
  Start();
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  writer->Prepared(ClaimOf("a", "u1", "hca-0000-3b-00-0"));
  writer->Prepared(ClaimOf("b", "u2", "hca-0000-3c-00-0"));
  clock.Advance(seconds(30));
  std::vector<std::string> seen;
  for (const auto& r : Log()) {
    seen.push_back(Cat(r.at.count(), " ", r.path.substr(r.path.find("claims/") + 7, 1)));
  }
  // a at 0 s (500); at the grid point the turn is b's (written), then a's again.
  EXPECT_THAT(seen, ElementsAre("0 a", "9500 b", "9500 a", "19000 a", "28500 a"));
}

TEST_F(StatusWriterTest, Rbac403WaitsOnTheSlowBackOff) {
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  Answer(403, 0, R"({"kind":"Status","message":"forbidden"})");
  writer->Prepared(ClaimOf("a", "u1", "hca-0000-3b-00-0"));
  clock.Advance(seconds(7));
  EXPECT_EQ(Log().size(), 1u);
  clock.Advance(seconds(1));  // kFirstSlowBackoff, the identity jitter
  const auto sent = Log();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].at, seconds(8));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], ::testing::HasSubstr("RBAC: see images/components/dra/rbac.yaml"));
}

TEST_F(StatusWriterTest, AServerThatDropsTheFieldIsAskedOnceAnHour) {
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  Answer(200, 0, R"({"kind":"ResourceClaim","status":{}})");
  Answer(200, 0, R"({"kind":"ResourceClaim","status":{}})");
  writer->Prepared(ClaimOf("a", "u1", "hca-0000-3b-00-0"));
  writer->Prepared(ClaimOf("b", "u2", "hca-0000-3c-00-0"));
  ASSERT_EQ(Log().size(), 1u);
  EXPECT_TRUE(writer->stats().field_dropped);
  EXPECT_THAT(infos,
              ElementsAre(::testing::HasSubstr("feature gate DRAResourceClaimDeviceStatus")));
  clock.Advance(std::chrono::minutes(59));
  EXPECT_EQ(Log().size(), 1u);
  clock.Advance(std::chrono::minutes(1));
  ASSERT_EQ(Log().size(), 2u);  // the hour's check: still dropped, one request
  clock.Advance(std::chrono::hours(1));
  // The gate turned on: the check is kept, and the other claim follows at once.
  const auto sent = Log();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[2].at, std::chrono::hours(2));
  EXPECT_EQ(sent[3].at, std::chrono::hours(2));
  EXPECT_FALSE(writer->stats().field_dropped);
  EXPECT_EQ(infos.size(), 1u);
}

TEST_F(StatusWriterTest, WritesDrawOnTheDriversOneBudget) {
  writer.reset();
  auto budget = std::make_shared<rate::SharedBudget>(32, seconds(1));
  // The slice publisher's 16 writes: the status writer leaves the rest of the burst to it.
  for (int i = 0; i < 16; ++i) budget->Take(clock.Now());
  Start(budget);
  writer->SetView(std::make_shared<const DraView>(TwoHcas()));
  writer->Prepared(ClaimOf("a", "u1", "hca-0000-3b-00-0"));
  writer->Prepared(ClaimOf("b", "u2", "hca-0000-3c-00-0"));
  clock.Advance(seconds(5));
  const auto sent = Log();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].at, seconds(1));
  EXPECT_EQ(sent[1].at, seconds(2));
  EXPECT_EQ(writer->stats().budget_waits, 2u);
  // That the publisher still finds writes at once while the status writer waits is the
  // reserve's own test (CellRateLimiter.AReserveLeavesPartOfTheBurstToOthers).
}

}  // namespace
}  // namespace rdmadp::dra
