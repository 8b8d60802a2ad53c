// The `discover` and `validate` commands of the real binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <sstream>

#include "test/support/plugin_harness.h"

namespace rdmadp::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class Commands : public ::testing::Test {
 protected:
  void SetUp() override {
    h.AddDemoHcas();
    h.node().SetPortState("mlx5_1", 1, "1: DOWN");
    h.WriteConfig(PluginHarness::DemoConfig());
  }
  RunResult Run(std::vector<std::string> args) { return h.RunCommand(std::move(args)); }
  PluginHarness h;
};

TEST_F(Commands, DiscoverTableShowsEveryFunctionAndItsPools) {
  RunResult r = Run({"discover"});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("PCI ADDRESS"));
  EXPECT_THAT(r.output, ::testing::ContainsRegex(
                            "0000:10:00.0 +15b3:1017 +mlx5_core +ib0 +infiniband +0 +yes +"
                            "issm0,umad0,uverbs0 +mlx5_0/1:ACTIVE +rdma/hca_shared_devices_a"));
  EXPECT_THAT(r.output, HasSubstr("mlx5_1/1:DOWN"));
  EXPECT_THAT(r.output,
              ::testing::ContainsRegex("0000:05:00.0 +8086:1521 +igb +eno1 +ether +- +no"));
  EXPECT_THAT(r.output, HasSubstr("0000:05:00.0: no RDMA device (no infiniband/ directory)"));
  EXPECT_THAT(r.output, HasSubstr("rdma/hca_shared_devices_a: 2 HCA(s), 1000 slot(s), Healthy"));
  EXPECT_THAT(r.output, HasSubstr("rdma/hca_shared_devices_b: 2 HCA(s), 500 slot(s), Healthy"));
  // What a pod of each pool would receive, and why mlx5_1 is not in the hints
  // (docs/pod-env.md).
  EXPECT_THAT(r.output, HasSubstr("Cannot serve a pod (left out of env hints; of pools with "
                                  "skipUnusable):\n  0000:11:00.0: mlx5_1 port 1 DOWN\n"));
  EXPECT_THAT(r.output,
              HasSubstr("rdma/hca_shared_devices_a: 2 HCA(s), 1000 slot(s), Healthy\n"
                        "    env NCCL_IB_HCA==mlx5_0:1\n"
                        "    env PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A=0000:10:00.0,0000:11:00.0\n"
                        "    env PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A_INFO=<JSON, "));
  EXPECT_THAT(r.output, HasSubstr("    env UCX_NET_DEVICES=mlx5_0:1\n"));
}

TEST_F(Commands, DiscoverJsonIsMachineReadable) {
  RunResult r = Run({"discover", "--output=json"});
  ASSERT_EQ(r.status, 0) << r.output;
  YAML::Node doc = YAML::Load(r.output);  // JSON is YAML
  ASSERT_EQ(doc["functions"].size(), 5u);
  YAML::Node intel;
  for (const auto& fn : doc["functions"]) {
    if (fn["address"].as<std::string>() == "0000:05:00.0") intel.reset(fn);
  }
  ASSERT_TRUE(intel.IsMap());
  EXPECT_FALSE(intel["rdmaCapable"].as<bool>());
  EXPECT_EQ(intel["pools"].size(), 0u);
  EXPECT_EQ(doc["functions"][2]["address"].as<std::string>(), "0000:11:00.0");
  EXPECT_EQ(doc["functions"][2]["ports"][0]["state"].as<std::string>(), "DOWN");
  EXPECT_EQ(doc["functions"][2]["numaNode"].as<int>(), 0);
  ASSERT_EQ(doc["pools"].size(), 2u);
  EXPECT_EQ(doc["pools"][0]["resource"].as<std::string>(), "rdma/hca_shared_devices_a");
  EXPECT_EQ(doc["pools"][0]["slots"].as<int>(), 1000);
  EXPECT_EQ(doc["pools"][0]["deviceNodes"].size(), 7u);
  EXPECT_EQ(doc["pools"][0]["env"].size(), 4u);
  EXPECT_EQ(doc["pools"][0]["env"]["NCCL_IB_HCA"].as<std::string>(), "=mlx5_0:1");
  EXPECT_EQ(doc["pools"][1]["env"].size(), 2u);
  EXPECT_EQ(doc["functions"][2]["unusableReason"].as<std::string>(), "mlx5_1 port 1 DOWN");
  EXPECT_EQ(doc["functions"][1]["unusableReason"].as<std::string>(), "");
  // The _INFO value is itself JSON, as a container reads it.
  YAML::Node info = YAML::Load(
      doc["pools"][0]["env"]["PCIDEVICE_RDMA_HCA_SHARED_DEVICES_A_INFO"].as<std::string>());
  EXPECT_EQ(info["0000:11:00.0"]["usable"].as<bool>(), false);
  EXPECT_TRUE(doc["rdmaCmPresent"].as<bool>());
}

