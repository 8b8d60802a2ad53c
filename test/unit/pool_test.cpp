#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "pkg/pool/pod_env.h"
#include "pkg/pool/pool_model.h"
#include "pkg/pool/selector.h"
#include "pkg/pool/snapshot.h"
#include "pkg/text/cat.h"

namespace rdmadp::pool {
namespace {

using ::testing::ElementsAre;

sysfs::PciFunction Fn(std::string address, std::string vendor, std::string device,
                      std::string driver, std::string ifname, std::string link_type) {
  sysfs::PciFunction fn;
  fn.address = std::move(address);
  fn.vendor = std::move(vendor);
  fn.device = std::move(device);
  fn.driver = std::move(driver);
  fn.if_name = std::move(ifname);
  fn.link_type = std::move(link_type);
  fn.rdma_capable = true;
  fn.rdma_devices = {{"mlx5_x", {{1, sysfs::PortState::kActive}}}};
  fn.char_devices = {"umad" + fn.address.substr(5, 2), "uverbs" + fn.address.substr(5, 2)};
  return fn;
}

// The Go plugin's own selector test (reference §4): five devices, expects dev1 and dev2.
TEST(Selector, GoPluginTableAndOrSemantics) {
  config::Selectors s;
  s.vendors = {"15b3", "8080"};
  s.device_ids = {"1017", "2031"};
  s.drivers = {"mlx5_core", "igb"};
  s.if_names = {"enp2s0f0", "enp2s0f1", "enp4s0f0"};
  s.link_types = {"ether"};
  std::vector<sysfs::PciFunction> devs = {
      Fn("0000:01:00.0", "15b3", "1017", "mlx5_core", "enp2s0f0", "ether"),
      Fn("0000:02:00.0", "8080", "2031", "igb", "enp2s0f1", "ether"),
      Fn("0000:03:00.0", "15b3", "1017", "mlx5_core", "enp3s0f0", "ether"),  // ifName
      Fn("0000:04:00.0", "15b3", "1018", "mlx5_core", "enp4s0f0", "ether"),  // deviceID
      Fn("0000:05:00.0", "15b3", "1017", "mlx5_core", "enp2s0f0", "infiniband"),
  };
  std::vector<std::string> picked;
  for (const auto& d : devs) {
    if (Matches(s, d)) picked.push_back(d.address);
  }
  EXPECT_THAT(picked, ElementsAre("0000:01:00.0", "0000:02:00.0"));
  EXPECT_TRUE(Matches(config::Selectors{}, devs[4]));  // no selector: everything
}

config::ResourceConfig Resource(int64_t slots, config::Selectors s = {}) {
  config::ResourceConfig rc;
  rc.resource_name = "hca";
  rc.rdma_hca_max = slots;
  rc.selectors = std::move(s);
  return rc;
}

TEST(Snapshot, AdvertisesSlotsWithTopologyAndAllocateContent) {
  sysfs::NodeInventory inv;
  inv.functions = {Fn("0000:01:00.0", "15b3", "1017", "mlx5_core", "ib0", "infiniband"),
                   Fn("0000:02:00.0", "15b3", "1017", "mlx5_core", "ib1", "infiniband")};
  inv.functions[0].numa_node = 1;
  inv.functions[1].numa_node = 0;
  auto snap = PoolSnapshot::Build(Resource(3), inv);
  const v1beta1::ListAndWatchResponse list = snap->ListResponse();
  ASSERT_EQ(list.devices_size(), 3);
  const auto& d2 = list.devices(2);
  EXPECT_EQ(d2.id(), "2");
  EXPECT_EQ(d2.health(), "Healthy");
  ASSERT_EQ(d2.topology().nodes_size(), 2);
  EXPECT_EQ(d2.topology().nodes(0).id(), 0);
  EXPECT_EQ(d2.topology().nodes(1).id(), 1);
  std::vector<std::string> paths;
  for (const auto& spec : snap->container_response().devices()) {
    EXPECT_EQ(spec.container_path(), spec.host_path());
    EXPECT_EQ(spec.permissions(), "rwm");
    paths.push_back(spec.host_path());
  }
  EXPECT_THAT(paths, ElementsAre("/dev/infiniband/umad01", "/dev/infiniband/uverbs01",
                                 "/dev/infiniband/umad02", "/dev/infiniband/uverbs02",
                                 "/dev/infiniband/rdma_cm"));
}

TEST(Snapshot, EmptyPoolAdvertisesNothingAndNonRdmaIsExcluded) {
  sysfs::NodeInventory inv;
  inv.functions = {Fn("0000:01:00.0", "8086", "1521", "igb", "eno1", "ether")};
  inv.functions[0].rdma_capable = false;
  auto snap = PoolSnapshot::Build(Resource(1000), inv);
  EXPECT_EQ(snap->ListResponse().devices_size(), 0);
  EXPECT_EQ(snap->container_response().devices_size(), 0);
  EXPECT_FALSE(snap->HasDeviceId("0"));
}

TEST(Snapshot, HealthFollowsPorts) {
  sysfs::NodeInventory inv;
  inv.functions = {Fn("0000:01:00.0", "15b3", "1017", "mlx5_core", "ib0", "infiniband"),
                   Fn("0000:02:00.0", "15b3", "1017", "mlx5_core", "ib1", "infiniband")};
  inv.functions[0].rdma_devices[0].ports[0].state = sysfs::PortState::kDown;
  EXPECT_TRUE(PoolSnapshot::Build(Resource(2), inv)->advertised().healthy);  // one is enough
  inv.functions[1].rdma_devices[0].ports[0].state = sysfs::PortState::kInit;
  auto down = PoolSnapshot::Build(Resource(2), inv);
  EXPECT_FALSE(down->advertised().healthy);
  EXPECT_EQ(down->ListResponse().devices(1).health(), "Unhealthy");
  inv.functions[1].rdma_devices[0].ports.clear();  // no ports reported counts as usable
  EXPECT_TRUE(PoolSnapshot::Build(Resource(2), inv)->advertised().healthy);
}

// The front-end-neutral model: per-HCA health with the reason, topology, shares.
TEST(PoolModel, PerHcaHealthReasonTopologyAndShares) {
  sysfs::NodeInventory inv;
  inv.functions = {Fn("0000:01:00.0", "15b3", "1017", "mlx5_core", "ib0", "infiniband"),
                   Fn("0000:02:00.0", "15b3", "1017", "mlx5_core", "ib1", "infiniband"),
                   Fn("0000:03:00.0", "15b3", "1017", "mlx5_core", "ib2", "infiniband")};
  inv.functions[0].numa_node = 1;
  inv.functions[0].pcie_root = "pci0000:00";
  inv.functions[1].numa_node = 0;
  inv.functions[1].rdma_devices[0].ports = {{1, sysfs::PortState::kDown},
                                            {2, sysfs::PortState::kInit}};
  inv.functions[2].rdma_capable = false;  // never in a pool
  const PoolModel model = SelectPool(Resource(7), inv);
  ASSERT_EQ(model.hcas.size(), 2u);
  EXPECT_EQ(model.shares(), 7);
  EXPECT_TRUE(model.hcas[0].healthy);
  EXPECT_EQ(model.hcas[0].health_reason, "");
  EXPECT_EQ(model.hcas[0].function.pcie_root, "pci0000:00");
  EXPECT_FALSE(model.hcas[1].healthy);
  EXPECT_EQ(model.hcas[1].health_reason,
            "mlx5_x port 1 DOWN, mlx5_x port 2 INIT (the link is up but the port is not active "
            "yet: is a subnet manager, opensm or UFM, running on this fabric?)");
  EXPECT_TRUE(model.healthy());
  EXPECT_THAT(model.NumaNodes(), ElementsAre(0, 1));
  // The device-plugin rendering is built from the same model.
  const auto snap = PoolSnapshot::Build(Resource(7), inv);
  EXPECT_EQ(snap->model(), model);
  EXPECT_THAT(snap->advertised().numa_nodes, ElementsAre(0, 1));
}

TEST(Snapshot, AllUnhealthyCopiesWithEverySlotUnhealthy) {
  sysfs::NodeInventory inv;
  inv.functions = {Fn("0000:01:00.0", "15b3", "1017", "mlx5_core", "ib0", "infiniband")};
  auto healthy = PoolSnapshot::Build(Resource(3), inv);
  auto marked = PoolSnapshot::AllUnhealthy(healthy);
  EXPECT_TRUE(healthy->advertised().healthy);  // the original is untouched
  EXPECT_FALSE(marked->advertised().healthy);
  const v1beta1::ListAndWatchResponse list = marked->ListResponse();
  ASSERT_EQ(list.devices_size(), 3);
  for (const auto& d : list.devices()) EXPECT_EQ(d.health(), "Unhealthy");
  EXPECT_EQ(healthy->ListResponse().devices(0).health(), "Healthy");
  EXPECT_EQ(marked->container_response().DebugString(),
            healthy->container_response().DebugString());
  EXPECT_EQ(PoolSnapshot::AllUnhealthy(marked), marked);  // already so: no copy
}

TEST(Snapshot, DeviceIdsAreExactDecimals) {
  sysfs::NodeInventory inv;
  inv.functions = {Fn("0000:01:00.0", "15b3", "1017", "mlx5_core", "ib0", "infiniband")};
  auto snap = PoolSnapshot::Build(Resource(10), inv);
  EXPECT_TRUE(snap->HasDeviceId("0"));
  EXPECT_TRUE(snap->HasDeviceId("9"));
  EXPECT_FALSE(snap->HasDeviceId("10"));
  EXPECT_FALSE(snap->HasDeviceId("-1"));
  EXPECT_FALSE(snap->HasDeviceId("01"));
  EXPECT_FALSE(snap->HasDeviceId("x"));
  EXPECT_FALSE(snap->HasDeviceId(""));
}

TEST(Snapshot, AdvertisedComparisonIgnoresInvisibleDetails) {
  sysfs::NodeInventory a;
  a.functions = {Fn("0000:01:00.0", "15b3", "1017", "mlx5_core", "ib0", "infiniband")};
  sysfs::NodeInventory b = a;
  b.functions[0].driver = "mlx5_core_renamed";  // not visible to the kubelet or containers
  EXPECT_EQ(PoolSnapshot::Build(Resource(4), a)->advertised(),
            PoolSnapshot::Build(Resource(4), b)->advertised());
  b.functions[0].char_devices.push_back("issm01");
  EXPECT_NE(PoolSnapshot::Build(Resource(4), a)->advertised(),
            PoolSnapshot::Build(Resource(4), b)->advertised());
}

TEST(Snapshot, LargestPoolStaysUnderTheKubeletLimit) {
  sysfs::NodeInventory inv;
  for (int i = 0; i < 4; ++i) {
    inv.functions.push_back(
        Fn("0000:0" + std::to_string(i) + ":00.0", "15b3", "1017", "mlx5_core", "ib0", "ether"));
    inv.functions.back().numa_node = i;
  }
  auto snap = PoolSnapshot::Build(Resource(config::kMaxRdmaHcaMax), inv);
  EXPECT_FALSE(snap->topology_dropped());
  EXPECT_LT(snap->ListResponse().ByteSizeLong(), kKubeletMaxMessageBytes);
  for (int i = 4; i < 16; ++i) {  // a 16-NUMA-node pool would not fit: topology goes
    inv.functions.push_back(inv.functions[0]);
    inv.functions.back().numa_node = i;
  }
  auto big = PoolSnapshot::Build(Resource(config::kMaxRdmaHcaMax), inv);
  EXPECT_TRUE(big->topology_dropped());
  EXPECT_LT(big->ListResponse().ByteSizeLong(), kKubeletMaxMessageBytes);
}

// Every Allocate answer says which HCAs the container got, in the SR-IOV device plugin's
// variables (docs/pod-env.md, "The variables"), parsed here by a real JSON parser.
TEST(PodEnv, AddressesInPciOrderAndInfoKeyedByAddress) {
  sysfs::NodeInventory inv;
  inv.functions = {Fn("0000:01:00.0", "15b3", "1017", "mlx5_core", "ib0", "infiniband"),
                   Fn("0000:02:00.0", "15b3", "1017", "mlx5_core", "ib1", "infiniband")};
  inv.functions[0].rdma_devices[0].name = "mlx5_0";
  inv.functions[0].numa_node = 1;
  inv.functions[0].pcie_root = "pci0000:00";
  inv.functions[0].char_devices = {"issm0", "umad0", "uverbs0"};
  inv.functions[1].rdma_devices = {
      {"mlx5_1", {{1, sysfs::PortState::kActive}, {2, sysfs::PortState::kDown}}}};
  const auto snap = PoolSnapshot::Build(Resource(4), inv);
  const auto& envs = snap->container_response().envs();
  const std::string name = "PCIDEVICE_RDMA_HCA";
  EXPECT_EQ(PciDeviceEnvName("rdma/hca_shared_devices_a"), "PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A");
  EXPECT_EQ(PciDeviceEnvName("example.com/rdma-pool.1"), "PCIDEVICE_EXAMPLE_COM_RDMA_POOL_1");
  ASSERT_EQ(envs.size(), 2u);
  EXPECT_EQ(envs.at(name), "0000:01:00.0,0000:02:00.0");
  const nlohmann::json info = nlohmann::json::parse(envs.at(name + "_INFO"));
  ASSERT_EQ(info.size(), 2u);
  const auto& a = info.at("0000:01:00.0");
  EXPECT_EQ(a.at("generic").at("deviceID"), "0000:01:00.0");
  EXPECT_EQ(a.at("rdma"), nlohmann::json({{"issm", "/dev/infiniband/issm0"},
                                          {"umad", "/dev/infiniband/umad0"},
                                          {"uverbs", "/dev/infiniband/uverbs0"},
                                          {"rdma_cm", "/dev/infiniband/rdma_cm"},
                                          {"rdma_dev", "mlx5_0"}}));
  EXPECT_EQ(a.at("ibdev"), "mlx5_0");
  EXPECT_EQ(a.at("netdev"), "ib0");
  EXPECT_EQ(a.at("numaNode"), 1);
  EXPECT_EQ(a.at("pcieRoot"), "pci0000:00");
  EXPECT_EQ(a.at("linkLayer"), "InfiniBand");  // the kernel's word, as ibv_devinfo prints it
  const auto& ports = info.at("0000:02:00.0").at("ports");
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[1], nlohmann::json({{"rdmaDevice", "mlx5_1"}, {"port", 2}, {"state", "DOWN"}}));
  // The answer follows the pool: a port going down changes the next snapshot's _INFO.
  inv.functions[0].rdma_devices[0].ports[0].state = sysfs::PortState::kDown;
  const auto next = PoolSnapshot::Build(Resource(4), inv, nullptr, snap);
  ASSERT_NE(next, snap);
  EXPECT_THAT(next->container_response().envs().at(name + "_INFO"), ::testing::HasSubstr("DOWN"));
}

TEST(PodEnv, AnEmptyPoolSetsNothingAndAHugeOneKeepsOnlyTheList) {
  sysfs::NodeInventory inv;
  EXPECT_TRUE(PoolSnapshot::Build(Resource(4), inv)->container_response().envs().empty());
  // A pool of 64 dual-port HCAs keeps its whole _INFO.
  for (int i = 0; i < 64; ++i) {
    char address[16];
    std::snprintf(address, sizeof(address), "0000:%02x:00.0", i);
    inv.functions.push_back(Fn(address, "15b3", "1017", "mlx5_core", "ib0", "infiniband"));
    inv.functions.back().rdma_devices[0].ports.push_back({2, sysfs::PortState::kActive});
  }
  const auto snap64 = PoolSnapshot::Build(Resource(4), inv);
  const auto& sixty_four = snap64->container_response().envs();
  ASSERT_EQ(sixty_four.count("PCIDEVICE_RDMA_HCA_INFO"), 1u);
  EXPECT_EQ(nlohmann::json::parse(sixty_four.at("PCIDEVICE_RDMA_HCA_INFO")).size(), 64u);
  std::cout << "[measured] _INFO for 64 dual-port HCAs: "
            << sixty_four.at("PCIDEVICE_RDMA_HCA_INFO").size() << " bytes\n";
  inv.functions.clear();
  for (int i = 0; i < 512; ++i) {
    char address[16];
    std::snprintf(address, sizeof(address), "0000:%02x:%02x.%d", i / 32, i % 32, 0);
    inv.functions.push_back(Fn(address, "15b3", "1017", "mlx5_core", "ib0", "infiniband"));
  }
  const auto huge = PoolSnapshot::Build(Resource(4), inv);
  const auto& envs = huge->container_response().envs();
  EXPECT_EQ(envs.count("PCIDEVICE_RDMA_HCA"), 1u);
  EXPECT_EQ(envs.count("PCIDEVICE_RDMA_HCA_INFO"), 0u) << "over MAX_ARG_STRLEN";
}

// Above kMaxInfoBytes the _INFO variable was dropped without a word (and documented as
// "about 300 HCAs", where the fake node's HCAs stop at 238). The snapshot now
// says why, naming the pool, for the device-plugin front end to log once (front_end.cpp
// SayIfInfoLeftOut). The pool is n single-port InfiniBand HCAs as test/support/fake_node.h's
// FakeNode::ConnectX(i) lays them out and the scanner reads them: the figure in
// docs/pod-env.md. Fails on the old code: PoolSnapshot had no info_left_out().
TEST(PodEnv, InfoLeftOutIsSaidNamingThePool) {
  auto connectx_node = [](int n) {
    sysfs::NodeInventory inv;
    for (int i = 0; i < n; ++i) {
      char address[32];  // room for any int: -Wformat-truncation
      std::snprintf(address, sizeof(address), "0000:%02x:00.0", 0x10 + i);
      sysfs::PciFunction fn = Fn(address, "15b3", "1017", "mlx5_core", Cat("ib", i), "infiniband");
      fn.numa_node = 0;
      fn.pcie_root = "pci0000:00";
      fn.rdma_devices = {
          {Cat("mlx5_", i), {{1, sysfs::PortState::kActive, sysfs::GidTable::kHasGid}}}};
      fn.char_devices = {Cat("issm", i), Cat("umad", i), Cat("uverbs", i)};
      inv.functions.push_back(std::move(fn));
    }
    return inv;
  };
  const auto fits = PoolSnapshot::Build(Resource(4), connectx_node(238));
  const auto& envs = fits->container_response().envs();
  ASSERT_EQ(envs.count("PCIDEVICE_RDMA_HCA_INFO"), 1u);
  EXPECT_LE(envs.at("PCIDEVICE_RDMA_HCA_INFO").size(), kMaxInfoBytes);
  EXPECT_EQ(fits->info_left_out(), "");

  std::cout << "[measured] _INFO for 238 single-port ConnectX HCAs: "
            << envs.at("PCIDEVICE_RDMA_HCA_INFO").size() << " bytes\n";

  const sysfs::NodeInventory node239 = connectx_node(239);
  const size_t bytes = DeviceInfoJson(node239.functions).size();  // 102717 when written
  EXPECT_GT(bytes, kMaxInfoBytes);
  const auto over = PoolSnapshot::Build(Resource(4), node239);
  EXPECT_EQ(over->container_response().envs().count("PCIDEVICE_RDMA_HCA_INFO"), 0u);
  EXPECT_EQ(over->container_response().envs().count("PCIDEVICE_RDMA_HCA"), 1u);
  EXPECT_EQ(over->info_left_out(),
            Cat("rdma/hca: PCIDEVICE_RDMA_HCA_INFO is left out of the pods' environment: its "
                "JSON for 239 HCA(s) is ",
                bytes,
                " bytes, over the 102400-byte limit (a process refuses an environment string "
                "over 128 KiB); PCIDEVICE_RDMA_HCA still lists every HCA"));
  EXPECT_EQ(over->info_left_out().find('\n'), std::string::npos);
  // PodEnv says it to a caller that asks, and clears what an earlier call left.
  std::string why = "stale";
  PodEnv(fits->model(), &why);
  EXPECT_EQ(why, "");
  PodEnv(over->model(), &why);
  EXPECT_EQ(why, over->info_left_out());
  EXPECT_EQ(PoolSnapshot::Build(Resource(4), sysfs::NodeInventory{})->info_left_out(), "");
}

}  // namespace
}  // namespace rdmadp::pool

