// The DRA rendering of pool models: exact ResourceSlice content per device model, and the
// API server's limits kept however large the pool (the schema itself is checked against
// the official Kubernetes one in test/manifests/dra_slices.mjs).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "pkg/dra/prepare/prepare.h"
#include "pkg/dra/prepare/prepare_claim.h"
#include "pkg/dra/slices/resource_slices.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/kube/rest_client.h"
#include "pkg/text/cat.h"
#include "test/support/hca_fixture.h"
#include "test/support/temp_dir.h"

namespace rdmadp::dra {
namespace {

using nlohmann::json;

pool::PoolHca Hca(std::string address, int numa, bool healthy = true) {
  return testing::ConnectXHca(std::move(address), numa, healthy);
}

pool::PoolModel Pool(std::vector<pool::PoolHca> hcas, int64_t shares = 1000) {
  pool::PoolModel p;
  p.resource.resource_name = "hca_shared_devices_a";
  p.resource.resource_prefix = "rdma";
  p.resource.rdma_hca_max = shares;
  p.hcas = std::move(hcas);
  return p;
}

SliceContext Node(DeviceModel model = DeviceModel::kPerHca) {
  SliceContext ctx;
  ctx.node_name = "worker-7";
  ctx.generation = 3;
  ctx.model = model;
  return ctx;
}

// The model a pool is published in, per configured model and what the server keeps
// (unknown, kept, dropped): docs/dra.md, "What the plugin does about it".
TEST(ResourceSlices, ResolveModelNeverShrinksCapacity) {
  using M = DeviceModel;
  const std::optional<bool> unknown, kept = true, dropped = false;
  EXPECT_EQ(ResolveModel(M::kAuto, unknown), std::nullopt);
  EXPECT_EQ(ResolveModel(M::kAuto, kept), M::kPerHca);
  EXPECT_EQ(ResolveModel(M::kAuto, dropped), M::kSlots);
  for (M m : {M::kPerHca, M::kPerPool, M::kSlots}) {
    EXPECT_EQ(ResolveModel(m, unknown), m);
    EXPECT_EQ(ResolveModel(m, kept), m);
    EXPECT_EQ(ResolveModel(m, dropped), M::kSlots);
  }
}

TEST(DraView, AnExplicitModelTheServerCannotHonourIsAFallbackToSlots) {
  pool::PoolModel p = Pool({Hca("0000:3b:00.0", 0), Hca("0000:3c:00.0", 0)}, 12);
  p.resource.device_model = DeviceModel::kPerHca;
  SliceContext ctx = Node();
  ctx.consumable_capacity = false;
  const DraView view = BuildDraView({p}, ctx);
  ASSERT_EQ(view.fallbacks.size(), 1u);
  EXPECT_EQ(view.fallbacks[0], (ModelFallback{"rdma/hca_shared_devices_a", DeviceModel::kPerHca,
                                              DeviceModel::kSlots}));
  EXPECT_EQ(view.devices.size(), 12u) << "rdmaHcaMax devices: every configured claim fits";
  ctx.consumable_capacity = true;
  EXPECT_TRUE(BuildDraView({p}, ctx).fallbacks.empty());
  EXPECT_EQ(BuildDraView({p}, ctx).devices.size(), 2u);
}

// kube-apiserver refuses a range whose min + step exceeds the capacity
// (validateRequestPolicyRange): one share says {min: 1} alone (docs/dra.md, "What the plugin
// does about it").
TEST(ResourceSlices, OneShareHasAValidRange) {
  EXPECT_EQ(SharesCapacity(1)["shares"]["requestPolicy"]["validRange"], json({{"min", "1"}}));
  EXPECT_EQ(SharesCapacity(2)["shares"]["requestPolicy"]["validRange"],
            json({{"min", "1"}, {"step", "1"}}));
}

TEST(ResourceSlices, PerHcaSharesEachHcaThroughConsumableCapacity) {
  const auto slices =
      RenderResourceSlices(Pool({Hca("0000:3b:00.0", 0), Hca("0000:3c:00.1", -1, false)}), Node());
  ASSERT_EQ(slices.size(), 1u);
  const json& spec = slices[0]["spec"];
  EXPECT_EQ(slices[0]["apiVersion"], "resource.k8s.io/v1");
  EXPECT_EQ(slices[0]["kind"], "ResourceSlice");
  EXPECT_EQ(slices[0]["metadata"]["generateName"], "worker-7-hca-shared-devices-a-");
  EXPECT_EQ(spec["driver"], "rdma.k8s-rdma-shared-dp.io");
  EXPECT_EQ(spec["nodeName"], "worker-7");
  EXPECT_EQ(spec["pool"], json::parse(R"({"name": "worker-7/hca-shared-devices-a",
                                          "generation": 3, "resourceSliceCount": 1})"));
  ASSERT_EQ(spec["devices"].size(), 2u);
  EXPECT_EQ(spec["devices"][0], json::parse(R"({
    "name": "hca-0000-3b-00-0",
    "allowMultipleAllocations": true,
    "attributes": {
      "resourceName": {"string": "rdma/hca_shared_devices_a"},
      "resource.kubernetes.io/pciBusID": {"string": "0000:3b:00.0"},
      "resource.kubernetes.io/pcieRoot": {"string": "pci0000:3a"},
      "resource.kubernetes.io/numaNode": {"int": 0},
      "vendor": {"string": "15b3"},
      "deviceID": {"string": "101b"},
      "kernelDriver": {"string": "mlx5_core"},
      "ifName": {"string": "ib0"},
      "linkType": {"string": "infiniband"},
      "rdmaDevice": {"string": "mlx5_0"}
    },
    "capacity": {"shares": {"value": "1000",
                            "requestPolicy": {"default": "1",
                                              "validRange": {"min": "1", "step": "1"}}}}
  })"));
  // No NUMA node (-1): no numaNode attribute. Down: a taint, never an attribute.
  const json& down = spec["devices"][1];
  EXPECT_FALSE(down["attributes"].contains("resource.kubernetes.io/numaNode"));
  EXPECT_EQ(down["taints"], json::parse(R"([{"key": "rdma.k8s-rdma-shared-dp.io/port-down",
                                              "effect": "NoSchedule"}])"));
  EXPECT_FALSE(spec["devices"][0].contains("taints"));
}

TEST(ResourceSlices, PerPoolIsOneSharedDeviceForTheWholePool) {
  const auto slices = RenderResourceSlices(
      Pool({Hca("0000:3b:00.0", 1), Hca("0000:3c:00.0", 1)}, 64), Node(DeviceModel::kPerPool));
  ASSERT_EQ(slices.size(), 1u);
  const json& devices = slices[0]["spec"]["devices"];
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0]["name"], "pool");
  EXPECT_EQ(devices[0]["capacity"]["shares"]["value"], "64");
  EXPECT_EQ(devices[0]["attributes"]["hcas"], json::parse(R"({"int": 2})"));
  EXPECT_EQ(devices[0]["attributes"]["resource.kubernetes.io/numaNode"],
            json::parse(R"({"int": 1})"));
}