// H11 of the hardening round at 050f44e: the table printed sysfs's names raw, so an RDMA
// device named with a line break forged a row of its own, and ESC and NUL reached the
// terminal. Each is escaped as the log escapes it (\xNN), the row stays one line. A name
// cannot hold NUL, a file can: the driver here comes from uevent's DRIVER=.
TEST_F(Commands, DiscoverTableEscapesControlCharactersInNames) {
  FakeFunction fn = FakeNode::ConnectX(6, 0, /*infiniband=*/false);
  fn.ibdev = "mlx5_6\nforged\x1b[31m";
  h.node().Add(fn);
  constexpr char kUevent[] = "DRIVER=mlx5\0_core\nPCI_CLASS=20000\nPCI_ID=15B3:1017\n";
  std::ofstream(h.node().sysfs_root() + "/bus/pci/devices/0000:16:00.0/uevent")
      << std::string(kUevent, sizeof(kUevent) - 1);
  RunResult r = Run({"discover"});
  ASSERT_EQ(r.status, 0) << r.output;
  std::vector<std::string> rows;
  std::vector<std::string> cells;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("0000:")) continue;
    rows.push_back(line.substr(0, 12));
    if (!line.starts_with("0000:16:00.0")) continue;
    std::istringstream row(line);
    for (std::string cell; row >> cell;) cells.push_back(cell);
  }
  EXPECT_THAT(rows, ElementsAre("0000:05:00.0", "0000:10:00.0", "0000:11:00.0", "0000:12:00.0",
                                "0000:13:00.0", "0000:16:00.0"));
  EXPECT_THAT(cells,
              ElementsAre("0000:16:00.0", "15b3:1017", "mlx5\\x00_core", "enp22s0f0np0", "ether",
                          "0", "yes", "umad4,uverbs4", "mlx5_6\\x0aforged\\x1b[31m/1:ACTIVE",
                          "rdma/hca_shared_devices_b"));
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.output.find('\0'), std::string::npos);
}

// What a new user with another vendor's NICs sees (docs/vendors.md). Each layout (from the
// kernel drivers' code: test/support/fake_node.cpp) is selectable by vendor, driver, PCI
// address or link type, with its exact device nodes and env; what cannot be served is
// named with why.
class VendorCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeNode& node = h.node();
    node.Add(FakeNode::IntelE810(0, 0, /*iwarp=*/false));
    node.Add(FakeNode::IntelE810(1, 0, /*iwarp=*/true));
    node.Add(FakeNode::BroadcomBnxtRe(0, 1));
    node.Add(FakeNode::AlibabaErdma(0));
    node.Add(FakeNode::ConnectXWithoutNetdev(0, 1));
    node.Add(FakeNode::ConnectX(1, 1, /*infiniband=*/false));
    node.AddSubFunction({.pf = "0000:11:00.0",
                         .aux_id = 2,
                         .sfnum = 88,
                         .netdev = "enp17s0f0s88",
                         .ibdev = "mlx5_2"});
    node.AddVirtualRdmaDevice("erdma_1", /*iwarp=*/true);
    h.WriteConfig(R"({"configList": [
      {"resourceName": "e810", "rdmaHcaMax": 4, "selectors": {"vendors": ["8086"]},
       "envHints": ["ucx"]},
      {"resourceName": "bnxt", "rdmaHcaMax": 4, "selectors": {"drivers": ["bnxt_en"]}},
      {"resourceName": "erdma", "rdmaHcaMax": 4, "selectors": {"pciAddresses": ["0000:00:06.0"]}},
      {"resourceName": "ib", "rdmaHcaMax": 4, "selectors": {"linkTypes": ["infiniband"]},
       "envHints": ["nccl"]}]})");
  }
  RunResult Run(std::vector<std::string> args) { return h.RunCommand(std::move(args)); }
  PluginHarness h;
};

