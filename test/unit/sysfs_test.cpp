#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>

#include "pkg/sysfs/scanner.h"
#include "pkg/sysfs/sysfs_parse.h"
#include "pkg/text/cat.h"
#include "test/support/fake_node.h"
#include "test/support/temp_dir.h"

namespace rdmadp::sysfs {
namespace {

using rdmadp::testing::FakeFunction;
using rdmadp::testing::FakeNode;
using rdmadp::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SysfsParse, Files) {
  EXPECT_EQ(ParsePciId("0x15b3\n"), "15b3");
  EXPECT_EQ(ParsePciId("0x15B3"), "15b3");
  EXPECT_EQ(ParsePciId("0x15b"), "");
  EXPECT_EQ(ParsePciClass("0x020700\n"), 0x020700u);
  EXPECT_EQ(ParsePciClass("junk"), std::nullopt);
  EXPECT_EQ(ParseNumaNode("1\n"), 1);
  EXPECT_EQ(ParseNumaNode("-1\n"), -1);
  EXPECT_EQ(ParseNumaNode(""), -1);
  EXPECT_EQ(ParsePortState("4: ACTIVE\n"), PortState::kActive);
  EXPECT_EQ(ParsePortState("1: DOWN\n"), PortState::kDown);
  EXPECT_EQ(ParsePortState("2: INIT"), PortState::kInit);
  EXPECT_EQ(ParsePortState("garbage"), PortState::kUnknown);
  EXPECT_EQ(ParseArphrd("32\n"), 32);
  EXPECT_EQ(ParseHardwareAddress("b8:ce:f6:0a:0b:0c\n"), "b8:ce:f6:0a:0b:0c");
  EXPECT_EQ(ParseHardwareAddress("00:00:10:49:fe:80:00:00:00:00:00:00:b8:ce:f6:03:00:0a:0b:0c\n"),
            "00:00:10:49:fe:80:00:00:00:00:00:00:b8:ce:f6:03:00:0a:0b:0c");
  EXPECT_EQ(ParseHardwareAddress("\n"), "");
  EXPECT_EQ(ParseHardwareAddress("B8:CE:F6:0A:0B:0C"), "");  // the kernel prints lowercase
  EXPECT_EQ(ParseHardwareAddress("b8:ce:f6:0a:0b:0"), "");
  std::string pairs = "00";
  for (int i = 1; i < 42; ++i) pairs += ":00";
  EXPECT_EQ(ParseHardwareAddress(pairs), pairs);  // 42 pairs: 125 bytes
  EXPECT_EQ(ParseHardwareAddress(pairs + ":00"), "");
  EXPECT_EQ(ClassifyCharDev("uverbs12"), CharDevKind::kUverbs);
  EXPECT_EQ(ClassifyCharDev("umad0"), CharDevKind::kUmad);
  EXPECT_EQ(ClassifyCharDev("issm3"), CharDevKind::kIssm);
  EXPECT_EQ(ClassifyCharDev("abi_version"), CharDevKind::kNone);
  EXPECT_EQ(ClassifyCharDev("umad"), CharDevKind::kNone);
  EXPECT_TRUE(CharDevLess("umad2", "umad10"));
  EXPECT_TRUE(CharDevLess("issm9", "umad0"));
  EXPECT_TRUE(CharDevLess("umad9", "uverbs0"));
}

class ScannerTest : public ::testing::Test {
 protected:
  TempDir tmp;
  FakeNode node{tmp.path()};
  Scanner scanner{node.sysfs_root(), node.dev_root()};
};

TEST_F(ScannerTest, EmptyNode) {
  NodeInventory inv = scanner.Scan();
  EXPECT_TRUE(inv.functions.empty());
  EXPECT_TRUE(inv.rdma_cm_present);
}

TEST_F(ScannerTest, ReadsAConnectXThroughSymlinks) {
  FakeFunction fn = FakeNode::ConnectX(0, 1, /*infiniband=*/true);
  fn.ports = 2;  // XDR-style: one umad/issm pair per port
  fn.pcie_root = "pci0000:3a";
  node.Add(fn);
  ASSERT_TRUE(std::filesystem::is_symlink(node.sysfs_root() + "/bus/pci/devices/0000:10:00.0"));
  NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 1u);
  const PciFunction& f = inv.functions[0];
  EXPECT_EQ(f.address, "0000:10:00.0");
  EXPECT_EQ(f.vendor, "15b3");
  EXPECT_EQ(f.device, "1017");
  EXPECT_EQ(f.class_code, 0x020000u);
  EXPECT_EQ(f.numa_node, 1);
  EXPECT_EQ(f.pcie_root, "pci0000:3a");
  EXPECT_EQ(f.driver, "mlx5_core");
  EXPECT_EQ(f.if_name, "ib0");
  EXPECT_EQ(f.link_type, "infiniband");
  ASSERT_EQ(f.rdma_devices.size(), 1u);
  EXPECT_EQ(f.rdma_devices[0].name, "mlx5_0");
  EXPECT_EQ(f.rdma_devices[0].ports.size(), 2u);
  EXPECT_THAT(f.char_devices, ElementsAre("issm0", "issm1", "umad0", "umad1", "uverbs0"));
  EXPECT_TRUE(f.rdma_capable) << f.not_rdma_reason;
}