TEST(ResourceSlices, LimitsHoldForLargePools) {
  std::vector<pool::PoolHca> many;
  for (int i = 0; i < 300; ++i) {
    char addr[32];
    std::snprintf(addr, sizeof(addr), "0000:%02x:%02x.%d", 0x10 + i / 64, (i / 8) % 8, i % 8);
    many.push_back(Hca(addr, i % 2));
  }
  // 64 a slice (any device may carry a taint: validation.go allows 128 only without).
  const auto slices = RenderResourceSlices(Pool(many), Node());
  ASSERT_EQ(slices.size(), 5u);
  size_t total = 0;
  for (const auto& s : slices) {
    EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], 5);
    EXPECT_LE(s["spec"]["devices"].size(), kMaxDevicesPerSlice);
    for (const auto& d : s["spec"]["devices"]) {
      EXPECT_LE(d["attributes"].size() + d["capacity"].size(), kMaxAttributesAndCapacities);
    }
    total += s["spec"]["devices"].size();
  }
  EXPECT_EQ(total, 300u);
  // Slots: one device per share, capped.
  const auto slots =
      RenderResourceSlices(Pool({Hca("0000:3b:00.0", 0)}, 5000), Node(DeviceModel::kSlots));
  size_t slot_devices = 0;
  for (const auto& s : slots) slot_devices += s["spec"]["devices"].size();
  EXPECT_EQ(slot_devices, static_cast<size_t>(kMaxSlotDevices));
  EXPECT_EQ(slots.size(), 16u);
}