TEST_F(VendorCommands, EachLayoutIsSelectableOrExplained) {
  RunResult r = Run({"discover", "--output=json"});
  ASSERT_EQ(r.status, 0) << r.output;
  YAML::Node doc = YAML::Load(r.output);
  std::map<std::string, YAML::Node> pools;
  for (const auto& p : doc["pools"]) pools[p["resource"].as<std::string>()].reset(p);
  auto list = [](const YAML::Node& n) {
    std::vector<std::string> out;
    for (const auto& v : n) out.push_back(v.as<std::string>());
    return out;
  };
  auto env = [](const YAML::Node& pool, const std::string& name) {
    return pool["env"][name] ? pool["env"][name].as<std::string>() : std::string("(unset)");
  };
  ASSERT_EQ(pools.size(), 4u) << r.output;
  EXPECT_THAT(list(pools["rdma/e810"]["hcas"]), ElementsAre("0000:2f:00.0", "0000:30:00.0"));
  EXPECT_THAT(
      list(pools["rdma/e810"]["deviceNodes"]),
      ElementsAre("/dev/infiniband/issm0", "/dev/infiniband/umad0", "/dev/infiniband/uverbs0",
                  "/dev/infiniband/uverbs1", "/dev/infiniband/rdma_cm"));
  EXPECT_EQ(env(pools["rdma/e810"], "PCIDEVICE_RDMA_E810"), "0000:2f:00.0,0000:30:00.0");
  EXPECT_EQ(env(pools["rdma/e810"], "UCX_NET_DEVICES"), "irdma0:1,irdma1:1");
  EXPECT_THAT(list(pools["rdma/bnxt"]["deviceNodes"]),
              ElementsAre("/dev/infiniband/issm2", "/dev/infiniband/umad2",
                          "/dev/infiniband/uverbs2", "/dev/infiniband/rdma_cm"));
  EXPECT_EQ(env(pools["rdma/bnxt"], "PCIDEVICE_RDMA_BNXT"), "0000:41:00.0");
  EXPECT_THAT(list(pools["rdma/erdma"]["deviceNodes"]),
              ElementsAre("/dev/infiniband/uverbs3", "/dev/infiniband/rdma_cm"));
  EXPECT_EQ(env(pools["rdma/erdma"], "PCIDEVICE_RDMA_ERDMA"), "0000:00:06.0");
  EXPECT_THAT(list(pools["rdma/ib"]["hcas"]), ElementsAre("0000:10:00.0"));
  EXPECT_EQ(env(pools["rdma/ib"], "NCCL_IB_HCA"), "=mlx5_0:1");
  YAML::Node info = YAML::Load(env(pools["rdma/ib"], "PCIDEVICE_RDMA_IB_INFO"));
  EXPECT_EQ(info["0000:10:00.0"]["linkLayer"].as<std::string>(), "InfiniBand");
  ASSERT_EQ(doc["unserved"].size(), 2u) << r.output;
  EXPECT_EQ(doc["unserved"][0]["rdmaDevice"].as<std::string>(), "erdma_1");
  EXPECT_EQ(doc["unserved"][1]["where"].as<std::string>(), "0000:11:00.0/mlx5_core.sf.2");

  RunResult table = Run({"discover"});
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_THAT(table.output,
              HasSubstr("\nRDMA devices not served:\n  erdma_1 (virtual): a virtual RDMA device"));
  EXPECT_THAT(table.output, HasSubstr("\n  mlx5_2 (0000:11:00.0/mlx5_core.sf.2): a sub-function "
                                      "(mlx5_core.sf.2, sfnum 88) of 0000:11:00.0"));
}

