// Every config that cannot serve anything makes the real binary exit 1 with a one-line
// message naming the field, before any socket exists. (An entry invalid on its own beside
// valid ones is skipped instead: e2e_test's BadEntryIsSkippedAndTheOthersServe.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test/support/plugin_process.h"
#include "test/support/temp_dir.h"

namespace rdmadp::testing {
namespace {

using ::testing::HasSubstr;

struct BadConfig {
  const char* name;
  const char* text;
  const char* message;  // expected on one line of the output
};

// A valid entry to pad lists with.
#define OK_ENTRY R"({"resourceName": "ok", "selectors": {"vendors": ["15b3"]}})"

const BadConfig kBadConfigs[] = {
    {"EmptyFile", "", "config: file is empty"},
    {"NotJson", "{\"configList\": [", "not valid JSON"},
    {"TopLevelArray", "[]", "config: top level: must be an object, got a list"},
    {"TopLevelNull", "null", "config: configList: no resources configuration found"},
    {"EmptyList", R"({"configList": []})", "config: configList: no resources configuration found"},
    {"ListNotAList", R"({"configList": {"a": 1}})", "config: configList: must be a list"},
    {"NegativeInterval", R"({"periodicUpdateInterval": -10, "configList": [)" OK_ENTRY "]}",
     "config: periodicUpdateInterval: must be >= 0 seconds, got -10"},
    {"HugeInterval", R"({"periodicUpdateInterval": 99999999999, "configList": [)" OK_ENTRY "]}",
     "config: periodicUpdateInterval: must be <= 31536000"},
    {"IntervalString", R"({"periodicUpdateInterval": "60", "configList": [)" OK_ENTRY "]}",
     "config: periodicUpdateInterval: must be an integer, got the string \"60\""},
    // An unknown top-level key alone is a warning (README.md, "Config"); with no configList
    // left, the file is refused and the ignored key named.
    {"UnknownTopKey", R"({"configLists": [)" OK_ENTRY "]}",
     "config: configLists: unknown key; did you mean \"configList\"?"},
    {"MissingName", R"({"configList": [{"selectors": {"vendors": ["15b3"]}}]})",
     "config: configList[0].resourceName: is missing or empty"},
    {"InvalidNameChars", R"({"configList": [{"resourceName": "hca-a", "devices": ["ib0"]}]})",
     "config: configList[0].resourceName: \"hca-a\" contains invalid characters"},
    {"NameRejectedByKubelet", R"({"configList": [{"resourceName": "_hca", "devices": ["ib0"]}]})",
     "config: configList[0]: the kubelet would reject resource name \"rdma/_hca\""},
    {"NameTooLong",
     R"({"configList": [{"resourceName": "a234567890123456789012345678901234567890123456789012345678901234", "devices": ["ib0"]}]})",
     "the name part is 64 characters, over 63"},
    {"PrefixUppercase",
     R"({"configList": [{"resourceName": "a", "resourcePrefix": "Nvidia.com", "devices": ["ib0"]}]})",
     "config: configList[0].resourcePrefix: \"Nvidia.com\" is not a DNS subdomain"},
    {"PrefixWithSlash",
     R"({"configList": [{"resourceName": "a", "resourcePrefix": "rdma/x", "devices": ["ib0"]}]})",
     "config: configList[0].resourcePrefix: \"rdma/x\" is not a DNS subdomain"},
    {"PrefixReserved",
     R"({"configList": [{"resourceName": "a", "resourcePrefix": "kubernetes.io", "devices": ["ib0"]}]})",
     "the kubernetes.io domain is reserved"},
    {"NegativeMax",
     R"({"configList": [{"resourceName": "b", "rdmaHcaMax": -3, "devices": ["ib0"]}]})",
     "config: configList[0].rdmaHcaMax: must be >= 0, got -3"},
    {"MaxOverKubeletLimit",
     R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 200000, "devices": ["ib0"]}]})",
     "config: configList[0].rdmaHcaMax: must be <= 100000"},
    {"MaxFloat",
     R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 1.5, "devices": ["ib0"]}]})",
     "config: configList[0].rdmaHcaMax: must be an integer, got the value 1.5"},
    {"MaxString",
     R"({"configList": [{"resourceName": "a", "rdmaHcaMax": "10", "devices": ["ib0"]}]})",
     "config: configList[0].rdmaHcaMax: must be an integer, got the string \"10\""},
    {"NeitherSelectorsNorDevices", R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 1}]})",
     "config: configList[0]: neither \"selectors\" nor \"devices\" is set"},
    {"BothSelectorsAndDevices",
     R"({"configList": [{"resourceName": "a", "devices": ["ib0"], "selectors": {"vendors": ["15b3"]}}]})",
     "config: configList[0]: cannot specify both \"selectors\" and \"devices\""},
    {"DevicesNotAList", R"({"configList": [{"resourceName": "a", "devices": "ib0"}]})",
     "config: configList[0].devices: must be a list of strings"},
    {"MisspelledSelectorKey",
     R"({"configList": [{"resourceName": "a", "selectors": {"linkType": ["ether"]}}]})",
     "config: configList[0].selectors.linkType: unknown key; did you mean \"linkTypes\"?"},
    {"IfNameWithSlash",
     R"({"configList": [{"resourceName": "a", "selectors": {"ifNames": ["ib0/1"]}}]})",
     "config: configList[0].selectors.ifNames[0]: \"ib0/1\" contains '/'"},
    {"IfNameTooLong",
     R"({"configList": [{"resourceName": "a", "selectors": {"ifNames": ["enp129s0f0np0v12"]}}]})",
     "config: configList[0].selectors.ifNames[0]: \"enp129s0f0np0v12\" is 16 characters"},
    {"DeviceWithSpace", R"({"configList": [{"resourceName": "a", "devices": ["ib 0"]}]})",
     "config: configList[0].devices[0]: \"ib 0\" contains ' '"},
    {"VendorNotHex",
     R"({"configList": [{"resourceName": "a", "selectors": {"vendors": ["mellanox"]}}]})",
     "config: configList[0].selectors.vendors[0]: \"mellanox\" is not a 4-digit hex PCI ID"},
    {"DeviceIdTooLong",
     R"({"configList": [{"resourceName": "a", "selectors": {"deviceIDs": ["10171"]}}]})",
     "config: configList[0].selectors.deviceIDs[0]: \"10171\" is not a 4-digit hex PCI ID"},
    {"LinkTypeEthernet",
     R"({"configList": [{"resourceName": "a", "selectors": {"linkTypes": ["ethernet"]}}]})",
     "config: configList[0].selectors.linkTypes[0]: \"ethernet\" is not a link type"},
    {"DriverWithSlash",
     R"({"configList": [{"resourceName": "a", "selectors": {"drivers": ["mlx5/core"]}}]})",
     "config: configList[0].selectors.drivers[0]: \"mlx5/core\" contains '/'"},
    {"SelectorsNotObject", R"({"configList": [{"resourceName": "a", "selectors": ["15b3"]}]})",
     "config: configList[0].selectors: must be an object, got a list"},
    {"EntryNotObject", R"({"configList": ["hca"]})",
     "config: configList[0]: must be an object, got the string \"hca\""},
    {"DuplicateKey",
     R"({"configList": [{"resourceName": "a", "resourceName": "b", "devices": ["ib0"]}]})",
     "config: configList[0].resourceName: duplicate key"},
    {"YamlBadIndent", "configList:\n  - resourceName: a\n   devices: [ib0]\n", "not valid YAML"},
};

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, ExitsOneWithAOneLineMessageAndNoSocket) {
  const BadConfig& c = GetParam();
  TempDir tmp;
  const std::string config = tmp.path() + "/config.json";
  std::ofstream(config) << c.text;
  const std::string plugins = tmp.path() + "/kubelet/device-plugins";
  std::filesystem::create_directories(plugins);
  RunResult r =
      RunToExit({"--config-file=" + config, "--kubelet-root-dir=" + tmp.path() + "/kubelet",
                 "--sysfs-root=" + tmp.path() + "/sys", "--no-link-up"},
                std::chrono::milliseconds(10000));
  EXPECT_EQ(r.status, 1) << r.output;
  // The expected text sits on a single line of the output.
  bool on_one_line = false;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    on_one_line = on_one_line || line.find(c.message) != std::string::npos;
  }
  EXPECT_TRUE(on_one_line) << "expected: " << c.message << "\noutput:\n" << r.output;
  EXPECT_THAT(r.output, HasSubstr("nothing was started"));
  EXPECT_TRUE(std::filesystem::is_empty(plugins)) << "a socket was created";
}