TEST(ResourceSlices, AnEmptyPoolPublishesNothing) {
  EXPECT_TRUE(RenderResourceSlices(Pool({}), Node()).empty());
}

TEST(ResourceSlices, NamesAreDnsLabels) {
  EXPECT_EQ(HcaDeviceName("0000:3B:00.7"), "hca-0000-3b-00-7");
  SliceContext ctx = Node();
  ctx.node_name = "Node_1.example";
  config::ResourceConfig rc;
  rc.resource_name = "_a__b_";
  EXPECT_EQ(PoolName(ctx, rc), "node-1-example/a--b");
}

// The DRA view: per model, which devices Prepare may hand out and with which CDI IDs; one
// HCA published once however many DRA resources select it.
TEST(DraView, DevicesCdiIdsAndOneOwnerPerHca) {
  pool::PoolModel a = Pool({Hca("0000:3b:00.0", 0), Hca("0000:3c:00.0", 0, false)}, 4);
  a.resource.resource_name = "a";
  a.hcas[0].function.char_devices = {"uverbs0", "umad0"};
  pool::PoolModel b = Pool({Hca("0000:3c:00.0", 0), Hca("0000:3d:00.0", 1)}, 2);
  b.resource.resource_name = "b";
  b.resource.device_model = DeviceModel::kSlots;
  SliceContext ctx = Node();
  ctx.driver = "rdma.example.com";
  const DraView view = BuildDraView({a, b}, ctx);
  ASSERT_EQ(view.pools.size(), 2u);
  EXPECT_EQ(view.pools[0].pool_name, "worker-7/a");
  ASSERT_EQ(view.devices.size(), 4u);  // 2 per-HCA devices of a, 2 slots of b
  const DraDevice& first = view.devices.at({"worker-7/a", "hca-0000-3b-00-0"});
  EXPECT_EQ(first.cdi_ids, std::vector<std::string>{"rdma.example.com/hca=hca-0000-3b-00-0"});
  EXPECT_TRUE(first.healthy);
  const DraDevice& down = view.devices.at({"worker-7/a", "hca-0000-3c-00-0"});
  EXPECT_FALSE(down.healthy);
  EXPECT_EQ(down.health_message, "mlx5_0 port 1 DOWN");
  // b lost 0000:3c:00.0 to a: its slots carry only the HCA it owns.
  const DraDevice& slot = view.devices.at({"worker-7/b", "slot-1"});
  EXPECT_EQ(slot.cdi_ids, std::vector<std::string>{"rdma.example.com/hca=hca-0000-3d-00-0"});
  EXPECT_THAT(view.problems,
              ::testing::ElementsAre(::testing::HasSubstr(
                  "rdma/b: HCA 0000:3c:00.0 is already published by rdma/a; left out")));
  ASSERT_EQ(view.cdi_specs.size(), 3u);
  EXPECT_EQ(view.cdi_specs[0].file_name, "k8s-rdma-shared-dp_dra_hca-0000-3b-00-0.json");
  const json spec = json::parse(view.cdi_specs[0].json);
  EXPECT_EQ(spec["kind"], "rdma.example.com/hca");
  EXPECT_EQ(spec["devices"][0]["containerEdits"]["deviceNodes"].size(), 3u);  // + rdma_cm
}