// A DRA entry's containers get the variables per claim and request (docs/pod-env.md, "DRA").
TEST_F(Commands, DiscoverShowsWhatADraClaimWouldReceive) {
  h.WriteConfig(R"({"configList": [
      {"resourceName": "ib", "rdmaHcaMax": 4, "frontend": "dra", "envHints": ["nccl"],
       "selectors": {"linkTypes": ["infiniband"]}}]})");
  RunResult r = Run({"discover"});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("rdma/ib: 2 HCA(s), 4 slot(s), Healthy\n"
                        "    env NCCL_IB_HCA==mlx5_0:1\n"
                        "    env PCIDEVICE__<CLAIM>__<REQUEST>=0000:10:00.0,0000:11:00.0\n"
                        "    env PCIDEVICE__<CLAIM>__<REQUEST>_INFO=<JSON, "));
}

TEST_F(Commands, DiscoverWithoutAConfigStillListsTheNode) {
  RunResult r =
      RunToExit({"discover", "--config-file=/nonexistent.json",
                 "--sysfs-root=" + h.node().sysfs_root(), "--dev-root=" + h.node().dev_root()},
                milliseconds(10000));
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.output, HasSubstr("pools not shown"));
  EXPECT_THAT(r.output, HasSubstr("0000:13:00.0"));
}

// `kubectl exec <pod> -- k8s-rdma-shared-dp discover` runs with no flags in the DaemonSet's
// pod, whose /dev is the runtime's: the daemon's roots come from the environment the
// DaemonSet sets (RDMADP_DEV_ROOT=/host/dev, ...), so discover sees what the daemon sees
// (docs/troubleshooting.md).
TEST_F(Commands, DiscoverInThePodReadsTheDaemonsRootsFromItsEnvironment) {
  struct Env {
    std::vector<std::string> names;
    ~Env() {
      for (const auto& n : names) ::unsetenv(n.c_str());
    }
  } env;
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"RDMADP_CONFIG_FILE", h.config_path()},
           {"RDMADP_SYSFS_ROOT", h.node().sysfs_root()},
           {"RDMADP_DEV_ROOT", h.node().dev_root()}}) {
    ::setenv(name.c_str(), value.c_str(), 1);
    env.names.push_back(name);
  }
  RunResult r = RunToExit({"discover"}, milliseconds(10000));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::ContainsRegex("0000:10:00.0 .* yes +issm0,umad0,uverbs0 "));
  EXPECT_THAT(r.output, HasSubstr("rdma/hca_shared_devices_a: 2 HCA(s), 1000 slot(s), Healthy"));
}