TEST_F(ScannerTest, SkipsNonNetworkClassesAndExplainsNonRdma) {
  FakeFunction nvme;
  nvme.address = "0000:01:00.0";
  nvme.class_code = 0x010802;
  node.Add(nvme);
  FakeFunction intel;
  intel.address = "0000:02:00.0";
  intel.vendor = "8086";
  intel.driver = "igb";
  intel.netdevs = {"eno1"};
  node.Add(intel);
  FakeFunction no_uverbs = FakeNode::ConnectX(1, -1, false);
  no_uverbs.uverbs = false;
  node.Add(no_uverbs);
  NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 2u);  // the NVMe drive is not a network function
  EXPECT_FALSE(inv.functions[0].rdma_capable);
  EXPECT_THAT(inv.functions[0].not_rdma_reason, HasSubstr("no RDMA device"));
  EXPECT_EQ(inv.functions[0].link_type, "ether");
  EXPECT_FALSE(inv.functions[1].rdma_capable);
  EXPECT_THAT(inv.functions[1].not_rdma_reason, HasSubstr("no uverbs"));
}

// Every RDMA device the kernel shows is served or explained (docs/vendors.md), on layouts
// built from the drivers' own code (test/support/fake_node.cpp names the files). umad is
// optional: iWARP ports have none (the kernel makes it only for ports with IB MADs), and
// verbs and rdma_cm serve them; a function without a netdev takes its port's link layer.
TEST_F(ScannerTest, EveryVendorsLayoutIsServedOrExplained) {
  node.Add(FakeNode::IntelE810(0, 0, /*iwarp=*/false));      // uverbs0 umad0 issm0
  node.Add(FakeNode::IntelE810(1, 0, /*iwarp=*/true));       // uverbs1, no umad
  node.Add(FakeNode::BroadcomBnxtRe(0, 1));                  // uverbs2 umad2 issm2
  node.Add(FakeNode::AlibabaErdma(0));                       // uverbs3, no umad
  node.Add(FakeNode::ConnectXWithoutNetdev(0, 1));           // uverbs4 umad4 issm4
  node.Add(FakeNode::ConnectX(1, 1, /*infiniband=*/false));  // the SF's PF: uverbs5 umad5
  node.AddSubFunction({.pf = "0000:11:00.0",
                       .aux_id = 2,
                       .sfnum = 88,
                       .netdev = "enp17s0f0s88",
                       .ibdev = "mlx5_2"});
  FakeFunction erdma_upstream = FakeNode::AlibabaErdma(1);  // its RDMA device is virtual
  erdma_upstream.ibdev.clear();
  node.Add(erdma_upstream);
  node.AddVirtualRdmaDevice("erdma_1", /*iwarp=*/true);
  const NodeInventory inv = scanner.Scan();
  std::vector<std::string> seen;
  for (const auto& fn : inv.functions) {
    seen.push_back(
        Cat(fn.address, " ", fn.vendor, ":", fn.device, " ", fn.driver, " [", fn.if_name, "] ",
            fn.link_type, " ", fn.rdma_devices.empty() ? "-" : fn.rdma_devices[0].name, " ",
            Join(fn.char_devices, ","), " ", fn.rdma_capable ? "capable" : fn.not_rdma_reason));
  }
  EXPECT_THAT(seen, ElementsAre("0000:00:06.0 1ded:107f erdma [] ether erdma_0 uverbs3 capable",
                                "0000:00:07.0 1ded:107f erdma []  -  no RDMA device (no "
                                "infiniband/ directory)",
                                "0000:10:00.0 15b3:1017 mlx5_core [] infiniband mlx5_0 "
                                "issm4,umad4,uverbs4 capable",
                                "0000:11:00.0 15b3:1017 mlx5_core [enp17s0f0np0] ether mlx5_1 "
                                "umad5,uverbs5 capable",
                                "0000:2f:00.0 8086:159b ice [ens1f0] ether irdma0 "
                                "issm0,umad0,uverbs0 capable",
                                "0000:30:00.0 8086:159b ice [ens2f0] ether irdma1 uverbs1 capable",
                                "0000:41:00.0 14e4:1750 bnxt_en [ens1f0np0] ether bnxt_re0 "
                                "issm2,umad2,uverbs2 capable"));
  ASSERT_EQ(inv.unserved.size(), 2u);
  EXPECT_EQ(inv.unserved[0].ibdev, "erdma_1");
  EXPECT_EQ(inv.unserved[0].where, "virtual");
  EXPECT_THAT(inv.unserved[0].reason, HasSubstr("a virtual RDMA device"));
  EXPECT_EQ(inv.unserved[1].ibdev, "mlx5_2");
  EXPECT_EQ(inv.unserved[1].where, "0000:11:00.0/mlx5_core.sf.2");
  EXPECT_THAT(inv.unserved[1].reason,
              HasSubstr("a sub-function (mlx5_core.sf.2, sfnum 88) of 0000:11:00.0"));
  // A refresh of the PF sees the same.
  EXPECT_EQ(scanner.Refresh(inv, {"0000:11:00.0"}), inv);
}