// An entry with memlock has the hook in each of its HCAs' CDI devices (the device's own
// edits: a claim gets it with any of the pool's HCAs); none without an installed hook or
// without the option (docs/memlock.md, "What the plugin does"). Each device also names its
// entry's resource, for extended-resource claims.
TEST(DraView, MemlockPutsTheHookInEachHcasSpec) {
  pool::PoolModel a = Pool({Hca("0000:3b:00.0", 0)}, 4);
  a.resource.memlock = 1ull << 30;
  pool::PoolModel b = Pool({Hca("0000:3c:00.0", 0)}, 4);
  b.resource.resource_name = "b";
  SliceContext ctx = Node();
  ctx.memlock_hook = "/var/lib/k8s-rdma-shared-dp/bin/rdmadp-memlock-hook";
  const DraView view = BuildDraView({a, b}, ctx);
  ASSERT_EQ(view.cdi_specs.size(), 2u);
  const json with = json::parse(view.cdi_specs[0].json)["devices"][0]["containerEdits"];
  EXPECT_EQ(with["hooks"], json::parse(R"([{"hookName": "createRuntime",
                             "path": "/var/lib/k8s-rdma-shared-dp/bin/rdmadp-memlock-hook",
                             "args": ["rdmadp-memlock-hook", "1073741824"]}])"));
  EXPECT_FALSE(
      json::parse(view.cdi_specs[1].json)["devices"][0]["containerEdits"].contains("hooks"));
  ctx.memlock_hook.clear();
  EXPECT_FALSE(json::parse(BuildDraView({a}, ctx).cdi_specs[0].json)["devices"][0]["containerEdits"]
                   .contains("hooks"));
  EXPECT_EQ(view.devices.at({"worker-7/hca-shared-devices-a", "hca-0000-3b-00-0"}).resource,
            "rdma/hca_shared_devices_a");
}

TEST(DraView, PrepareChecksUidAllocationAndDevices) {
  SliceContext ctx = Node();
  ctx.driver = "rdma.example.com";
  const DraView view = BuildDraView({Pool({Hca("0000:3b:00.0", 0)}, 4)}, ctx);
  json claim = json::parse(R"({"metadata": {"namespace": "ns", "name": "c", "uid": "u1"},
      "status": {"allocation": {"devices": {"results": [
        {"request": "nic/ib", "driver": "rdma.example.com", "pool": "worker-7/hca-shared-devices-a",
         "device": "hca-0000-3b-00-0", "shareID": "s1"},
        {"request": "gpu", "driver": "gpu.example.com", "pool": "p", "device": "gpu-0"}]}}}})");
  auto ok = PrepareClaim(claim, "u1", view);
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_EQ(ok->size(), 1u);
  EXPECT_EQ((*ok)[0].request_names, std::vector<std::string>{"nic"});  // the subrequest's parent
  EXPECT_EQ((*ok)[0].share_id, "s1");
  EXPECT_THAT(std::string(PrepareClaim(claim, "u2", view).status().message()),
              ::testing::HasSubstr("has UID u1, the kubelet asked for u2"));
  json gone = claim;
  gone["status"]["allocation"]["devices"]["results"][0]["device"] = "hca-0000-99-00-0";
  EXPECT_THAT(std::string(PrepareClaim(gone, "u1", view).status().message()),
              ::testing::HasSubstr("is not published by this node"));
  json unallocated = claim;
  unallocated.erase("status");
  EXPECT_THAT(std::string(PrepareClaim(unallocated, "u1", view).status().message()),
              ::testing::HasSubstr("is not allocated"));
}

// Issue 55: before the first capability probe answered, an "auto" pool is not published and
// Prepare knew the configured model only: a claim on a device of another model (adopted from
// before a restart, or allocated before an upgrade changed the model) failed until then. Now
// every model's names prepare, before the probe and after it whichever model it chose, each
// to the HCAs its name says; names no model gives still fail.
TEST(DraView, PrepareServesEveryModelsNamesBeforeAndAfterTheProbe) {
  pool::PoolModel p = Pool({Hca("0000:3b:00.0", 0), Hca("0000:3c:00.0", 0)}, 4);
  p.resource.device_model = DeviceModel::kAuto;
  SliceContext ctx = Node();
  ctx.driver = "rdma.example.com";
  auto claim = [](const std::string& device) {
    json c = json::parse(R"({"metadata": {"namespace": "ns", "name": "c", "uid": "u1"},
        "status": {"allocation": {"devices": {"results": [
          {"request": "hca", "driver": "rdma.example.com",
           "pool": "worker-7/hca-shared-devices-a"}]}}}})");
    c["status"]["allocation"]["devices"]["results"][0]["device"] = device;
    return c;
  };
  const std::vector<std::string> both = {"rdma.example.com/hca=hca-0000-3b-00-0",
                                         "rdma.example.com/hca=hca-0000-3c-00-0"};
  for (const std::optional<bool> probe :
       {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)}) {
    ctx.consumable_capacity = probe;
    const DraView view = BuildDraView({p}, ctx);
    const std::string when = !probe ? "before the probe" : *probe ? "perHca" : "slots";
    EXPECT_EQ(view.pools.size(), probe ? 1u : 0u) << when;
    for (const auto& [device, ids] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"slot-0", both},
             {"slot-3", both},
             {"pool", both},
             {"hca-0000-3c-00-0", {"rdma.example.com/hca=hca-0000-3c-00-0"}}}) {
      auto prepared = PrepareClaim(claim(device), "u1", view);
      ASSERT_TRUE(prepared.ok()) << when << " " << device << ": " << prepared.status();
      ASSERT_EQ(prepared->size(), 1u);
      EXPECT_EQ((*prepared)[0].cdi_ids, ids) << when << " " << device;
      EXPECT_EQ((*prepared)[0].device, device);
      EXPECT_EQ((*prepared)[0].published->functions->size(), ids.size()) << when << " " << device;
    }
    for (const char* never : {"slot-4", "slot-03", "slot-", "slot-+1", "hca-0000-99-00-0"}) {
      EXPECT_THAT(std::string(PrepareClaim(claim(never), "u1", view).status().message()),
                  ::testing::HasSubstr("is not published by this node"))
          << when << " " << never;
    }
  }
}