// The daemon skips an invalid entry and serves the rest; discover must not hide it.
TEST_F(Commands, DiscoverListsSkippedEntriesAndTheirProblemsInBothOutputs) {
  h.WriteConfig(R"({"configList": [
      {"resourceName": "good", "rdmaHcaMax": 10, "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "bad", "rdmaHcaMax": -1, "selectors": {"vendors": ["15b3"]}}]})");
  RunResult table = Run({"discover"});
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_THAT(table.output, HasSubstr("rdma/good: 4 HCA(s), 10 slot(s), Healthy"));
  EXPECT_THAT(table.output, HasSubstr("configList[1] (bad): skipped, not served"));
  EXPECT_THAT(table.output, HasSubstr("problem: config: configList[1].rdmaHcaMax: must be >= 0"));
  RunResult json = Run({"discover", "--output=json"});
  ASSERT_EQ(json.status, 0) << json.output;
  YAML::Node doc = YAML::Load(json.output);
  ASSERT_EQ(doc["skipped"].size(), 1u);
  EXPECT_EQ(doc["skipped"][0]["index"].as<int>(), 1);
  EXPECT_EQ(doc["skipped"][0]["resourceName"].as<std::string>(), "bad");
  EXPECT_THAT(doc["skipped"][0]["problems"][0].as<std::string>(),
              HasSubstr("configList[1].rdmaHcaMax"));
  EXPECT_THAT(doc["problems"][0].as<std::string>(), HasSubstr("configList[1].rdmaHcaMax"));
}

TEST_F(Commands, ValidateAcceptsAGoodConfig) {
  RunResult r = Run({"validate"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("valid; 2 resource(s), periodic rescan every 60 s"));
  EXPECT_THAT(r.output,
              HasSubstr("rdma/hca_shared_devices_a: 1000 slot(s); env hints: nccl, ucx\n"));
  EXPECT_THAT(r.output, HasSubstr("rdma/hca_shared_devices_b: 500 slot(s)\n"));
}

// deviceModel perHca (issue 56): validate names the model; discover lists each HCA's IDs,
// NUMA node and health (mlx5_1's port is DOWN here), in the table and the JSON.
TEST_F(Commands, ValidateAndDiscoverShowThePerHcaModelAndEachHcasIds) {
  h.WriteConfig(R"({"configList": [{"resourceName": "hcas", "rdmaHcaMax": 2,
      "deviceModel": "perHca", "selectors": {"linkTypes": ["infiniband"]}}]})");
  RunResult v = Run({"validate"});
  EXPECT_EQ(v.status, 0) << v.output;
  EXPECT_THAT(v.output, HasSubstr("  rdma/hcas: deviceModel perHca, 2 device(s) per HCA (IDs "
                                  "<PCI address>-<share>)\n"));
  RunResult table = Run({"discover"});
  ASSERT_EQ(table.status, 0) << table.output;
  EXPECT_THAT(table.output,
              HasSubstr("  rdma/hcas: 2 HCA(s), deviceModel perHca, 2 device(s) per HCA, 2 of 4 "
                        "Healthy\n"
                        "    0000:10:00.0 (NUMA 0): IDs 0000:10:00.0-0..0000:10:00.0-1, Healthy\n"
                        "    0000:11:00.0 (NUMA 0): IDs 0000:11:00.0-0..0000:11:00.0-1, Unhealthy\n"
                        "    (the env below is for a container given every HCA; one given fewer "
                        "gets those only)\n"));
  RunResult json = Run({"discover", "--output=json"});
  ASSERT_EQ(json.status, 0) << json.output;
  YAML::Node pool = YAML::Load(json.output)["pools"][0];
  EXPECT_EQ(pool["deviceModel"].as<std::string>(), "perHca");
  EXPECT_EQ(pool["slots"].as<int>(), 4);
  EXPECT_EQ(pool["sharesPerHca"].as<int>(), 2);
  ASSERT_EQ(pool["perHca"].size(), 2u);
  EXPECT_EQ(pool["perHca"][1]["address"].as<std::string>(), "0000:11:00.0");
  EXPECT_EQ(pool["perHca"][1]["numaNode"].as<int>(), 0);
  EXPECT_FALSE(pool["perHca"][1]["healthy"].as<bool>());
  EXPECT_EQ(pool["perHca"][1]["firstId"].as<std::string>(), "0000:11:00.0-0");
  EXPECT_EQ(pool["perHca"][1]["lastId"].as<std::string>(), "0000:11:00.0-1");
  // Too many shares for one ListAndWatch: discover says what is not advertised.
  h.WriteConfig(R"({"configList": [{"resourceName": "hcas", "rdmaHcaMax": 100000,
      "deviceModel": "perHca", "selectors": {"linkTypes": ["infiniband"]}}]})");
  RunResult cut = Run({"discover"});
  ASSERT_EQ(cut.status, 0) << cut.output;
  EXPECT_THAT(cut.output, ::testing::ContainsRegex(
                              "    not advertised: rdma/hcas: advertising [0-9]+ of the 100000 "
                              "shares of each of its 2 HCAs: more would make the device list "
                              "larger than the kubelet's 4194304-byte message limit"));
  // A slots entry says "slots".
  h.WriteConfig(PluginHarness::DemoConfig());
  RunResult slots = Run({"discover", "--output=json"});
  EXPECT_EQ(YAML::Load(slots.output)["pools"][0]["deviceModel"].as<std::string>(), "slots");
}

TEST_F(Commands, NamesTooLongForASocketPathAreRejectedByValidateAndTheDaemon) {
  const std::string name(62, 'x');  // valid for Kubernetes, too long for the socket path
  h.WriteConfig(R"({"configList": [{"resourceName": ")" + name +
                R"(", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}}]})");
  const std::string root = "--kubelet-root-dir=/var/lib/kubelet";
  RunResult v = Run({"validate", root});
  EXPECT_EQ(v.status, 1) << v.output;
  RunResult daemon = Run({root});
  EXPECT_EQ(daemon.status, 1) << daemon.output;
  for (const RunResult& r : {v, daemon}) {
    EXPECT_THAT(r.output, HasSubstr("config: configList[0].resourceName: \"" + name +
                                    "\" is too long for its socket in "
                                    "/var/lib/kubelet/device-plugins: 109 bytes, the limit for a "
                                    "unix socket path is 107 (use at most 60 characters here"));
  }
  EXPECT_THAT(daemon.output, HasSubstr("nothing was started"));
}

