// The DRA rendering of pool models: exact ResourceSlice content per device model, and the
// API server's limits kept however large the pool (the schema itself is checked against
// the official Kubernetes one in test/manifests/dra_slices.mjs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "pkg/dra/dra_view.h"
#include "pkg/dra/resource_slices.h"
#include "test/support/hca_fixture.h"

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

// Issue 31 item 1: a claim answer of the wrong shape (a proxy's HTML page, a field of the
// wrong type) threw nlohmann::json::type_error out of the Prepare worker: the process
// aborted. Every one is now a clear error for that claim.
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

}  // namespace
}  // namespace rdmadp::dra