namespace rdmadp::pool {
namespace {

// Four HCAs covering the cases of docs/pod-env.md ("Usable ports, and `skipUnusable`"): a
// usable one, a dual-port one with one port down, a management function (ACTIVE, every GID
// zero) and one whose port is down.
sysfs::NodeInventory MixedNode() {
  sysfs::NodeInventory inv;
  for (int i = 0; i < 4; ++i) {
    inv.functions.push_back(
        Fn(Cat("0000:0", i + 1, ":00.0"), "15b3", "1017", "mlx5_core", Cat("ib", i), "infiniband"));
    inv.functions[i].rdma_devices[0].name = Cat("mlx5_", i);
    inv.functions[i].rdma_devices[0].ports[0].gids = sysfs::GidTable::kHasGid;
  }
  inv.functions[1].rdma_devices[0].ports.push_back({2, sysfs::PortState::kDown});
  inv.functions[2].rdma_devices[0].ports[0].gids = sysfs::GidTable::kAllZero;
  inv.functions[3].rdma_devices[0].ports[0].state = sysfs::PortState::kDown;
  return inv;
}

config::ResourceConfig Hinted(std::vector<config::EnvHint> hints, bool skip = false) {
  config::ResourceConfig rc = Resource(4);
  rc.env_hints = std::move(hints);
  rc.skip_unusable = skip;
  return rc;
}

TEST(PodEnv, HintsNameTheUsablePortsOnly) {
  const auto inv = MixedNode();
  const auto both =
      PoolSnapshot::Build(Hinted({config::EnvHint::kNccl, config::EnvHint::kUcx}), inv)
          ->container_response()
          .envs();
  ASSERT_EQ(both.size(), 4u);
  EXPECT_EQ(both.at("NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(both.at("UCX_NET_DEVICES"), "mlx5_0:1,mlx5_1:1");
  // Without skipUnusable every function stays in the pool (and in PCIDEVICE_*), marked.
  EXPECT_EQ(both.at("PCIDEVICE_RDMA_HCA"), "0000:01:00.0,0000:02:00.0,0000:03:00.0,0000:04:00.0");
  const nlohmann::json info = nlohmann::json::parse(both.at("PCIDEVICE_RDMA_HCA_INFO"));
  EXPECT_EQ(info.at("0000:01:00.0").at("usable"), true);
  EXPECT_EQ(info.at("0000:03:00.0").at("usable"), false);
  EXPECT_EQ(info.at("0000:04:00.0").at("usable"), false);

  const auto ucx =
      PoolSnapshot::Build(Hinted({config::EnvHint::kUcx}), inv)->container_response().envs();
  EXPECT_EQ(ucx.count("NCCL_IB_HCA"), 0u);
  EXPECT_EQ(ucx.at("UCX_NET_DEVICES"), "mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(PoolSnapshot::Build(Resource(4), inv)->container_response().envs().size(), 2u)
      << "no hints unless asked for";

  // No usable port at all: no hint (an empty UCX_NET_DEVICES would select every device).
  auto down = inv;
  down.functions[0].rdma_devices[0].ports[0].state = sysfs::PortState::kDown;
  down.functions[1].rdma_devices[0].ports[0].state = sysfs::PortState::kInit;
  const auto none =
      PoolSnapshot::Build(Hinted({config::EnvHint::kNccl, config::EnvHint::kUcx}), down)
          ->container_response()
          .envs();
  EXPECT_EQ(none.size(), 2u);
  EXPECT_EQ(none.count("NCCL_IB_HCA"), 0u);
  // The port comes back: the next snapshot (and every Allocate after it) names it again.
  down.functions[1].rdma_devices[0].ports[1].state = sysfs::PortState::kActive;
  down.functions[1].rdma_devices[0].ports[1].gids = sysfs::GidTable::kHasGid;
  EXPECT_EQ(PoolSnapshot::Build(Hinted({config::EnvHint::kNccl}), down)
                ->container_response()
                .envs()
                .at("NCCL_IB_HCA"),
            "=mlx5_1:2");
}

TEST(PodEnv, UnusableFunctionsAreNamedWithTheirReasonAndSkippedOnRequest) {
  const auto inv = MixedNode();
  EXPECT_EQ(UnusableReason(inv.functions[0]), "");
  EXPECT_EQ(UnusableReason(inv.functions[1]), "") << "one ACTIVE port is enough";
  EXPECT_EQ(UnusableReason(inv.functions[2]),
            "mlx5_2 port 1: every GID is zero, so it cannot serve RC verbs (a management "
            "function, or a RoCE netdev without addresses)");
  EXPECT_EQ(UnusableReason(inv.functions[3]), "mlx5_3 port 1 DOWN");
  auto unknown = inv.functions[0];  // no gids directory: trusted, as before GIDs were read
  unknown.rdma_devices[0].ports[0].gids = sysfs::GidTable::kUnknown;
  EXPECT_EQ(UnusableReason(unknown), "");

  const auto skipped = PoolSnapshot::Build(Hinted({}, true), inv);
  EXPECT_THAT(skipped->advertised().hca_addresses, ElementsAre("0000:01:00.0", "0000:02:00.0"));
  EXPECT_EQ(skipped->container_response().envs().at("PCIDEVICE_RDMA_HCA"),
            "0000:01:00.0,0000:02:00.0");
  // The management function's GIDs appear (an address was added): it rejoins the pool.
  auto later = inv;
  later.functions[2].rdma_devices[0].ports[0].gids = sysfs::GidTable::kHasGid;
  EXPECT_EQ(PoolSnapshot::Build(Hinted({}, true), later, nullptr, skipped)
                ->advertised()
                .hca_addresses.size(),
            3u);
}

// A dual-port HCA has a umad and an issm per port: the SR-IOV "rdma" section keeps one path
// per kind (its first port's), so the object has no repeated key (which a JSON parser
// would silently collapse); "ports" names both ports.
TEST(PodEnv, AMultiportHcaHasOneRdmaPathPerKind) {
  sysfs::NodeInventory inv = MixedNode();
  inv.functions[1].char_devices = {"issm1", "issm2", "umad1", "umad2", "uverbs1"};
  const auto snap = PoolSnapshot::Build(Resource(4), inv);
  const std::string info = snap->container_response().envs().at("PCIDEVICE_RDMA_HCA_INFO");
  const std::string rdma =
      "{\"uverbs\": \"/dev/infiniband/uverbs1\", \"umad\": "
      "\"/dev/infiniband/umad1\", \"issm\": \"/dev/infiniband/issm1\", "
      "\"rdma_cm\": \"/dev/infiniband/rdma_cm\", \"rdma_dev\": \"mlx5_1\"}";
  EXPECT_NE(info.find(rdma), std::string::npos) << info;
  EXPECT_EQ(nlohmann::json::parse(info).at("0000:02:00.0").at("ports").size(), 2u);
}

// A DRA claim that holds devices of two hinted pools gets one value naming all of them.
TEST(PodEnv, HintsOverSeveralFunctionsAreTheirUnionInOrder) {
  const auto inv = MixedNode();
  const auto env = HintEnv({inv.functions[1], inv.functions[2], inv.functions[0]},
                           {config::EnvHint::kNccl, config::EnvHint::kUcx});
  EXPECT_EQ(env.at("NCCL_IB_HCA"), "=mlx5_1:1,mlx5_0:1");
  EXPECT_EQ(env.at("UCX_NET_DEVICES"), "mlx5_1:1,mlx5_0:1");
}

// The RoCE class and GID index (issue 54, docs/pod-env.md "The RoCE class and GID"): a
// number from the config as written; "auto" only where every usable port agrees, else no
// variable and a line naming each port's value; unusable ports do not count; the library
// names follow envHints; never in the CDI spec (the pod's own value must win).
config::ResourceConfig Roce(std::vector<config::EnvHint> hints, std::optional<config::RoceValue> tc,
                            std::optional<config::RoceValue> gid) {
  config::ResourceConfig rc = Hinted(std::move(hints));
  rc.traffic_class = tc;
  rc.gid_index = gid;
  return rc;
}
constexpr config::RoceValue kAuto{.automatic = true, .value = 0};

TEST(PodEnv, RoceClassAndGidFromTheConfigOrEveryUsablePort) {
  auto inv = MixedNode();  // usable: mlx5_0:1, mlx5_1:1 (mlx5_1:2 DOWN, 2 and 3 unusable)
  for (auto& fn : inv.functions) {
    for (auto& port : fn.rdma_devices[0].ports) {
      port.traffic_class = 106;
      port.roce_v2_ipv4_gid = 3;
    }
  }
  inv.functions[2].rdma_devices[0].ports[0].traffic_class = 0;     // unusable: does not count
  inv.functions[1].rdma_devices[0].ports[1].roce_v2_ipv4_gid = 5;  // DOWN: does not count
  const std::vector<config::EnvHint> both = {config::EnvHint::kNccl, config::EnvHint::kUcx};
  std::vector<std::string> not_set;
  auto env = RoceEnv(inv.functions, Roce(both, kAuto, kAuto), &not_set);
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"NCCL_IB_GID_INDEX", "3"},
                                                     {"NCCL_IB_TC", "106"},
                                                     {"UCX_IB_GID_INDEX", "3"},
                                                     {"UCX_IB_TRAFFIC_CLASS", "106"}}));
  EXPECT_TRUE(not_set.empty());