// Issue 55: `validate` said "valid" for DRA entries that a start skips; it runs every DRA
// check that needs no pod (the node's name comes from the DaemonSet's downward API): the
// driver name and the registration socket's length, with the daemon's own words.
TEST_F(Commands, ValidateRunsTheDraChecksThatNeedNoPod) {
  h.WriteConfig(R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 4, "frontend": "dra",
      "selectors": {"vendors": ["15b3"]}}, {"resourceName": "b", "rdmaHcaMax": 4,
      "selectors": {"vendors": ["15b3"]}}]})");
  RunResult bad = Run({"validate", "--dra-driver-name=Bad_Driver"});
  EXPECT_EQ(bad.status, 1) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("config: configList[0].frontend: --dra-driver-name "
                                    "\"Bad_Driver\" "));
  EXPECT_THAT(bad.output, HasSubstr("configList[0] (a) would be skipped at start"));
  const std::string long_name = std::string(60, 'd') + ".example.com";
  RunResult too_long =
      Run({"validate", "--kubelet-root-dir=/var/lib/kubelet", "--dra-driver-name=" + long_name});
  EXPECT_EQ(too_long.status, 1) << too_long.output;
  EXPECT_THAT(too_long.output,
              HasSubstr("config: configList[0].frontend: the DRA registration socket "
                        "/var/lib/kubelet/plugins_registry/" +
                        long_name +
                        "-12345678-reg.sock would be 124 characters; unix sockets allow 107: "
                        "shorten --dra-driver-name"));
  RunResult good = Run({"validate"});
  EXPECT_EQ(good.status, 0) << good.output;
  EXPECT_THAT(good.output, HasSubstr("valid; 2 resource(s)"));
}

TEST_F(Commands, ValidatePrintsTheDaemonsMessages) {
  h.WriteConfig(
      R"({"configList": [{"resourceName": "a", "rdmaHcaMax": -3, "devices": ["ib/0"]}]})");
  RunResult v = Run({"validate"});
  EXPECT_EQ(v.status, 1);
  RunResult daemon = Run({"--kubelet-root-dir=" + h.kubelet_root()});
  EXPECT_EQ(daemon.status, 1);
  for (const char* line : {"config: configList[0].rdmaHcaMax: must be >= 0, got -3",
                           "config: configList[0].devices[0]: \"ib/0\" contains '/'"}) {
    EXPECT_THAT(v.output, HasSubstr(line));
    EXPECT_THAT(daemon.output, HasSubstr(line));
  }
}