INSTANTIATE_TEST_SUITE_P(Table, BadConfigTest, ::testing::ValuesIn(kBadConfigs),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(BadConfig, TableIsLargeEnough) { EXPECT_GE(std::size(kBadConfigs), 25u); }

TEST(BadConfig, MissingFileNamesIt) {
  RunResult r = RunToExit({"--config-file=/nonexistent/config.json"}, std::chrono::seconds(10));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.output, HasSubstr("config: cannot read /nonexistent/config.json"));
}

TEST(BadFlags, UnknownFlagPrintsUsageAndExitsTwo) {
  RunResult r = RunToExit({"--no-such-flag"}, std::chrono::seconds(10));
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.output, HasSubstr("flag provided but not defined: -no-such-flag"));
  EXPECT_THAT(r.output, HasSubstr("Usage:"));
}

// `validate --go-compatible` proves a rollback to the Go plugin safe, or names what is not.
TEST(ValidateGoCompatible, PassesTheGoPluginsOwnFileAndNamesOurKeys) {
  TempDir tmp;
  const std::string path = tmp.path() + "/config.json";
  std::ofstream(path) << R"({"periodicUpdateInterval": 300, "configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
     "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"]}}]})";
  RunResult ok =
      RunToExit({"validate", "--go-compatible", "--config-file=" + path}, std::chrono::seconds(10));
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr(path + ": the Go plugin and network-operator's webhook accept "
                                          "it as written"));
  std::ofstream(path) << R"({"configList": [
    {"resourceName": "a", "rdmaHcaMax": 10, "selectors": {"pciAddresses": ["0000:3b:00.0"]}}]})";
  RunResult bad =
      RunToExit({"validate", "--go-compatible", "--config-file=" + path}, std::chrono::seconds(10));
  EXPECT_EQ(bad.status, 1) << "valid for us, not for the Go plugin";
  EXPECT_THAT(bad.output, HasSubstr("go-compatible: configList[0].selectors.pciAddresses: "));
  EXPECT_THAT(bad.output, HasSubstr(path + ": not safe for a rollback to the Go plugin"));
}