// A claim answer of the wrong shape (a proxy's HTML page, a field of the wrong type) threw
// nlohmann::json::type_error out of the Prepare worker: the process aborted. Every one is
// now a clear error for that claim (docs/reliability.md, "Crash, hang, flood").
TEST(DraView, PrepareOfAMalformedClaimIsAnErrorNotACrash) {
  SliceContext ctx = Node();
  ctx.driver = "rdma.example.com";
  const DraView view = BuildDraView({Pool({Hca("0000:3b:00.0", 0)}, 4)}, ctx);
  const char* cases[] = {
      "<html>proxy error</html>",
      "[]",
      "42",
      R"({"metadata": 7})",
      R"({"metadata": {"uid": 7, "name": ["x"]}})",
      R"({"metadata": {"uid": "u1"}, "status": 3})",
      R"({"metadata": {"uid": "u1"}, "status": {"allocation": {"devices": {"results": 9}}}})",
      R"({"metadata": {"uid": "u1"}, "status": {"allocation": {"devices": {"results": [
          7, "x", null, {"driver": 1, "pool": [], "device": {}},
          {"driver": "rdma.example.com", "pool": 5, "device": "hca-0000-3b-00-0"}]}}}})",
      R"({"metadata": {"uid": "u1"}, "status": {"allocation": {"devices": {"results": [
          {"driver": "rdma.example.com", "pool": "worker-7/hca-shared-devices-a",
           "device": "hca-0000-3b-00-0", "request": 1, "shareID": {}}]}}}})",
  };
  for (const char* text : cases) {
    const json claim = json::parse(text, nullptr, false);
    absl::StatusOr<std::vector<PreparedDevice>> r;
    ASSERT_NO_THROW(r = PrepareClaim(claim, "u1", view)) << text;
    if (r.ok()) {
      // Only the last case is well-formed enough: its wrong-typed optional fields read as
      // absent.
      ASSERT_EQ(r->size(), 1u) << text;
      EXPECT_EQ((*r)[0].share_id, "");
    } else {
      EXPECT_FALSE(r.status().message().empty()) << text;
    }
  }
}