TEST_F(Commands, JsonLogLinesAreOneObjectEach) {
  h.WriteConfig(R"({"configList": []})");
  RunResult r = Run({"--log-format=json", "--kubelet-root-dir=" + h.kubelet_root()});
  EXPECT_EQ(r.status, 1);
  std::istringstream lines(r.output);
  int errors = 0;
  for (std::string line; std::getline(lines, line);) {
    YAML::Node obj = YAML::Load(line);  // each line is a JSON object on its own
    ASSERT_TRUE(obj.IsMap()) << line;
    ASSERT_TRUE(obj["time"] && obj["level"] && obj["msg"]) << line;
    if (obj["level"].as<std::string>() == "error") ++errors;
  }
  EXPECT_GE(errors, 2);
  EXPECT_THAT(r.output,
              HasSubstr(R"("msg":"config: configList: no resources configuration found)"));
}

// `render`: DRA objects for a valid config; bad input is one line naming the field, exit 1.
// Only the entries served through DRA get classes, the templates go to --namespace, and the
// admission policy names the driver render was given (docs/reference.md, "Command line").
TEST_F(Commands, RenderPrintsDraObjectsAndRejectsBadInput) {
  RunResult none = Run({"render"});  // the harness config: device-plugin entries only
  EXPECT_EQ(none.status, 1);
  EXPECT_THAT(none.output, HasSubstr("no configList entry has \"frontend\": \"dra\""));
  h.WriteConfig(R"({"configList": [
      {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 8, "frontend": "dra",
       "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 8,
       "selectors": {"vendors": ["15b3"]}}]})");
  RunResult ok = Run({"render", "--namespace=ml", "--dra-driver-name=rdma.example.com"});
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("name: \"hca-shared-devices-a.rdma.example.com\""));
  EXPECT_THAT(ok.output, Not(HasSubstr("hca-shared-devices-b")));
  EXPECT_THAT(ok.output, HasSubstr("matchAttribute: \"resource.kubernetes.io/pcieRoot\""));
  EXPECT_THAT(ok.output, HasSubstr("namespace: \"ml\""));
  EXPECT_THAT(ok.output, HasSubstr("variables.slice.spec.driver == \\\"rdma.example.com\\\""));
  RunResult driver = Run({"render", "--dra-driver-name=RDMA_Driver"});
  EXPECT_EQ(driver.status, 1);
  EXPECT_THAT(driver.output, HasSubstr("-dra-driver-name: \"RDMA_Driver\""));
  RunResult ns = Run({"render", "--namespace=ML.jobs"});
  EXPECT_EQ(ns.status, 1);
  EXPECT_THAT(ns.output, HasSubstr("-namespace: \"ML.jobs\""));
  h.WriteConfig(R"({"configList": [
      {"resourceName": "hca_a", "rdmaHcaMax": 1, "frontend": "dra",
       "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "HCA_a", "rdmaHcaMax": 1, "frontend": "dra",
       "selectors": {"vendors": ["15b3"]}}]})");
  RunResult clash = Run({"render"});
  EXPECT_EQ(clash.status, 1);
  EXPECT_THAT(clash.output, HasSubstr("both name DRA pool and DeviceClass \"hca-a\""));
  EXPECT_EQ(clash.output.find("kind:"), std::string::npos) << "nothing rendered";
}

// Sets environment variables for the children this test starts, and unsets them after.
struct ScopedEnv {
  explicit ScopedEnv(const std::vector<std::pair<std::string, std::string>>& vars) {
    for (const auto& [name, value] : vars) {
      ::setenv(name.c_str(), value.c_str(), 1);
      names.push_back(name);
    }
  }
  ~ScopedEnv() {
    for (const auto& n : names) ::unsetenv(n.c_str());
  }
  std::vector<std::string> names;
};

size_t Occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// A config with a top-level key the Go plugin ignores (a newer release's, or a typo) made
// `validate` exit 1 and the daemon refuse to start. Now `validate` prints the warning and
// says valid (exit 0; README.md, "Config"). Fails on the old code: exit 1, "unknown key" as
// an error.
TEST_F(Commands, ValidateWarnsOfAnUnknownTopLevelKeyAndSaysValid) {
  h.WriteConfig(R"({"someFutureKey": {"enabled": true}, "configList": [
      {"resourceName": "a", "rdmaHcaMax": 10, "selectors": {"vendors": ["15b3"]}}]})");
  RunResult r = Run({"validate"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("warning: config: someFutureKey: unknown key (ignored, as the "
                                  "Go plugin ignores it; known keys: periodicUpdateInterval, "
                                  "configList)\n"));
  EXPECT_THAT(r.output, HasSubstr("valid; 1 resource(s)"));
}

// A malformed --health-address (or both listeners on one port) was retried for ever by the
// running daemon; now it is a usage error before anything starts: exit 2, one line naming
// the flag (docs/observability.md). Fails on the old code: the daemon ran (killed at the
// timeout).
TEST_F(Commands, AMalformedListenAddressIsAUsageError) {
  const std::string root = "--kubelet-root-dir=" + h.kubelet_root();
  RunResult bracket = Run({root, "--health-address=[::1"});
  EXPECT_EQ(bracket.status, 2) << bracket.output;
  EXPECT_THAT(bracket.output,
              HasSubstr("invalid value \"[::1\" for -health-address: no ']' after the IPv6 "
                        "address (use [IPv6]:PORT)\n"));
  RunResult same = Run({root, "--metrics-address=127.0.0.1:18109", "--health-address=:18109"});
  EXPECT_EQ(same.status, 2) << same.output;
  EXPECT_THAT(same.output, HasSubstr("for -health-address: it takes the port of "
                                     "-metrics-address \"127.0.0.1:18109\""));
}