// A VF without a netdev here most likely had it moved into a pod by a CNI: it takes no link
// type from its port, so no linkTypes pool takes it.
TEST_F(ScannerTest, AVfWithoutANetdevHasNoLinkType) {
  node.Add(FakeNode::ConnectX(0, 0, /*infiniband=*/false));
  FakeFunction vf = FakeNode::ConnectX(1, 0, /*infiniband=*/false);
  vf.physfn = "0000:10:00.0";
  vf.netdevs.clear();
  node.Add(vf);
  const NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 2u);
  EXPECT_EQ(inv.functions[1].address, "0000:11:00.0");
  EXPECT_TRUE(inv.functions[1].rdma_capable);
  EXPECT_EQ(inv.functions[1].link_type, "");
}

TEST_F(ScannerTest, RoceWithoutIssmIsRdmaCapable) {
  node.Add(FakeNode::ConnectX(2, 0, /*infiniband=*/false));
  NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 1u);
  EXPECT_TRUE(inv.functions[0].rdma_capable);
  EXPECT_THAT(inv.functions[0].char_devices, ElementsAre("umad0", "uverbs0"));
}

TEST_F(ScannerTest, MissingRdmaCmMakesNothingCapable) {
  node.Add(FakeNode::ConnectX(0, 0, true));
  node.SetRdmaCm(false);
  NodeInventory inv = scanner.Scan();
  EXPECT_FALSE(inv.rdma_cm_present);
  EXPECT_FALSE(inv.functions[0].rdma_capable);
  EXPECT_THAT(inv.functions[0].not_rdma_reason, HasSubstr("infiniband/rdma_cm is missing"));
}

TEST_F(ScannerTest, CharDevicesVanishAndReturn) {
  node.Add(FakeNode::ConnectX(0, 0, true));
  node.Add(FakeNode::ConnectX(1, 0, true));
  node.RemoveCharDevices("mlx5_0");
  NodeInventory gone = scanner.Scan();
  EXPECT_FALSE(gone.functions[0].rdma_capable);
  EXPECT_TRUE(gone.functions[1].rdma_capable);
  node.RestoreCharDevices("mlx5_0");
  EXPECT_TRUE(scanner.Scan().functions[0].rdma_capable);
}

