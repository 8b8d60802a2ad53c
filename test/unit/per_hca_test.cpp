// deviceModel "perHca" in the device plugin (issue 56): the device list, the answer a
// container gets for its IDs, and GetPreferredAllocation's choice as a table.
#include "pkg/pool/per_hca.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "pkg/pool/preferred_allocation.h"
#include "pkg/pool/snapshot.h"
#include "pkg/text/cat.h"

namespace rdmadp::pool {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// An InfiniBand HCA at 0000:0<n>:00.0 (mlx5_<n>, ib<n>) on `numa`, under `root`.
sysfs::PciFunction PerHcaFn(int n, int numa, std::string root = "pci0000:00") {
  sysfs::PciFunction fn;
  fn.address = Cat("0000:0", n, ":00.0");
  fn.vendor = "15b3";
  fn.device = "1017";
  fn.driver = "mlx5_core";
  fn.if_name = Cat("ib", n);
  fn.link_type = "infiniband";
  fn.numa_node = numa;
  fn.pcie_root = std::move(root);
  fn.rdma_capable = true;
  fn.rdma_devices = {{Cat("mlx5_", n), {{1, sysfs::PortState::kActive}}}};
  fn.char_devices = {Cat("umad", n), Cat("uverbs", n)};
  return fn;
}

config::ResourceConfig PerHcaResource(int64_t shares) {
  config::ResourceConfig rc;
  rc.resource_name = "hca";
  rc.rdma_hca_max = shares;
  rc.device_model = config::DeviceModel::kPerHca;
  return rc;
}

std::vector<std::string> Ids(const v1beta1::ListAndWatchResponse& list) {
  std::vector<std::string> out;
  for (const auto& d : list.devices()) out.push_back(d.id());
  return out;
}

TEST(PerHcaSnapshot, EveryHcaIsItsOwnDevicesWithItsNumaNodeAndHealth) {
  sysfs::NodeInventory inv;
  inv.functions = {PerHcaFn(1, 1), PerHcaFn(2, 0)};
  inv.functions[1].rdma_devices[0].ports[0].state = sysfs::PortState::kDown;
  auto snap = PoolSnapshot::Build(PerHcaResource(2), inv);
  ASSERT_TRUE(snap->per_hca());
  const auto list = snap->ListResponse();
  EXPECT_THAT(Ids(list),
              ElementsAre("0000:01:00.0-0", "0000:01:00.0-1", "0000:02:00.0-0", "0000:02:00.0-1"));
  for (int i = 0; i < 4; ++i) {
    const auto& d = list.devices(i);
    ASSERT_EQ(d.topology().nodes_size(), 1) << d.id();
    EXPECT_EQ(d.topology().nodes(0).id(), i < 2 ? 1 : 0) << d.id();
    EXPECT_EQ(d.health(), i < 2 ? "Healthy" : "Unhealthy") << d.id();  // mlx5_2's port DOWN
  }
  const Advertised& adv = snap->advertised();
  EXPECT_EQ(adv.slots, 4);
  EXPECT_EQ(adv.healthy_slots, 2);
  EXPECT_EQ(adv.shares_per_hca, 2);
  EXPECT_THAT(adv.hca_healthy, ElementsAre(true, false));
  EXPECT_THAT(adv.hca_numa_nodes, ElementsAre(1, 0));
  EXPECT_EQ(snap->shares_cut(), "");
  EXPECT_EQ(snap->DeviceIds(), Ids(list));

  // Without topology (--no-topology), no device carries a NUMA node.
  auto flat = PoolSnapshot::Build(PerHcaResource(2), inv, nullptr, nullptr, false);
  const auto flat_list = flat->ListResponse();
  for (const auto& d : flat_list.devices()) EXPECT_FALSE(d.has_topology()) << d.id();
  EXPECT_THAT(flat->advertised().hca_numa_nodes, ElementsAre(-1, -1));
}

TEST(PerHcaSnapshot, AnHcaWithoutANumaNodeHasNoTopologyAndAnHcaThatLeavesTakesOnlyItsDevices) {
  sysfs::NodeInventory inv;
  inv.functions = {PerHcaFn(1, -1), PerHcaFn(2, 0), PerHcaFn(3, 0)};
  auto before = PoolSnapshot::Build(PerHcaResource(1), inv);
  const auto list = before->ListResponse();
  EXPECT_FALSE(list.devices(0).has_topology());
  EXPECT_TRUE(list.devices(1).has_topology());
  inv.functions.erase(inv.functions.begin() + 1);  // 0000:02:00.0 is unplugged
  auto after = PoolSnapshot::Build(PerHcaResource(1), inv, nullptr, before);
  EXPECT_THAT(after->DeviceIds(), ElementsAre("0000:01:00.0-0", "0000:03:00.0-0"));
  EXPECT_NE(before->advertised(), after->advertised());
  EXPECT_FALSE(after->HasDeviceId("0000:02:00.0-0"));
  EXPECT_EQ(after->HcaOfDeviceId("0000:03:00.0-0"), 1u);
  // The same node scanned again: the same snapshot, the same IDs.
  EXPECT_EQ(PoolSnapshot::Build(PerHcaResource(1), inv, nullptr, after), after);
}

TEST(PerHcaSnapshot, IdsAreExactlyTheOnesAdvertised) {
  sysfs::NodeInventory inv;
  inv.functions = {PerHcaFn(1, 0), PerHcaFn(2, 0)};
  auto snap = PoolSnapshot::Build(PerHcaResource(3), inv);
  EXPECT_TRUE(snap->HasDeviceId("0000:01:00.0-0"));
  EXPECT_TRUE(snap->HasDeviceId("0000:02:00.0-2"));
  for (const char* id : {"0000:02:00.0-3", "0000:02:00.0-01", "0000:02:00.0-+1", "0000:02:00.0-",
                         "0000:02:00.0", "0000:09:00.0-0", "0", "2", "-1", ""}) {
    EXPECT_FALSE(snap->HasDeviceId(id)) << id;
  }
  EXPECT_TRUE(LooksPerHca("0000:3b:00.0-12"));
  EXPECT_FALSE(LooksPerHca("12"));
  EXPECT_FALSE(LooksPerHca("0000:3b:00.0-"));
  EXPECT_FALSE(LooksPerHca("0000:3b:00.0-1a"));
  // The slots model's IDs are not perHca's, and the other way round.
  config::ResourceConfig slots = PerHcaResource(3);
  slots.device_model = config::DeviceModel::kAuto;
  auto s = PoolSnapshot::Build(slots, inv);
  EXPECT_FALSE(s->per_hca());
  EXPECT_TRUE(s->HasDeviceId("2"));
  EXPECT_FALSE(s->HasDeviceId("0000:01:00.0-0"));
}

TEST(PerHcaSnapshot, AContainerGetsTheDevicesAndVariablesOfItsHcasOnly) {
  sysfs::NodeInventory inv;
  inv.functions = {PerHcaFn(1, 0), PerHcaFn(2, 1)};
  config::ResourceConfig rc = PerHcaResource(1);
  rc.env_hints = {config::EnvHint::kNccl};
  auto snap = PoolSnapshot::Build(rc, inv);
  const auto answer = snap->ContainerResponseFor({1});
  std::vector<std::string> paths;
  for (const auto& d : answer.devices()) paths.push_back(d.host_path());
  EXPECT_THAT(paths, ElementsAre("/dev/infiniband/umad2", "/dev/infiniband/uverbs2",
                                 "/dev/infiniband/rdma_cm"));
  EXPECT_EQ(answer.envs().at("PCIDEVICE_RDMA_HCA"), "0000:02:00.0");
  EXPECT_EQ(answer.envs().at("NCCL_IB_HCA"), "=mlx5_2:1");
  const std::string info = answer.envs().at("PCIDEVICE_RDMA_HCA_INFO");
  EXPECT_NE(info.find("0000:02:00.0"), std::string::npos);
  EXPECT_EQ(info.find("0000:01:00.0"), std::string::npos);
  // Both HCAs: both, in PCI order.
  EXPECT_EQ(snap->ContainerResponseFor({0, 1}).envs().at("PCIDEVICE_RDMA_HCA"),
            "0000:01:00.0,0000:02:00.0");

  // CDI: the CDI devices and the annotation name that HCA only.
  const CdiNaming cdi{"rdma/hca", "cdi.k8s.io/rdmadp_rdma_hca"};
  auto with_cdi = PoolSnapshot::Build(rc, inv, &cdi);
  const auto cdi_answer = with_cdi->ContainerResponseFor({0});
  ASSERT_EQ(cdi_answer.cdi_devices_size(), 1);
  EXPECT_EQ(cdi_answer.cdi_devices(0).name(), "rdma/hca=0000:01:00.0");
  EXPECT_EQ(cdi_answer.annotations().at("cdi.k8s.io/rdmadp_rdma_hca"), "rdma/hca=0000:01:00.0");
  EXPECT_EQ(cdi_answer.devices_size(), 0);
}

// Many HCAs times many shares: fewer shares of each, so that one ListAndWatch message holds
// them, decided before the list is built, the NUMA nodes kept, and a line saying so. 40 HCAs
// x 100,000 shares would be 4,000,000 devices, ~130 MB.
TEST(PerHcaSnapshot, AListOverTheKubeletsLimitAdvertisesFewerSharesAndSaysSo) {
  sysfs::NodeInventory inv;
  for (int n = 0; n < 40; ++n) {
    auto fn = PerHcaFn(1, n % 2);
    char address[16];
    std::snprintf(address, sizeof address, "0000:%02x:00.0", n);
    fn.address = address;
    inv.functions.push_back(fn);
  }
  auto snap = PoolSnapshot::Build(PerHcaResource(100000), inv);
  const int64_t shares = snap->advertised().shares_per_hca;
  EXPECT_GT(shares, 0);
  EXPECT_LT(shares, 100000);
  EXPECT_LE(snap->list_response_bytes().size(), kKubeletMaxMessageBytes);
  // Within a fifth of the limit: the bound per device is the longest ID's, not far above.
  EXPECT_GT(snap->list_response_bytes().size(), kKubeletMaxMessageBytes * 4 / 5);
  EXPECT_EQ(snap->advertised().slots, shares * 40);
  EXPECT_FALSE(snap->topology_dropped());
  EXPECT_THAT(snap->advertised().hca_numa_nodes[1], 1);
  const auto list = snap->ListResponse();
  ASSERT_EQ(list.devices(list.devices_size() - 1).topology().nodes_size(), 1);
  EXPECT_EQ(snap->shares_cut(),
            Cat("rdma/hca: advertising ", shares,
                " of the 100000 shares of each of its 40 HCAs: more would make the device list "
                "larger than the kubelet's 4194304-byte message limit (lower rdmaHcaMax, or "
                "split the pool)"));
  // Everything fits: nothing is cut, nothing said.
  EXPECT_EQ(PoolSnapshot::Build(PerHcaResource(1000), inv)->shares_cut(), "");
}

// GetPreferredAllocation as a table, in the manner of NVIDIA's device plugin's allocation
// policy tests. The node: 8 HCAs, a0..a3 on NUMA 0 (a0, a1 under root r0; a2, a3 under r1),
// a4..a7 on NUMA 1 (a4, a5 under r2; a6, a7 under r3); two shares each unless a case says.
struct PreferCase {
  const char* name;
  std::vector<std::string> available;  // "a3.1": share 1 of a3
  std::vector<std::string> must_include;
  int size;
  std::vector<std::string> want;
};

std::string PreferAddress(char hca) { return Cat("0000:1", hca, ":00.0"); }
std::string PreferId(const std::string& short_id) {                // "a3.1" -> "0000:13:00.0-1"
  if (short_id.size() < 4 || short_id[0] != 'a') return short_id;  // written as is
  return PerHcaDeviceId(PreferAddress(short_id[1]), std::stoll(short_id.substr(3)));
}
std::vector<std::string> PreferIds(const std::vector<std::string>& short_ids) {
  std::vector<std::string> out;
  for (const auto& s : short_ids) out.push_back(PreferId(s));
  return out;
}
std::vector<std::string> EveryShare(int shares, std::vector<char> except = {}) {
  std::vector<std::string> out;
  for (char h = '0'; h <= '7'; ++h) {
    if (std::find(except.begin(), except.end(), h) != except.end()) continue;
    for (int s = 0; s < shares; ++s) out.push_back(Cat("a", h, ".", s));
  }
  return out;
}

TEST(PreferredAllocation, Table) {
  std::vector<PoolHca> hcas;
  const char* roots[] = {"r0", "r0", "r1", "r1", "r2", "r2", "r3", "r3"};
  for (int i = 0; i < 8; ++i) {
    sysfs::PciFunction fn;
    fn.address = PreferAddress(static_cast<char>('0' + i));
    fn.numa_node = i < 4 ? 0 : 1;
    fn.pcie_root = roots[i];
    hcas.push_back({fn, true, ""});
  }
  const PerHcaIds ids(hcas, 12);
  const std::vector<PreferCase> cases = {
      {"one: the lower node's first root, first HCA", EveryShare(2), {}, 1, {"a0.0"}},
      {"two: distinct HCAs under one root", EveryShare(2), {}, 2, {"a0.0", "a1.0"}},
      {"three: the node before its roots", EveryShare(2), {}, 3, {"a0.0", "a1.0", "a2.0"}},
      {"four: one node whole", EveryShare(2), {}, 4, {"a0.0", "a1.0", "a2.0", "a3.0"}},
      {"five: distinct HCAs before second shares, spread last",
       EveryShare(2),
       {},
       5,
       {"a0.0", "a1.0", "a2.0", "a3.0", "a4.0"}},
      {"nine: second shares only once every HCA has one",
       EveryShare(2),
       {},
       9,
       {"a0.0", "a1.0", "a2.0", "a3.0", "a4.0", "a5.0", "a6.0", "a7.0", "a0.1"}},
      {"the closest fit: node 0 with three free HCAs, and there the root with two",
       EveryShare(2, {'1'}),
       {},
       2,
       {"a2.0", "a3.0"}},
      {"the closest fit: node 1 when node 0 has one free HCA",
       EveryShare(1, {'0', '1', '2'}),
       {},
       2,
       {"a4.0", "a5.0"}},
      {"no node fits: the one with the most first",
       EveryShare(1, {'0', '1', '2'}),
       {},
       6,
       {"a4.0", "a5.0", "a6.0", "a7.0", "a3.0"}},
      {"mustInclude anchors node and root", EveryShare(2), {"a5.0"}, 2, {"a5.0", "a4.0"}},
      {"mustInclude kept whole; the anchor is where most of it is, in any order",
       EveryShare(2),
       {"a6.1", "a0.0", "a1.1"},
       4,
       {"a6.1", "a0.0", "a1.1", "a2.0"}},
      {"mustInclude's anchor, the other order",
       EveryShare(2),
       {"a1.1", "a0.0", "a6.1"},
       4,
       {"a1.1", "a0.0", "a6.1", "a2.0"}},
      {"mustInclude's root: where most of them are within the node",
       EveryShare(2),
       {"a4.0", "a6.0", "a7.0"},
       4,
       {"a4.0", "a6.0", "a7.0", "a5.0"}},
      {"a mustInclude ID that is not available is left out",
       EveryShare(1, {'5'}),
       {"a5.0"},
       1,
       {"a4.0"}},  // then the closest fit: node 1 (three free), root r2 (one)
      {"a second share of the only HCA", {"a3.0", "a3.1", "a3.2"}, {}, 2, {"a3.0", "a3.1"}},
      {"the lowest share index first, as numbers", {"a2.10", "a2.2"}, {}, 1, {"a2.2"}},
      {"IDs not advertised are never chosen",
       {"7", "0000:99:00.0-0", "a1.12", "a1.0"},
       {"7"},
       3,
       {"a1.0"}},
      {"fewer available than asked: all of them", {"a1.0", "a6.0"}, {}, 4, {"a1.0", "a6.0"}},
      {"a repeated ID counts once", {"a1.0", "a1.0"}, {}, 2, {"a1.0"}},
      {"size 0", EveryShare(1), {}, 0, {}},
      {"a negative size", EveryShare(1), {"a0.0"}, -2147483647 - 1, {"a0.0"}},
      {"a size past what is offered: all of it, distinct first",
       {"a0.0", "a0.1", "a4.0"},
       {},
       2147483647,
       {"a0.0", "a4.0", "a0.1"}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(
        PreferredAllocation(hcas, ids, PreferIds(c.available), PreferIds(c.must_include), c.size),
        PreferIds(c.want))
        << c.name;
  }
}

// An HCA whose NUMA node the platform does not report loses ties to one whose it does.
TEST(PreferredAllocation, AnHcaOfNoKnownNodeLosesTies) {
  std::vector<PoolHca> hcas;
  for (int i = 0; i < 2; ++i) {
    sysfs::PciFunction fn;
    fn.address = PreferAddress(static_cast<char>('0' + i));
    fn.numa_node = i == 0 ? -1 : 3;
    hcas.push_back({fn, true, ""});
  }
  const PerHcaIds ids(hcas, 1);
  EXPECT_EQ(PreferredAllocation(hcas, ids, PreferIds({"a0.0", "a1.0"}), {}, 1),
            PreferIds({"a1.0"}));
  EXPECT_THAT(PreferredAllocation(hcas, ids, {}, {}, 1), IsEmpty());
}

}  // namespace
}  // namespace rdmadp::pool