// A stand-in for kube-apiserver on 127.0.0.1: plain HTTP (the REST client is libcurl, which
// takes an http:// server as well), every request answered 200 with the body set last.
class CannedApiServer {
 public:
  CannedApiServer() {
    listener_.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (!listener_.Valid() ||
        ::bind(listener_.Get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listener_.Get(), 16) != 0 ||
        ::getsockname(listener_.Get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1: " << std::strerror(errno);
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~CannedApiServer() {
    if (listener_.Valid()) ::shutdown(listener_.Get(), SHUT_RDWR);  // ends the accept()
    if (thread_.joinable()) thread_.join();
  }
  CannedApiServer(const CannedApiServer&) = delete;
  CannedApiServer& operator=(const CannedApiServer&) = delete;

  void Answer(std::string body) {
    std::lock_guard lock(mu_);
    body_ = std::move(body);
  }
  std::string url() const { return Cat("http://127.0.0.1:", port_); }

 private:
  void Serve() {
    while (true) {
      UniqueFd conn(::accept4(listener_.Get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn.Valid()) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        return;  // shut down
      }
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(conn.Get(), buf, sizeof buf, 0);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      std::string body;
      {
        std::lock_guard lock(mu_);
        body = body_;
      }
      const std::string answer =
          Cat("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
              "\r\nConnection: close\r\n\r\n", body);
      size_t done = 0;
      while (done < answer.size()) {
        const ssize_t n =
            ::send(conn.Get(), answer.data() + done, answer.size() - done, MSG_NOSIGNAL);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
    }
  }

  UniqueFd listener_;
  int port_ = 0;
  std::mutex mu_;
  std::string body_ = "{}";
  std::thread thread_;
};

// Prepare as the DRA server's worker runs it: a REST client of the canned server, a view
// publishing one HCA (perHca), metadata directories in a temp dir.
struct PrepareRig {
  testing::TempDir tmp;
  CannedApiServer api;
  std::unique_ptr<kube::RestClient> client;
  DraViewPtr view;
  MetadataDirs dirs{"rdma.example.com", tmp.path() + "/plugin", tmp.path() + "/cdi"};
  std::atomic<bool> cancelled{false};

  PrepareRig() {
    std::filesystem::create_directories(dirs.data_dir);
    std::filesystem::create_directories(dirs.cdi_dir);
    std::ofstream(tmp.path() + "/token") << "token";
    // A proxy the environment names must not take the test's requests.
    ::setenv("no_proxy", "127.0.0.1", 1);
    kube::ApiConfig api_config;
    api_config.server = api.url();
    api_config.ca_file = tmp.path() + "/ca.crt";  // not read over http, but a regular file
    std::ofstream(api_config.ca_file) << "";
    api_config.token_file = tmp.path() + "/token";
    auto made = kube::RestClient::Create(api_config);
    EXPECT_TRUE(made.ok()) << made.status();
    if (made.ok()) client = std::move(*made);
    SliceContext ctx = Node();
    ctx.driver = "rdma.example.com";
    view = std::make_shared<const DraView>(BuildDraView({Pool({Hca("0000:3b:00.0", 0)}, 4)}, ctx));
  }

  // The kubelet's Prepare of one claim; its answer for that claim.
  drav1::NodePrepareResourceResponse Run(const std::string& ns, const std::string& name,
                                         const std::string& uid) {
    drav1::NodePrepareResourcesRequest req;
    auto* claim = req.add_claims();
    claim->set_namespace_(ns);
    claim->set_name(name);
    claim->set_uid(uid);
    const auto resp =
        Prepare(req, view, client.get(),
                std::chrono::system_clock::now() + std::chrono::seconds(30), cancelled, dirs);
    EXPECT_EQ(resp.claims().count(uid), 1u);
    return resp.claims().count(uid) != 0 ? resp.claims().at(uid)
                                         : drav1::NodePrepareResourceResponse();
  }
};

// A ResourceClaim as the API server returns it: `results` results of our driver, each its
// own request, all on the rig's HCA (shares of it).
json ClaimAnswer(const std::string& ns, const std::string& name, const std::string& uid,
                 int results) {
  json list = json::array();
  for (int i = 0; i < results; ++i) {
    list.push_back({{"request", Cat("r", i)},
                    {"driver", "rdma.example.com"},
                    {"pool", "worker-7/hca-shared-devices-a"},
                    {"device", "hca-0000-3b-00-0"},
                    {"shareID", Cat("s", i)}});
  }
  json claim = json::object();
  claim["metadata"] = {{"namespace", ns}, {"name", name}, {"uid", uid}};
  claim["status"]["allocation"]["devices"]["results"] = list;
  return claim;
}

// The names in `dir`; none when it does not exist.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    out.push_back(e.path().filename());
  }
  return out;
}

std::vector<std::string> CdiIds(const drav1::NodePrepareResourceResponse& out, int device) {
  const auto& ids = out.devices(device).cdi_device_ids();
  return std::vector<std::string>(ids.begin(), ids.end());
}

// Prepare checked the answer's UID, not its namespace and name, and named the metadata after
// the answer: a Prepare of default/c1 that the API server answered with victim-ns/victim
// (same UID) overwrote the victim's metadata.json. A namespace/name that is not the one asked
// for is now that claim's error, and nothing is written (docs/dra.md, "Prepare"). Fails on
// the old code: the answer has no error and victim-ns_victim/ is written.
TEST(DraPrepare, AnAnswerNamingAnotherClaimIsThatClaimsError) {
  PrepareRig rig;
  ASSERT_NE(rig.client, nullptr);
  rig.api.Answer(ClaimAnswer("victim-ns", "victim", "u1", 1).dump());
  const auto wrong = rig.Run("default", "c1", "u1");
  EXPECT_THAT(wrong.error(), ::testing::HasSubstr("default/c1"));
  EXPECT_THAT(wrong.error(), ::testing::HasSubstr("answered with ResourceClaim victim-ns/victim"));
  EXPECT_EQ(wrong.devices_size(), 0);
  EXPECT_THAT(Entries(rig.dirs.data_dir + "/dra-device-metadata"), ::testing::IsEmpty());
  EXPECT_THAT(Entries(rig.dirs.cdi_dir), ::testing::IsEmpty());
  // Only the namespace wrong, only the name wrong: the same.
  rig.api.Answer(ClaimAnswer("other", "c1", "u1", 1).dump());
  EXPECT_THAT(rig.Run("default", "c1", "u1").error(),
              ::testing::HasSubstr("answered with ResourceClaim other/c1"));
  rig.api.Answer(ClaimAnswer("default", "c2", "u1", 1).dump());
  EXPECT_THAT(rig.Run("default", "c1", "u1").error(),
              ::testing::HasSubstr("answered with ResourceClaim default/c2"));
  EXPECT_THAT(Entries(rig.dirs.cdi_dir), ::testing::IsEmpty());
  // The claim asked for prepares, with its metadata.
  rig.api.Answer(ClaimAnswer("default", "c1", "u1", 1).dump());
  const auto right = rig.Run("default", "c1", "u1");
  EXPECT_EQ(right.error(), "");
  ASSERT_EQ(right.devices_size(), 1);
  EXPECT_THAT(CdiIds(right, 0), ::testing::Contains("rdma.example.com/metadata=u1_r0"));
}

// A 300 KB claim name was echoed whole in the claim's error and the log (#18 of the
// hardening round at 050f44e): 600 KB of log for two claims. At most 253 bytes of it now.
TEST(DraPrepare, AHugeClaimNameIsEchoedCapped) {
  PrepareRig rig;
  ASSERT_NE(rig.client, nullptr);
  const std::string huge(300000, 'n');
  const auto answer = rig.Run("default", huge, "u1");
  EXPECT_THAT(answer.error(),
              ::testing::HasSubstr(Cat("default/", std::string(253, 'n'), "... (300000 bytes): ")));
  EXPECT_LT(answer.error().size(), 600u);
}

// Nothing bounded a claim's results: one Prepare answered with 2,000 results wrote 2,000 CDI
// spec files. kube-apiserver stores at most 32 results in a claim (AllocationResultsMaxSize,
// pkg/apis/resource/types.go); an answer with more is that claim's error, before anything is
// written (docs/dra.md, "Prepare"). Fails on the old code: 33 results prepare without an
// error and write 33 specs.
TEST(DraPrepare, MoreResultsThanTheApiServerStoresAreThatClaimsError) {
  PrepareRig rig;
  ASSERT_NE(rig.client, nullptr);
  rig.api.Answer(ClaimAnswer("default", "c1", "u1", 33).dump());
  const auto over = rig.Run("default", "c1", "u1");
  EXPECT_THAT(over.error(), ::testing::HasSubstr("33 results"));
  EXPECT_EQ(over.devices_size(), 0);
  EXPECT_THAT(Entries(rig.dirs.cdi_dir), ::testing::IsEmpty());
  rig.api.Answer(ClaimAnswer("default", "c1", "u1", 32).dump());
  const auto most = rig.Run("default", "c1", "u1");
  EXPECT_EQ(most.error(), "");
  EXPECT_EQ(most.devices_size(), 32);
  EXPECT_EQ(Entries(rig.dirs.cdi_dir).size(), 32u);
}

}  // namespace
}  // namespace rdmadp::dra