// sysfs lists issm0/umad0/uverbs0, but /dev (under --dev-root) lacks a node: it is never
// handed out, and without its uverbs node the HCA is not usable at all (docs/reliability.md).
TEST_F(ScannerTest, CharDevicesMissingUnderTheDevRootAreNotHandedOut) {
  node.Add(FakeNode::ConnectX(0, 0, true));
  node.Add(FakeNode::ConnectX(1, 0, true));
  std::filesystem::remove(node.dev_root() + "/infiniband/issm0");
  std::filesystem::remove(node.dev_root() + "/infiniband/uverbs1");
  NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 2u);
  EXPECT_TRUE(inv.functions[0].rdma_capable);
  EXPECT_THAT(inv.functions[0].char_devices, ElementsAre("umad0", "uverbs0"));
  EXPECT_FALSE(inv.functions[1].rdma_capable);
  EXPECT_EQ(inv.functions[1].not_rdma_reason,
            node.dev_root() + "/infiniband/uverbs1 is missing (mount the host's /dev)");
}

// An unreadable attribute (here a port's state that is a directory) used to mark the pool
// Unhealthy without a word; the problem now names the file.
TEST_F(ScannerTest, AnUnreadableAttributeIsNamed) {
  node.Add(FakeNode::ConnectX(0, 0, true));
  const std::string state = node.sysfs_root() + "/class/infiniband/mlx5_0/ports/1/state";
  std::filesystem::remove(std::filesystem::canonical(state));
  std::filesystem::create_directories(state);
  NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 1u);
  const auto problems = inv.AllProblems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], HasSubstr("/infiniband/mlx5_0/ports/1/state: Is a directory"));
  EXPECT_THAT(problems[0], HasSubstr("cannot read " + node.sysfs_root() + "/bus/pci/devices/"));
  EXPECT_EQ(inv.problems.begin()->first, inv.functions[0].address);
}