  // Numbers from the config are given as written, whatever sysfs says; only UCX's names.
  env = RoceEnv(inv.functions,
                Roce({config::EnvHint::kUcx}, config::RoceValue{.automatic = false, .value = 26},
                     config::RoceValue{.automatic = false, .value = 0}),
                &not_set);
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"UCX_IB_GID_INDEX", "0"},
                                                     {"UCX_IB_TRAFFIC_CLASS", "26"}}));

  // Two usable ports that differ, or one without a value: no variable, one line each.
  inv.functions[1].rdma_devices[0].ports[0].traffic_class = 24;
  inv.functions[0].rdma_devices[0].ports[0].roce_v2_ipv4_gid = -1;
  inv.functions[1].rdma_devices[0].ports[0].roce_v2_ipv4_gid = -1;
  env = RoceEnv(inv.functions, Roce(both, kAuto, kAuto), &not_set);
  EXPECT_TRUE(env.empty());
  EXPECT_THAT(not_set,
              ElementsAre("rdma/hca: NCCL_IB_TC and UCX_IB_TRAFFIC_CLASS are not in the pods' "
                          "environment: the usable ports differ in a traffic class "
                          "(tc/<port>/traffic_class) (mlx5_1:1: 24; mlx5_0:1: 106)",
                          "rdma/hca: NCCL_IB_GID_INDEX and UCX_IB_GID_INDEX are not in the "
                          "pods' environment: no usable port has a RoCE v2 GID with an IPv4 "
                          "address of its netdev (mlx5_0:1, mlx5_1:1: none)"));
  not_set.clear();
  env =
      RoceEnv(inv.functions, Roce({config::EnvHint::kNccl}, std::nullopt, std::nullopt), &not_set);
  EXPECT_TRUE(env.empty()) << "nothing unless asked for";
  EXPECT_TRUE(not_set.empty());
}