// RDMADP_LOG_LEVEL=bogus made `--log-level=info` exit 2, and a misspelled RDMADP_DEVROOT was
// ignored without a word. The command line now wins (the variable is not read), and the
// stray name is warned about once, naming the variable meant (docs/reference.md, "Command line").
// Fails on the old code: exit 2.
TEST_F(Commands, TheCommandLineWinsOverABadVariableAndAStrayNameIsWarnedOnce) {
  ScopedEnv env({{"RDMADP_LOG_LEVEL", "bogus"}, {"RDMADP_DEVROOT", "/host/dev"}});
  RunResult r = Run({"validate", "--log-level=info"});
  EXPECT_EQ(r.status, 0) << r.output;
  const std::string warning =
      "warning: environment RDMADP_DEVROOT: no flag reads it, ignored; did you mean "
      "RDMADP_DEV_ROOT (--dev-root)?\n";
  EXPECT_EQ(Occurrences(r.output, warning), 1u) << r.output;
  EXPECT_THAT(r.output, HasSubstr("valid; 2 resource(s)"));
  // Without the flag on the command line the variable's value is still refused.
  RunResult bad = Run({"validate"});
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("environment RDMADP_LOG_LEVEL: invalid value \"bogus\""));
}

// `render` took any --gpu-device-class (a newline, "../GPU", 300 characters) and printed
// DeviceClass names over Kubernetes' 253 characters (a valid 253-character driver name after
// the resource's label), all with exit 0. Now each is one line naming the flag, exit 1 as for
// --dra-driver-name and --namespace, and nothing is printed on stdout (docs/reference.md,
// "Command line"). Fails on the old code: every run below exited 0.
TEST_F(Commands, RenderChecksTheGpuClassAndTheDeviceClassNamesItComposes) {
  h.WriteConfig(R"({"configList": [
      {"resourceName": "hca_a", "rdmaHcaMax": 8, "frontend": "dra",
       "selectors": {"vendors": ["15b3"]}}]})");
  RunResult ok = Run({"render", "--gpu-device-class=gpu.example.com"});
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("deviceClassName: \"gpu.example.com\""));
  RunResult none = Run({"render", "--gpu-device-class=none"});
  EXPECT_EQ(none.status, 0) << none.output;
  EXPECT_THAT(none.output, Not(HasSubstr("-with-gpu")));
  for (const std::string& gpu :
       {std::string("gpu\nclass"), std::string("../GPU"), std::string(300, 'g')}) {
    RunResult bad = Run({"render", "--gpu-device-class=" + gpu});
    EXPECT_EQ(bad.status, 1) << bad.output;
    EXPECT_THAT(bad.output, HasSubstr("-gpu-device-class: \""));
    EXPECT_EQ(bad.output.find("kind:"), std::string::npos) << "nothing rendered";
  }
  RunResult newline = Run({"render", "--gpu-device-class=gpu\nclass"});
  EXPECT_THAT(newline.output,
              HasSubstr("-gpu-device-class: \"gpu\\nclass\" it contains '\\x0a' (only "
                        "lowercase letters, digits, '-' and '.') (a DeviceClass name, e.g. "
                        "gpu.nvidia.com; none: no GPU + HCA template)\n"))
      << "one line";
  EXPECT_THAT(Run({"render", "--gpu-device-class=" + std::string(300, 'g')}).output,
              HasSubstr("it is 300 characters, over 253"));
  // Four labels, 253 characters: a valid driver name whose DeviceClass name would not be.
  const std::string driver = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                             std::string(63, 'c') + "." + std::string(61, 'd');
  ASSERT_EQ(driver.size(), 253u);
  RunResult composed = Run({"render", "--dra-driver-name=" + driver});
  EXPECT_EQ(composed.status, 1) << composed.output;
  EXPECT_THAT(composed.output, HasSubstr("-dra-driver-name: the DeviceClass name \"hca-a.aaaa"));
  EXPECT_THAT(composed.output,
              HasSubstr("of configList[0] (hca_a): it is 259 characters, over 253; shorten "
                        "--dra-driver-name or the resourceName\n"));
  EXPECT_EQ(composed.output.find("kind:"), std::string::npos) << "nothing rendered";
}

}  // namespace
}  // namespace rdmadp::testing