// H6 of the hardening round at 050f44e: a FIFO at an SF's device/sfnum (read for the "not
// served" report) blocked the first scan, SIGTERM and `discover` for ever. sysfs attributes
// are regular files: a FIFO there, or at a port's state, is unreadable and is never opened to
// wait nor read. While the test holds the FIFOs open with data in them, a reader that still
// reads them finds the data (and this fails, not hangs); once it lets go, the scan that a
// FIFO without a writer would block runs in a child that an alarm ends.
TEST_F(ScannerTest, AFifoAtAnAttributeIsUnreadableAndNeverWaitedOn) {
  node.Add(FakeNode::ConnectX(0, 0, /*infiniband=*/true));
  node.Add(FakeNode::ConnectX(1, 1, /*infiniband=*/false));
  node.AddSubFunction({.pf = "0000:11:00.0",
                       .aux_id = 2,
                       .sfnum = 88,
                       .netdev = "enp17s0f0s88",
                       .ibdev = "mlx5_2"});
  std::vector<int> writers;
  for (const auto& [attribute, contents] :
       {std::pair<std::string, std::string_view>{"mlx5_2/device/sfnum", "88\n"},
        {"mlx5_0/ports/1/state", "4: ACTIVE\n"}}) {
    const std::string file =
        std::filesystem::canonical(node.sysfs_root() + "/class/infiniband/" + attribute);
    std::filesystem::remove(file);
    ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0) << file;
    const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);  // a FIFO's O_RDWR never waits
    ASSERT_GE(fd, 0) << file;
    ASSERT_EQ(::write(fd, contents.data(), contents.size()), static_cast<ssize_t>(contents.size()));
    writers.push_back(fd);
  }
  const NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 2u);
  ASSERT_EQ(inv.functions[0].rdma_devices.size(), 1u);
  ASSERT_EQ(inv.functions[0].rdma_devices[0].ports.size(), 1u);
  EXPECT_EQ(inv.functions[0].rdma_devices[0].ports[0].state, PortState::kUnknown);
  EXPECT_TRUE(inv.functions[1].rdma_capable) << inv.functions[1].not_rdma_reason;
  EXPECT_THAT(inv.AllProblems(),
              ElementsAre(Cat("cannot read ", node.sysfs_root(),
                              "/bus/pci/devices/0000:10:00.0/infiniband/mlx5_0/ports/1/state: "
                              "not a regular file (what it says about the HCA is unknown)")));
  ASSERT_EQ(inv.unserved.size(), 1u);
  EXPECT_EQ(inv.unserved[0].ibdev, "mlx5_2");
  EXPECT_EQ(inv.unserved[0].where, "0000:11:00.0/mlx5_core.sf.2");
  ASSERT_EQ(inv.unserved[0].reason,
            "a sub-function (mlx5_core.sf.2) of 0000:11:00.0: sub-functions are not served; the "
            "PF's own RDMA device is, and SR-IOV VFs are PCI functions of their own");
  // A refresh reads the SF's sfnum after its functions' reads, whose problem list is gone.
  EXPECT_EQ(scanner.Refresh(inv, {"0000:10:00.0", "0000:11:00.0"}), inv);
  for (const int fd : writers) ::close(fd);
  EXPECT_EXIT(
      {
        ::alarm(10);  // a deadline, not a wait: the scan takes milliseconds or blocks for ever
        const bool same =
            scanner.Scan() == inv && scanner.Refresh(inv, {"0000:10:00.0", "0000:11:00.0"}) == inv;
        std::exit(same ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(ScannerTest, PortStateAndUsablePorts) {
  node.Add(FakeNode::ConnectX(0, 0, true));
  EXPECT_TRUE(HasUsablePort(scanner.Scan().functions[0]));
  node.SetPortState("mlx5_0", 1, "1: DOWN");
  const PciFunction down = scanner.Scan().functions[0];
  EXPECT_EQ(down.rdma_devices[0].ports[0].state, PortState::kDown);
  EXPECT_FALSE(HasUsablePort(down));
}

// The GID table as the kernel shows it (unused entries read as zeros). A management
// function's table is all zero; a port without a gids directory is "unknown"
// (docs/pod-env.md, "Usable ports, and `skipUnusable`").
TEST_F(ScannerTest, GidTables) {
  FakeFunction management = FakeNode::ConnectX(1, 0, true);
  management.zero_gids = true;
  management.ports = 2;
  node.Add(FakeNode::ConnectX(0, 0, true));
  node.Add(management);
  NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 2u);
  EXPECT_EQ(inv.functions[0].rdma_devices[0].ports[0].gids, GidTable::kHasGid);
  ASSERT_EQ(inv.functions[1].rdma_devices[0].ports.size(), 2u);
  EXPECT_EQ(inv.functions[1].rdma_devices[0].ports[0].gids, GidTable::kAllZero);
  EXPECT_EQ(inv.functions[1].rdma_devices[0].ports[1].gids, GidTable::kAllZero);
  // A GID appearing at a later index (an address added to a RoCE netdev) counts.
  const std::string gid3 = node.sysfs_root() + "/class/infiniband/mlx5_1/ports/2/gids/3";
  {
    std::ofstream(std::filesystem::canonical(gid3)) << "0000:0000:0000:0000:0000:ffff:0a00:0001\n";
  }
  inv = scanner.Scan();
  EXPECT_EQ(inv.functions[1].rdma_devices[0].ports[0].gids, GidTable::kAllZero);
  EXPECT_EQ(inv.functions[1].rdma_devices[0].ports[1].gids, GidTable::kHasGid);
  std::filesystem::remove_all(
      std::filesystem::canonical(node.sysfs_root() + "/class/infiniband/mlx5_0/ports/1/gids"));
  EXPECT_EQ(scanner.Scan().functions[0].rdma_devices[0].ports[0].gids, GidTable::kUnknown);
  EXPECT_TRUE(scanner.Scan().problems.empty());
  EXPECT_FALSE(IsNonZeroGid("0000:0000:0000:0000:0000:0000:0000:0000\n"));
  EXPECT_TRUE(IsNonZeroGid("fe80:0000:0000:0000:0002:c903:0001:0001\n"));
  EXPECT_FALSE(IsNonZeroGid(""));
}

// What a pod on RoCE should use (docs/pod-env.md, "The RoCE class and GID"): the port's
// class as MLNX_OFED's mlx5_ib shows it, and the first RoCE v2 GID holding an IPv4 address
// of the function's own netdev, laid out as roce_gid_mgmt.c fills the table.
TEST_F(ScannerTest, RoceClassAndIpv4GidOfTheOwnNetdev) {
  FakeFunction roce = FakeNode::ConnectX(2, 0, /*infiniband=*/false);
  roce.ipv4_gid = "c0a8:0101";
  roce.traffic_class = 106;
  FakeFunction ib = FakeNode::ConnectX(0, 0, /*infiniband=*/true);
  ib.ipv4_gid = "0a00:0001";  // not RoCE: never walked
  node.Add(ib);
  node.Add(FakeNode::ConnectX(1, 0, /*infiniband=*/false));  // no IPv4, no class file
  node.Add(roce);
  NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 3u);
  const Port& ib_port = inv.functions[0].rdma_devices[0].ports[0];
  EXPECT_EQ(ib_port.roce_v2_ipv4_gid, -1);
  EXPECT_EQ(ib_port.traffic_class, -1);
  const Port& plain = inv.functions[1].rdma_devices[0].ports[0];
  EXPECT_EQ(plain.roce_v2_ipv4_gid, -1);
  EXPECT_EQ(plain.traffic_class, -1);
  const Port& port = inv.functions[2].rdma_devices[0].ports[0];
  EXPECT_EQ(port.roce_v2_ipv4_gid, 3) << "2 is the same address as RoCE v1";
  EXPECT_EQ(port.traffic_class, 106);
  EXPECT_TRUE(inv.problems.empty());

  // The IPv4 GID of another netdev (a VLAN or macvlan on the port) is not the function's.
  const std::string attrs = std::filesystem::canonical(
      node.sysfs_root() + "/class/infiniband/mlx5_2/ports/1/gid_attrs/ndevs");
  std::ofstream(attrs + "/3") << "enp18s0f0np0.100\n";
  EXPECT_EQ(scanner.Scan().functions[2].rdma_devices[0].ports[0].roce_v2_ipv4_gid, -1);
  // An entry that goes between two reads (EINVAL on real sysfs: here a directory) is an
  // answer, not a problem.
  std::filesystem::remove(attrs + "/3");
  std::filesystem::create_directory(attrs + "/3");
  inv = scanner.Scan();
  EXPECT_EQ(inv.functions[2].rdma_devices[0].ports[0].roce_v2_ipv4_gid, -1);
  EXPECT_TRUE(inv.problems.empty());

  EXPECT_EQ(ParseGlobalTrafficClass("Global tclass=106\n"), 106);
  EXPECT_EQ(ParseGlobalTrafficClass("Global tclass=0\ntclass=24,dst_ip=10.0.0.0/8\n"), 0);
  EXPECT_EQ(ParseGlobalTrafficClass(""), std::nullopt) << "no class set";
  EXPECT_EQ(ParseGlobalTrafficClass("tclass=24,dst_ip=10.0.0.0/8\n"), std::nullopt);
  EXPECT_EQ(ParseGlobalTrafficClass("Global tclass=256\n"), std::nullopt);
  EXPECT_EQ(ParseGlobalTrafficClass("Global tclass=-1\n"), std::nullopt);
  EXPECT_EQ(ParseGlobalTrafficClass("106\n"), std::nullopt);
  EXPECT_TRUE(IsIpv4MappedGid("0000:0000:0000:0000:0000:ffff:c0a8:0101\n"));
  EXPECT_FALSE(IsIpv4MappedGid("fe80:0000:0000:0000:0002:c903:0001:0001\n"));
  EXPECT_FALSE(IsIpv4MappedGid("0000:0000:0000:0000:0000:ffff:c0a8:01\n"));
  EXPECT_FALSE(IsIpv4MappedGid("0000:0000:0000:0000:0000:ffff:c0a8x0101\n"));
  EXPECT_FALSE(IsIpv4MappedGid("0000:0000:0000:0000:0000:0000:0000:0000\n"));
  EXPECT_TRUE(IsRoceV2GidType("RoCE v2\n"));
  EXPECT_FALSE(IsRoceV2GidType("IB/RoCE v1\n"));
}

TEST_F(ScannerTest, ABrokenEntryDoesNotHideTheOthers) {
  node.Add(FakeNode::ConnectX(0, 0, true));
  std::filesystem::create_directories(node.sysfs_root() + "/bus/pci/devices/0000:99:00.0");
  NodeInventory inv = scanner.Scan();
  EXPECT_EQ(inv.functions.size(), 1u);
  ASSERT_EQ(inv.problems.size(), 1u);
  ASSERT_EQ(inv.problems.count("0000:99:00.0"), 1u);
  EXPECT_THAT(inv.AllProblems()[0], HasSubstr("0000:99:00.0/class"));
}

TEST_F(ScannerTest, CharDevicesFoundThroughClassDirsWhenTheDeviceLacksThem) {
  // A kernel without the per-device infiniband_verbs/ and infiniband_mad/ entries: only the
  // class directories say which char device belongs to which RDMA device.
  FakeFunction fn = FakeNode::ConnectX(0, 0, true);
  fn.uverbs = fn.umad = fn.issm = false;
  node.Add(fn);
  for (const char* entry : {"infiniband_verbs/uverbs7", "infiniband_mad/umad7"}) {
    const std::string dir = node.sysfs_root() + "/class/" + entry;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/ibdev") << "mlx5_0\n";
    std::ofstream(node.dev_root() + "/infiniband/" +
                  std::filesystem::path(entry).filename().string());
  }
  NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 1u);
  EXPECT_THAT(inv.functions[0].char_devices, ElementsAre("umad7", "uverbs7"));
  EXPECT_TRUE(inv.functions[0].rdma_capable) << inv.functions[0].not_rdma_reason;
}