TEST(PodEnv, RoceVariablesAreInTheAllocateAnswerOnlyAndInfoShowsThePorts) {
  auto inv = MixedNode();
  for (auto& fn : inv.functions) fn.rdma_devices[0].ports[0].traffic_class = 106;
  inv.functions[0].rdma_devices[0].ports[0].roce_v2_ipv4_gid = 3;
  const auto snap = PoolSnapshot::Build(
      Roce({config::EnvHint::kNccl}, kAuto, config::RoceValue{.automatic = false, .value = 3}),
      inv);
  const auto& envs = snap->container_response().envs();
  EXPECT_EQ(envs.at("NCCL_IB_TC"), "106");
  EXPECT_EQ(envs.at("NCCL_IB_GID_INDEX"), "3");
  EXPECT_EQ(snap->allocate_only_env(), (std::map<std::string, std::string>{
                                           {"NCCL_IB_GID_INDEX", "3"}, {"NCCL_IB_TC", "106"}}));
  EXPECT_TRUE(snap->roce_not_set().empty());
  const nlohmann::json info = nlohmann::json::parse(envs.at("PCIDEVICE_RDMA_HCA_INFO"));
  const auto& port = info.at("0000:01:00.0").at("ports").at(0);
  EXPECT_EQ(port.at("trafficClass"), 106);
  EXPECT_EQ(port.at("roceV2GidIndex"), 3);
  EXPECT_FALSE(info.at("0000:02:00.0").at("ports").at(0).contains("roceV2GidIndex"));

  // A DRA entry's containers get them from no environment (a CDI edit would replace the
  // pod's own value): its snapshot has none.
  auto dra =
      Roce({config::EnvHint::kNccl}, kAuto, config::RoceValue{.automatic = false, .value = 3});
  dra.frontend = config::Frontend::kDra;
  const auto dra_snap = PoolSnapshot::Build(dra, inv);
  EXPECT_EQ(dra_snap->container_response().envs().count("NCCL_IB_TC"), 0u);
  EXPECT_TRUE(dra_snap->allocate_only_env().empty());
}

// _INFO's linkLayer said "ether" where the kernel (ports/N/link_layer) and ibv_devinfo say
// "Ethernet" (docs/pod-env.md, "The variables").
TEST(PodEnv, LinkLayerUsesTheKernelsNames) {
  EXPECT_EQ(RdmaLinkLayer("infiniband"), "InfiniBand");
  EXPECT_EQ(RdmaLinkLayer("ether"), "Ethernet");
  EXPECT_EQ(RdmaLinkLayer(""), "");
}

}  // namespace
}  // namespace rdmadp::pool