// A memlock these flags would not apply is said by validate (and discover), as the daemon's
// /readyz says it (issue 52: it used to be one start-up line).
TEST(ValidateMemlock, SaysWhenTheFlagsWouldNotApplyIt) {
  TempDir tmp;
  const std::string path = tmp.path() + "/config.json";
  std::ofstream(path) << R"({"configList": [{"resourceName": "ib", "rdmaHcaMax": 1,
    "selectors": {"vendors": ["15b3"]}, "memlock": "64Gi"}]})";
  auto validate = [&](std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"validate", "--config-file=" + path});
    return RunToExit(flags, std::chrono::seconds(10));
  };
  RunResult r = validate({});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("warning: configList[0].memlock (rdma/ib) would not be applied: "
                                  "memlock needs CDI (--use-cdi); with DeviceSpecs its containers "
                                  "keep the runtime's RLIMIT_MEMLOCK\n"));
  r = validate({"--use-cdi", "--memlock-hook-path=" + tmp.path() + "/missing/hook"});
  EXPECT_THAT(r.output,
              HasSubstr("warning: configList[0].memlock (rdma/ib) would not be applied: " +
                        tmp.path() + "/missing does not exist to install the hook in"));
  r = validate({"--use-cdi", "--memlock-hook-path=" + tmp.path() + "/hook"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("would not be applied")));
  // A directory the install would refuse (others can write to it) is said too.
  std::filesystem::create_directory(tmp.path() + "/open");
  std::filesystem::permissions(tmp.path() + "/open", std::filesystem::perms::all);
  r = validate({"--use-cdi", "--memlock-hook-path=" + tmp.path() + "/open/hook"});
  EXPECT_THAT(r.output, HasSubstr("would not be applied: the hook would not be installed: " +
                                  tmp.path() + "/open is writable by others than root"));
  RunResult d = RunToExit({"discover", "--config-file=" + path, "--sysfs-root=" + tmp.path()},
                          std::chrono::seconds(10));
  EXPECT_THAT(d.output, HasSubstr("configList[0].memlock (rdma/ib) would not be applied: memlock "
                                  "needs CDI (--use-cdi)"));
}

// validate prints a value from the file with its control characters escaped, as the log
// does: a newline in it used to start a forged line (H11 of the hardening round at 050f44e).
TEST(ValidateOutput, ControlCharactersInValuesAreEscaped) {
  TempDir tmp;
  const std::string path = tmp.path() + "/config.json";
  std::ofstream(path)
      << "{\"configList\": [{\"resourceName\": \"ok\", \"rdmaHcaMax\": 1, "
         "\"selectors\": {\"vendors\": [\"15b3\"]}},"
         "{\"resourceName\": \"b\", \"rdmaHcaMax\": 1, \"selectors\": "
         "{\"vendors\": [\"15b3\"]}, \"memlock\": \"1\\nerror: forged\\u001b[31m\"}]}";
  RunResult r = RunToExit({"validate", "--config-file=" + path}, std::chrono::seconds(10));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.output,
              HasSubstr("config: configList[1].memlock: \"1\\x0aerror: forged\\x1b[31m\""));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("\nerror: forged")));
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos);
}

TEST(Flags, VersionAndHelpExitZero) {
  RunResult v = RunToExit({"-v"}, std::chrono::seconds(10));
  EXPECT_EQ(v.status, 0);
  EXPECT_THAT(v.output,
              ::testing::MatchesRegex("k8s-rdma-shared-dp version:[^,]+, commit:[^,]+, date:.+\n"));
  // The version is the tree's (CMakeLists.txt's project(); scripts/version.sh), never a
  // placeholder or a -dev form: version_test checks it is that number.
  EXPECT_THAT(v.output, ::testing::ContainsRegex("version:[0-9]+\\.[0-9]+\\.[0-9]+, "));
  RunResult h = RunToExit({"--help"}, std::chrono::seconds(10));
  EXPECT_EQ(h.status, 0);
  EXPECT_THAT(h.output, HasSubstr("--registration-mode kubelet|watcher|auto"));
}

}  // namespace
}  // namespace rdmadp::testing