TEST_F(ScannerTest, UeventAndSeparateFilesAgree) {
  node.Add(FakeNode::ConnectX(0, 1, true));
  ScanStats with_uevent;
  const PciFunction from_uevent = scanner.Scan(&with_uevent).functions[0];
  EXPECT_EQ(with_uevent.link_reads, 1u);  // the bus link, for the PCIe root
  std::filesystem::remove(node.sysfs_root() + "/devices/pci0000:00/0000:10:00.0/uevent");
  ScanStats stats;
  const PciFunction from_files = scanner.Scan(&stats).functions[0];
  EXPECT_EQ(from_uevent, from_files);
  EXPECT_EQ(from_files.driver, "mlx5_core");
  EXPECT_EQ(stats.link_reads, 2u);  // and the fallback read the driver link
}

TEST(SysfsParse, PciUevent) {
  auto ev = ParsePciUevent(
      "DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_ID=15B3:101B\n"
      "PCI_SUBSYS_ID=15B3:0007\nPCI_SLOT_NAME=0000:3b:00.0\n");
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->class_code, 0x020000u);
  EXPECT_EQ(ev->vendor, "15b3");
  EXPECT_EQ(ev->device, "101b");
  EXPECT_EQ(ev->driver, "mlx5_core");
  auto unbound = ParsePciUevent("PCI_CLASS=20700\nPCI_ID=15B3:1017\n");
  ASSERT_TRUE(unbound.has_value());
  EXPECT_EQ(unbound->driver, "");
  EXPECT_FALSE(ParsePciUevent("PCI_ID=15B3:1017\n").has_value());
  EXPECT_FALSE(ParsePciUevent("PCI_CLASS=20000\nPCI_ID=15B3\n").has_value());
  EXPECT_FALSE(ParsePciUevent("").has_value());
}

TEST_F(ScannerTest, VfsAreFunctionsOfTheirOwn) {
  node.Add(FakeNode::ConnectX(0, 0, false));
  FakeFunction vf = FakeNode::ConnectX(5, 0, false);
  vf.device = "101e";
  vf.physfn = "0000:10:00.0";
  node.Add(vf);
  NodeInventory inv = scanner.Scan();
  ASSERT_EQ(inv.functions.size(), 2u);
  EXPECT_EQ(inv.functions[1].device, "101e");
  EXPECT_TRUE(inv.functions[1].rdma_capable);
}

TEST(SysfsParse, PcieRootOfLink) {
  EXPECT_EQ(PcieRootOfLink("../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"), "pci0000:3a");
  EXPECT_EQ(PcieRootOfLink("/sys/devices/pci10000:e0/10000:e0:01.0"), "pci10000:e0");
  EXPECT_EQ(PcieRootOfLink("../../../devices/platform/soc/0000:00:00.0"), "");
  EXPECT_EQ(PcieRootOfLink("../../../xdevices/pci0000:00/0000:00:01.0"), "");
  EXPECT_EQ(PcieRootOfLink(""), "");
}

TEST(SysfsParse, PciAddresses) {
  EXPECT_TRUE(IsPciAddress("0000:3b:00.1"));
  EXPECT_TRUE(IsPciAddress("10000:e0:1f.7"));  // a VMD domain
  EXPECT_FALSE(IsPciAddress("0000:3b:00.8"));
  EXPECT_FALSE(IsPciAddress("000:3b:00.1"));
  EXPECT_FALSE(IsPciAddress("0000:3b:00"));
  EXPECT_FALSE(IsPciAddress("0000:3b:00.10"));
  EXPECT_FALSE(IsPciAddress("0000/3b:00.1"));
  EXPECT_FALSE(IsPciAddress("../../etc"));
  EXPECT_FALSE(IsPciAddress("pci0000:00"));
  EXPECT_EQ(PciAddressOfDevpath("/devices/pci0000:00/0000:00:03.0/0000:3b:00.0/net/ib0"),
            "0000:3b:00.0");
  EXPECT_EQ(PciAddressOfDevpath("/devices/pci0000:00/0000:00:03.0/0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(
      PciAddressOfDevpath("/devices/pci0000:00/0000:3b:00.0/0000:3b:00.2/infiniband_verbs/uverbs2"),
      "0000:3b:00.2");
  EXPECT_EQ(PciAddressOfDevpath("/devices/virtual/net/veth0"), std::nullopt);
  EXPECT_EQ(PciAddressOfDevpath(""), std::nullopt);
}

// Incremental rescans: an event that names one function re-reads that function only, and
// the result is what a full scan would have found.
class RefreshTest : public ScannerTest {
 protected:
  void SetUp() override {
    for (int i = 0; i < 4; ++i) node.Add(FakeNode::ConnectX(i, 0, true));
    before = scanner.Scan(&full);
  }
  ScanStats full;
  NodeInventory before;
};

TEST_F(RefreshTest, ReadsOnlyTheNamedFunction) {
  node.SetPortState("mlx5_2", 1, "1: DOWN");
  ScanStats one;
  const NodeInventory after = scanner.Refresh(before, {"0000:12:00.0"}, &one);
  EXPECT_EQ(after, scanner.Scan());
  EXPECT_NE(after, before);
  EXPECT_EQ(one.functions, 1u);
  EXPECT_EQ(full.functions, 4u);
  // A full scan: the rdma_cm stat, the bus listing, four functions' reads and the
  // class/infiniband listing (every RDMA device served: no link read); a refresh: the stat,
  // one function's reads and the listing.
  const size_t per_function = one.Reads() - 2;
  EXPECT_EQ(full.Reads(), 3 + 4 * per_function);
}

TEST_F(RefreshTest, HotAddAndRemove) {
  node.Add(FakeNode::ConnectX(7, 1, false));
  NodeInventory after = scanner.Refresh(before, {"0000:17:00.0"});
  EXPECT_EQ(after, scanner.Scan());
  ASSERT_EQ(after.functions.size(), 5u);
  EXPECT_EQ(after.functions[4].address, "0000:17:00.0");

  node.Remove("0000:11:00.0");
  ScanStats stats;
  after = scanner.Refresh(after, {"0000:11:00.0"}, &stats);
  EXPECT_EQ(after, scanner.Scan());
  EXPECT_EQ(after.functions.size(), 4u);
  EXPECT_TRUE(after.problems.empty());  // gone is not a problem
  EXPECT_EQ(stats.functions, 1u);
}

TEST_F(RefreshTest, ProblemsBelongToTheirFunction) {
  const std::string state = node.sysfs_root() + "/class/infiniband/mlx5_1/ports/1/state";
  std::filesystem::remove(std::filesystem::canonical(state));
  std::filesystem::create_directories(state);
  NodeInventory after = scanner.Refresh(before, {"0000:11:00.0"});
  ASSERT_EQ(after.problems.count("0000:11:00.0"), 1u);
  after = scanner.Refresh(after, {"0000:13:00.0"});  // another function's event keeps it
  EXPECT_EQ(after.problems.count("0000:11:00.0"), 1u);
  EXPECT_EQ(after, scanner.Scan());
  std::filesystem::remove(state);
  node.SetPortState("mlx5_1", 1, "4: ACTIVE");
  after = scanner.Refresh(after, {"0000:11:00.0"});
  EXPECT_TRUE(after.problems.empty());
  EXPECT_EQ(after, before);
}

TEST_F(RefreshTest, RdmaCmConcernsEveryFunction) {
  node.SetRdmaCm(false);
  ScanStats stats;
  const NodeInventory after = scanner.Refresh(before, {"0000:10:00.0"}, &stats);
  EXPECT_EQ(after, scanner.Scan());
  EXPECT_EQ(stats.functions, 4u);  // a full scan
  for (const auto& fn : after.functions) EXPECT_FALSE(fn.rdma_capable);
}

TEST_F(RefreshTest, NamesThatAreNotAddressesAreIgnored) {
  ScanStats stats;
  EXPECT_EQ(scanner.Refresh(before, {"..", "../../../etc", "0000:99:00.0"}, &stats), before);
  EXPECT_EQ(stats.functions, 1u);  // only the well-formed (absent) address was looked at
}

}  // namespace
}  // namespace rdmadp::sysfs
