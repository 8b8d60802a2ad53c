#include "pkg/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "pkg/config/k8s_names.h"
#include "pkg/config/link_types.h"
#include "pkg/text/cat.h"
#include "test/support/temp_dir.h"

namespace rdmadp::config {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every problem, whether it fails the file or only skips its entry.
std::string Errors(std::string_view text) {
  auto r = ParseConfig(text);
  if (!r.ok()) return std::string(r.status().message());
  if (r->skipped.empty()) return "<ok>";
  std::string out;
  for (const auto& e : r->skipped) {
    for (const auto& p : e.problems) out += p + "\n";
  }
  return out;
}

TEST(ParseConfig, GoPluginReadmeExample) {
  auto r = ParseConfig(R"({
    "periodicUpdateInterval": 300,
    "configList": [{
        "resourceName": "hca_shared_devices_a",
        "rdmaHcaMax": 1000,
        "devices": ["ib0", "ib1"]
      },
      {
        "resourceName": "hca_shared_devices_b",
        "resourcePrefix": "example.com",
        "rdmaHcaMax": 500,
        "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "ifNames": ["ib3", "ib4"]}
      }]
  })");
  ASSERT_TRUE(r.ok()) << r.status();
  const Config& c = r->config;
  EXPECT_EQ(c.periodic_update_interval_seconds, 300);
  ASSERT_EQ(c.resources.size(), 2u);
  EXPECT_EQ(c.resources[0].FullName(), "rdma/hca_shared_devices_a");
  EXPECT_EQ(c.resources[0].rdma_hca_max, 1000);
  EXPECT_EQ(c.resources[0].selectors.if_names, (std::vector<std::string>{"ib0", "ib1"}));
  EXPECT_EQ(c.resources[1].FullName(), "example.com/hca_shared_devices_b");
  EXPECT_EQ(c.resources[1].selectors.vendors, std::vector<std::string>{"15b3"});
  EXPECT_EQ(c.resources[1].selectors.device_ids, std::vector<std::string>{"1017"});
  ASSERT_EQ(r->warnings.size(), 1u);  // deprecated "devices"
  EXPECT_THAT(r->warnings[0], HasSubstr("configList[0].devices: deprecated"));
}

TEST(ParseConfig, IntervalDefaultsNullAndZero) {
  const char* list = R"("configList": [{"resourceName": "a", "selectors": {"ifNames": ["ib0"]}}])";
  auto absent = ParseConfig(std::string("{") + list + "}");
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->config.periodic_update_interval_seconds, 60);
  auto null = ParseConfig(std::string(R"({"periodicUpdateInterval": null, )") + list + "}");
  ASSERT_TRUE(null.ok());
  EXPECT_EQ(null->config.periodic_update_interval_seconds, 60);
  auto zero = ParseConfig(std::string(R"({"periodicUpdateInterval": 0, )") + list + "}");
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->config.periodic_update_interval_seconds, 0);
  EXPECT_EQ(absent->config.resources[0].rdma_hca_max, 0);  // Go's default; advertises nothing
  EXPECT_EQ(absent->config.resources[0].resource_prefix, "rdma");
}

TEST(ParseConfig, YamlWithPlainScalars) {
  auto r = ParseConfig(R"(
periodicUpdateInterval: 30
configList:
  - resourceName: hca_a
    rdmaHcaMax: 63
    selectors:
      vendors: [15b3]
      deviceIDs: ["101B", 0x1017]
      linkTypes: [infiniband]
)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.periodic_update_interval_seconds, 30);
  EXPECT_EQ(r->config.resources[0].rdma_hca_max, 63);
  // Hex IDs are normalised (an extension over the Go plugin, which matches only exact text).
  EXPECT_EQ(r->config.resources[0].selectors.device_ids,
            (std::vector<std::string>{"101b", "1017"}));
}

TEST(ParseConfig, CaseInsensitiveKeysAreAcceptedWithAWarning) {
  auto r = ParseConfig(R"({"configList": [{"ResourceName": "a", "RDMAHCAMAX": 2,
                          "selectors": {"ifnames": ["ib0"]}}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.resources[0].resource_name, "a");
  EXPECT_EQ(r->config.resources[0].rdma_hca_max, 2);
  EXPECT_EQ(r->warnings.size(), 3u);
  EXPECT_THAT(r->warnings[0], HasSubstr("configList[0].ResourceName: key matched "
                                        "\"resourceName\" ignoring case"));
}

TEST(ParseConfig, EveryErrorIsOneLineWithAFieldPath) {
  const std::string errors = Errors(R"({"periodicUpdateInterval": -10, "configList": [
      {"resourceName": "ok_a", "rdmaHcaMax": 1, "selectors": {"ifNames": ["ib0"]}},
      {"resourceName": "b", "rdmaHcaMax": -3, "selectors": {"vendor": ["15b3"]}}]})");
  EXPECT_THAT(errors, HasSubstr("config: periodicUpdateInterval: must be >= 0 seconds, got -10\n"));
  EXPECT_THAT(errors, HasSubstr("config: configList[1].rdmaHcaMax: must be >= 0, got -3"));
  EXPECT_THAT(errors, HasSubstr("config: configList[1].selectors.vendor: unknown key; did you "
                                "mean \"vendors\"?"));
  for (const auto& line : {errors}) EXPECT_EQ(line.find("\n\n"), std::string::npos);
}

TEST(ParseConfig, TypeMismatchesNameTheTypeFound) {
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "rdmaHcaMax": "10",
                         "devices": ["ib0"]}]})"),
              HasSubstr("configList[0].rdmaHcaMax: must be an integer, got the string \"10\""));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 1.5,
                         "devices": ["ib0"]}]})"),
              HasSubstr("configList[0].rdmaHcaMax: must be an integer, got the value 1.5"));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": 7, "devices": ["ib0"]}]})"),
              HasSubstr("configList[0].resourceName: must be a string, got the value 7"));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "devices": "ib0"}]})"),
              HasSubstr("configList[0].devices: must be a list of strings"));
}

TEST(ParseConfig, FrontendAndDeviceModel) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 4, "selectors": {"ifNames": ["ib0"]}},
      {"resourceName": "b", "rdmaHcaMax": 4, "selectors": {"ifNames": ["ib1"]},
       "frontend": "dra"},
      {"resourceName": "c", "rdmaHcaMax": 4, "selectors": {"ifNames": ["ib2"]},
       "frontend": "dra", "deviceModel": "slots"}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->config.resources.size(), 3u);
  EXPECT_EQ(r->config.resources[0].frontend, Frontend::kDevicePlugin);
  EXPECT_EQ(r->config.resources[1].frontend, Frontend::kDra);
  EXPECT_EQ(r->config.resources[1].device_model, DeviceModel::kAuto);  // the default
  EXPECT_EQ(r->config.resources[2].device_model, DeviceModel::kSlots);
  EXPECT_EQ(FrontendName(Frontend::kDra), "dra");
  EXPECT_EQ(DeviceModelName(DeviceModel::kPerPool), "perPool");
}

// The device plugin takes "slots" (its default) and "perHca" (issue 56).
TEST(ParseConfig, DevicePluginDeviceModels) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 4, "selectors": {"ifNames": ["ib0"]},
       "deviceModel": "slots"},
      {"resourceName": "b", "rdmaHcaMax": 1, "selectors": {"ifNames": ["ib1"]},
       "deviceModel": "perHca"},
      {"resourceName": "c", "rdmaHcaMax": 4, "selectors": {"ifNames": ["ib2"]}},
      {"resourceName": "d", "rdmaHcaMax": 4, "selectors": {"ifNames": ["ib3"]},
       "frontend": "dra", "deviceModel": "perHca"}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->config.resources.size(), 4u);
  EXPECT_FALSE(r->config.resources[0].PerHcaDevices());
  EXPECT_TRUE(r->config.resources[1].PerHcaDevices());
  EXPECT_EQ(r->config.resources[2].device_model, DeviceModel::kAuto);  // slots, unwritten
  EXPECT_FALSE(r->config.resources[2].PerHcaDevices());
  EXPECT_FALSE(r->config.resources[3].PerHcaDevices());  // DRA's own perHca
}

TEST(ParseConfig, FrontendProblemsNameTheField) {
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "frontend": "DRA"}]})"),
            "config: configList[1].frontend: \"DRA\" is not one of \"devicePlugin\", \"dra\" "
            "(write \"dra\")\n");
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "deviceModel": "perPool"}]})"),
            "config: configList[1].deviceModel: \"perPool\" is for the DRA front end; a "
            "device-plugin entry takes \"slots\" (the default: every slot gives the whole "
            "pool) or \"perHca\" (each HCA its own devices)\n");
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "deviceModel": "auto"}]})"),
            "config: configList[1].deviceModel: \"auto\" is for the DRA front end; a "
            "device-plugin entry takes \"slots\" (the default: every slot gives the whole "
            "pool) or \"perHca\" (each HCA its own devices)\n");
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "frontend": "dra", "deviceModel": "perGpu"}]})"),
            "config: configList[1].deviceModel: \"perGpu\" is not one of \"auto\", "
            "\"perHca\", \"perPool\", \"slots\"\n");
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "rdmaHcaMax": 1025, "frontend": "dra",
       "deviceModel": "slots"}]})"),
            "config: configList[1].rdmaHcaMax: must be <= 1024 with deviceModel \"slots\" (one "
            "device per slot in the ResourceSlices), got 1025; use deviceModel \"perHca\" on "
            "Kubernetes 1.36+\n");
}

// envHints and skipUnusable (docs/pod-env.md), each value checked and the field named.
TEST(ParseConfig, EnvHintsAndSkipUnusable) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 4, "selectors": {"ifNames": ["ib0"]},
       "envHints": ["ucx", "nccl", "ucx"], "skipUnusable": true},
      {"resourceName": "b", "rdmaHcaMax": 4, "selectors": {"ifNames": ["ib1"]}}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->config.resources[0].env_hints,
              ::testing::ElementsAre(EnvHint::kUcx, EnvHint::kNccl));
  EXPECT_TRUE(r->config.resources[0].skip_unusable);
  EXPECT_TRUE(r->config.resources[1].env_hints.empty());
  EXPECT_FALSE(r->config.resources[1].skip_unusable);
  EXPECT_EQ(EnvHintName(EnvHint::kNccl), "nccl");
  // YAML too (the ConfigMap's usual form).
  auto y = ParseConfig(
      "configList:\n- resourceName: a\n  rdmaHcaMax: 4\n"
      "  selectors: {ifNames: [ib0]}\n  envHints: [nccl]\n"
      "  skipUnusable: false\n");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->config.resources[0].env_hints, ::testing::ElementsAre(EnvHint::kNccl));

  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "envHints": ["nccl", "NCCL", "mpi"]}]})"),
            "config: configList[1].envHints[1]: \"NCCL\" is not one of \"nccl\", \"ucx\" "
            "(write \"nccl\")\nconfig: configList[1].envHints[2]: \"mpi\" is not one of "
            "\"nccl\", \"ucx\"\n");
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "envHints": "nccl"}]})"),
            "config: configList[1].envHints: must be a list of strings, got the string "
            "\"nccl\"\n");
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "skipUnusable": "yes"}]})"),
            "config: configList[1].skipUnusable: must be true or false, got the string "
            "\"yes\"\n");
}

// unusedGraceSeconds (docs/observability.md): per entry, 60..86400, unset by default.
TEST(ParseConfig, UnusedGraceSeconds) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 4, "devices": ["x"], "unusedGraceSeconds": 1800},
      {"resourceName": "b", "rdmaHcaMax": 4, "devices": ["y"]}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.resources[0].unused_grace_seconds, 1800);
  EXPECT_EQ(r->config.resources[1].unused_grace_seconds, std::nullopt);
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "unusedGraceSeconds": 59}]})"),
            "config: configList[1].unusedGraceSeconds: must be 60..86400 (seconds a container "
            "may hold the pool unused before it is said), got 59\n");
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "unusedGraceSeconds": 86401}]})"),
            "config: configList[1].unusedGraceSeconds: must be 60..86400 (seconds a container "
            "may hold the pool unused before it is said), got 86401\n");
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "unusedGraceSeconds": "10m"}]})"),
              ::testing::StartsWith("config: configList[1].unusedGraceSeconds: "));
}

// trafficClass and gidIndex (docs/pod-env.md, "The RoCE class and GID"): "auto" or 0..255,
// only with envHints naming who gets them; said to reach no environment on a DRA entry.
TEST(ParseConfig, TrafficClassAndGidIndex) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 4, "devices": ["x"], "envHints": ["nccl"],
       "trafficClass": 106, "gidIndex": "auto"},
      {"resourceName": "b", "rdmaHcaMax": 4, "devices": ["y"], "envHints": ["ucx"],
       "trafficClass": "auto", "gidIndex": 0},
      {"resourceName": "c", "rdmaHcaMax": 4, "devices": ["z"], "envHints": ["ucx"]}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& a = r->config.resources[0];
  EXPECT_EQ(a.traffic_class, (RoceValue{.automatic = false, .value = 106}));
  EXPECT_EQ(a.gid_index, (RoceValue{.automatic = true, .value = 0}));
  EXPECT_EQ(r->config.resources[1].traffic_class, (RoceValue{.automatic = true, .value = 0}));
  EXPECT_EQ(r->config.resources[1].gid_index, (RoceValue{.automatic = false, .value = 0}));
  EXPECT_EQ(r->config.resources[2].traffic_class, std::nullopt);
  EXPECT_EQ(RoceValueText(*a.traffic_class), "106");
  EXPECT_EQ(RoceValueText(*a.gid_index), "auto");
  // A change of either is a change of the config's fingerprint.
  Config changed = r->config;
  changed.resources[0].traffic_class->value = 104;
  EXPECT_NE(Fingerprint(changed), Fingerprint(r->config));

  for (const char* bad : {"256", "-1", "\"Auto\"", "\"0x6a\"", "1.5", "\"\""}) {
    EXPECT_EQ(Errors(Cat(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "envHints": ["nccl"], "trafficClass": )",
                         bad, "}]}")),
              Cat("config: configList[1].trafficClass: must be \"auto\" (read from the HCAs) "
                  "or a number 0..255, got \"",
                  std::string_view(bad).starts_with("\"")
                      ? std::string_view(bad).substr(1, std::string_view(bad).size() - 2)
                      : std::string_view(bad),
                  "\"\n"))
        << bad;
  }
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "gidIndex": [3]}]})"),
            "config: configList[1].gidIndex: must be \"auto\" or a number 0..255, got a list\n");
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "devices": ["x"]},
      {"resourceName": "b", "devices": ["y"], "gidIndex": 3}]})"),
            "config: configList[1].gidIndex: sets no variable without envHints: add \"nccl\" "
            "and/or \"ucx\" to name the libraries that get it\n");
  auto dra = ParseConfig(R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 4,
      "selectors": {"ifNames": ["ib0"]}, "frontend": "dra", "envHints": ["nccl"],
      "trafficClass": 106}]})");
  ASSERT_TRUE(dra.ok()) << dra.status();
  EXPECT_THAT(dra->warnings,
              ::testing::Contains(HasSubstr("configList[0].trafficClass: reaches no container's "
                                            "environment on a DRA entry")));
}

// "rdma_A" and "rdma-a" name one DRA pool and DeviceClass ("rdma-a"); the two publishers
// overwrote each other. The second entry is skipped, naming both; the first keeps serving.
// (Device-plugin entries that differ only in case clash on their PCIDEVICE_ variable
// instead: DevicePluginEntriesThatShareAVariableAreRejected.)
TEST(ParseConfig, DraNamesThatShareAPoolNameAreRejected) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "rdma_A", "devices": ["x"], "frontend": "dra"},
      {"resourceName": "rdma_a", "devices": ["y"], "frontend": "dra"},
      {"resourceName": "dp_a", "devices": ["w"]}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->config.resources.size(), 2u);
  EXPECT_EQ(r->config.resources[0].resource_name, "rdma_A");
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_THAT(r->skipped[0].problems,
              ::testing::ElementsAre(
                  "config: configList[1].resourceName: \"rdma_a\" and \"rdma_A\" "
                  "(configList[0]) both name DRA pool and DeviceClass \"rdma-a\" (names are "
                  "lower-cased, '_' becomes '-', at most 63 characters): rename one of them"));
}

// "env_dp" and "ENV_DP" (and "a-b"/"c" with "a"/"b_c", and "a" with "a_INFO") both
// validated, and a container given both pools got PCIDEVICE_RDMA_ENV_DP from one of them at
// random (the kubelet keeps the first value of a name, in map order). The later entry is now
// skipped with one line naming the variable and the first entry; the first keeps serving
// (docs/pod-env.md, "Several pools in one container: how the kubelet merges"). Fails on the
// old code: every entry was kept.
TEST(ParseConfig, DevicePluginEntriesThatShareAVariableAreRejected) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "env_dp", "devices": ["a"]},
      {"resourceName": "ENV_DP", "devices": ["b"]},
      {"resourceName": "c", "resourcePrefix": "a-b", "devices": ["c"]},
      {"resourceName": "b_c", "resourcePrefix": "a", "devices": ["d"]},
      {"resourceName": "x", "devices": ["e"]},
      {"resourceName": "x_INFO", "devices": ["f"]},
      {"resourceName": "y_INFO", "devices": ["g"]},
      {"resourceName": "y", "devices": ["h"]},
      {"resourceName": "env_dq", "devices": ["i"]}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::string> kept;
  for (const auto& rc : r->config.resources) kept.push_back(rc.FullName());
  EXPECT_THAT(
      kept, ::testing::ElementsAre("rdma/env_dp", "a-b/c", "rdma/x", "rdma/y_INFO", "rdma/env_dq"));
  ASSERT_EQ(r->skipped.size(), 4u);
  EXPECT_THAT(r->skipped[0].problems,
              ::testing::ElementsAre(
                  "config: configList[1].resourceName: \"ENV_DP\" gives the same variable "
                  "PCIDEVICE_RDMA_ENV_DP as configList[0] (rdma/env_dp); a container given both "
                  "would get one of the two values: rename one of them"));
  EXPECT_THAT(r->skipped[1].problems,
              ::testing::ElementsAre(HasSubstr(
                  "configList[3].resourceName: \"b_c\" gives the same variable PCIDEVICE_A_B_C "
                  "as configList[2] (a-b/c)")));
  // A name that is another's _INFO twin, whichever comes first.
  EXPECT_THAT(r->skipped[2].problems,
              ::testing::ElementsAre(
                  HasSubstr("configList[5].resourceName: \"x_INFO\" gives the same variable "
                            "PCIDEVICE_RDMA_X_INFO as configList[4] (rdma/x)")));
  EXPECT_THAT(
      r->skipped[3].problems,
      ::testing::ElementsAre(HasSubstr("configList[7].resourceName: \"y\" gives the same variable "
                                       "PCIDEVICE_RDMA_Y_INFO as configList[6] (rdma/y_INFO)")));
  // DRA entries set no PCIDEVICE_<RESOURCE> (their variables are per claim): a DRA entry
  // beside a device-plugin one of another case is not refused for it.
  auto mixed = ParseConfig(R"({"configList": [
      {"resourceName": "mix", "devices": ["a"]},
      {"resourceName": "MIX", "devices": ["b"], "frontend": "dra"}]})");
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_TRUE(mixed->skipped.empty());
}

// YAML aliases repeat a value at every use. A 16 KB config of aliases to one long string
// expanded to 1.2 GiB on reload (37 KB: bad_alloc, the daemon died). The values read are
// bounded in all, and error messages repeat at most 64 bytes of a value
// (docs/reliability.md, "Crash, hang, flood").
TEST(ParseConfig, AliasesCannotAmplifyAConfig) {
  std::string yaml = "configList:\n- resourceName: a\n  resourcePrefix: &s \"" +
                     std::string(16000, 'x') + "\"\n  selectors:\n    ifNames: [";
  for (int i = 0; i < 1000; ++i) yaml += i == 0 ? "*s" : ", *s";
  yaml += "]\n";
  ASSERT_LT(yaml.size(), 25000u);
  auto r = ParseConfig(yaml);
  const std::string all =
      r.ok() ? Join(r->skipped.empty() ? std::vector<std::string>{} : r->skipped[0].problems, "\n")
             : std::string(r.status().message());
  EXPECT_THAT(all, ::testing::HasSubstr("values add up to more than 1048576 bytes"));
  EXPECT_LT(all.size(), 4096u) << "messages repeat a value only in part";
}

// validate rejects a name served by both front ends on one node: the kubelet would see it
// as a device plugin's resource and as the DRA driver's extended resource.
TEST(ParseConfig, ANameServedByBothFrontEndsIsRejected) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "a", "devices": ["x"]},
      {"resourceName": "a", "devices": ["y"], "frontend": "dra"},
      {"resourceName": "b", "devices": ["z"], "frontend": "dra"}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->config.resources.size(), 2u);  // the first "a" and "b" still serve
  EXPECT_EQ(r->config.resources[0].frontend, Frontend::kDevicePlugin);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_THAT(r->skipped[0].problems,
              ::testing::ElementsAre(
                  "config: configList[1].resourceName: \"a\" is already served by the "
                  "devicePlugin front end (configList[0]); a node serves a name through one "
                  "front end: rename one of them"));
}

TEST(ParseConfig, SyntaxErrorsCarryLineAndColumn) {
  EXPECT_THAT(Errors("{\n  \"configList\": [\n}"), HasSubstr("config: line 3 column"));
  EXPECT_THAT(Errors("{\n  \"configList\": [\n}"), HasSubstr("not valid JSON"));
  EXPECT_THAT(Errors("   \n"), HasSubstr("file is empty"));
  EXPECT_THAT(Errors("null"), HasSubstr("no resources configuration found"));
  EXPECT_THAT(Errors("[1, 2]"), HasSubstr("top level: must be an object, got a list"));
}

TEST(ParseConfig, GoPluginValidationRules) {
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "test_config$$", "devices": ["x"]}]})"),
              HasSubstr("\"test_config$$\" contains invalid characters"));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "t", "devices": ["x"]},
                                          {"resourceName": "t", "devices": ["y"]}]})"),
              HasSubstr("configList[1].resourceName: \"t\" already exists (configList[0])"));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "t"}]})"),
              HasSubstr("configList[0]: neither \"selectors\" nor \"devices\" is set"));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "t", "devices": ["a"],
                                          "selectors": {"ifNames": ["b"]}}]})"),
              HasSubstr("cannot specify both \"selectors\" and \"devices\""));
  EXPECT_THAT(Errors(R"({"configList": []})"), HasSubstr("configList: no resources"));
}

TEST(ParseConfig, KubeletNameRulesAndBounds) {
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "_x", "devices": ["ib0"]}]})"),
              HasSubstr("the kubelet would reject resource name \"rdma/_x\""));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "resourcePrefix": "Example.com",
                         "devices": ["ib0"]}]})"),
              HasSubstr("configList[0].resourcePrefix: \"Example.com\" is not a DNS subdomain"));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 100001,
                         "devices": ["ib0"]}]})"),
              HasSubstr("must be <= 100000"));
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 100000,
                      "devices": ["ib0"]}]})"),
            "<ok>");
}

TEST(ParseConfig, SelectorValuesThatCanNeverMatch) {
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "selectors":
                         {"ifNames": ["ib/0"]}}]})"),
              HasSubstr("selectors.ifNames[0]: \"ib/0\" contains '/'"));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "selectors":
                         {"vendors": ["mellanox"]}}]})"),
              HasSubstr("selectors.vendors[0]: \"mellanox\" is not a 4-digit hex PCI ID"));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "selectors":
                         {"linkTypes": ["ethernet"]}}]})"),
              HasSubstr("(Ethernet is \"ether\")"));
  EXPECT_THAT(Errors(R"({"configList": [{"resourceName": "a", "devices": ["", "x"]}]})"),
              HasSubstr("configList[0].devices[0]: \"\" is empty"));
}

TEST(LoadConfigFile, MissingFileNamesThePathAndTheFlag) {
  auto r = LoadConfigFile("/nonexistent/config.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("cannot read /nonexistent/config.json: No such file or directory"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--config-file"));
}

TEST(LoadConfigFile, ReadsAFile) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/c.yaml";
  std::ofstream(path) << "configList:\n- resourceName: a\n  devices: [ib0]\n";
  auto r = LoadConfigFile(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->config.resources[0].selectors.if_names, std::vector<std::string>{"ib0"});
}

TEST(K8sNames, ExtendedResourceNameFollowsTheKubelet) {
  EXPECT_EQ(ExtendedResourceNameProblem("rdma/hca_shared_devices_a"), "");
  EXPECT_EQ(ExtendedResourceNameProblem("rdma/hca"), "");
  EXPECT_EQ(ExtendedResourceNameProblem("example.com/Hca.x-1"), "");
  EXPECT_NE(ExtendedResourceNameProblem("hca"), "");
  EXPECT_NE(ExtendedResourceNameProblem("RDMA/hca"), "");
  EXPECT_NE(ExtendedResourceNameProblem("rdma/-x"), "");
  EXPECT_NE(ExtendedResourceNameProblem("rdma/a/b"), "");
  EXPECT_NE(ExtendedResourceNameProblem("kubernetes.io/rdma"), "");
  EXPECT_NE(ExtendedResourceNameProblem("foo.kubernetes.io/rdma"), "");
  EXPECT_NE(ExtendedResourceNameProblem("requests.rdma/x"), "");
  EXPECT_NE(ExtendedResourceNameProblem("rdma/" + std::string(64, 'a')), "");
  EXPECT_EQ(ExtendedResourceNameProblem("rdma/" + std::string(63, 'a')), "");
  EXPECT_NE(ExtendedResourceNameProblem(std::string(245, 'a') + "/x"), "");
}

TEST(LinkTypes, NamesMatchTheGoPlugin) {
  EXPECT_EQ(LinkTypeName(1), "ether");
  EXPECT_EQ(LinkTypeName(32), "infiniband");
  EXPECT_EQ(LinkTypeName(772), "loopback");
  EXPECT_EQ(LinkTypeName(12345), "");
  EXPECT_TRUE(IsKnownLinkType("infiniband"));
  EXPECT_FALSE(IsKnownLinkType("ethernet"));
}

// The Go plugin's own README example has `resourcePrefix: "example_prefix"`: the Go plugin
// serves every other entry, so must we.
TEST(ParseConfig, AnEntryInvalidOnItsOwnIsSkippedAndTheOthersServe) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "good_a", "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "bad", "resourcePrefix": "example_prefix", "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "good_b", "rdmaHcaMax": 5, "selectors": {"ifNames": ["ib0"], "linkType": []}},
      {"resourceName": "good_c", "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "good_a", "selectors": {"vendors": ["15b3"]}}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->config.resources.size(), 2u);
  EXPECT_EQ(r->config.resources[0].resource_name, "good_a");
  EXPECT_EQ(r->config.resources[1].resource_name, "good_c");
  EXPECT_EQ(r->indices, (std::vector<size_t>{0, 3}));
  ASSERT_EQ(r->skipped.size(), 3u);
  EXPECT_EQ(r->skipped[0].Label(), "configList[1] (bad)");
  EXPECT_THAT(r->skipped[0].problems[0],
              HasSubstr("config: configList[1].resourcePrefix: \"example_prefix\""));
  EXPECT_THAT(r->skipped[1].problems[0],
              HasSubstr("config: configList[2].selectors.linkType: unknown key"));
  EXPECT_THAT(r->skipped[2].problems[0], HasSubstr("configList[4].resourceName: \"good_a\" "
                                                   "already exists (configList[0])"));
}

// The entries that serve, by configList index, then every skipped entry's problems.
std::string Outcome(const absl::StatusOr<LoadedConfig>& r) {
  if (!r.ok()) return Cat("<file fails>\n", std::string(r.status().message()));
  std::string out = "serve:";
  for (size_t i : r->indices) Append(out, " ", i);
  for (const auto& e : r->skipped) {
    for (const auto& p : e.problems) Append(out, "\n", p);
  }
  return out;
}

std::string Entry(std::string_view name, int64_t slots, std::string_view extra = "") {
  return Cat(R"({"resourceName": ")", name, R"(", "rdmaHcaMax": )", slots,
             R"(, "selectors": {"vendors": ["15b3"]})", extra, "}");
}

std::string File(const std::vector<std::string>& entries) {
  return Cat(R"({"configList": [)", Join(entries, ", "), "]}");
}

TEST(ParseConfig, TotalSlotsSkipTheEntriesPastTheBoundInFileOrder) {
  EXPECT_EQ(Outcome(ParseConfig(File({Entry("a1", 100000), Entry("a2", 100000)}))), "serve: 0 1");
  EXPECT_EQ(Outcome(ParseConfig(File({Entry("a1", 100000), Entry("a2", 100000), Entry("a3", 1)}))),
            "serve: 0 1\n"
            "config: configList[2].rdmaHcaMax: 1 slots would bring the entries before it from "
            "200000 to 200001; all entries together have at most 200000 (the plugin's memory "
            "grows with the slots: raise the DaemonSet's memory limit before this bound)");
  // The one past the bound goes; a later one that still fits serves.
  EXPECT_EQ(Outcome(ParseConfig(File(
                {Entry("a", 90000), Entry("b", 100000), Entry("c", 20000), Entry("d", 10000)}))),
            "serve: 0 1 3\n"
            "config: configList[2].rdmaHcaMax: 20000 slots would bring the entries before it "
            "from 190000 to 210000; all entries together have at most 200000 (the plugin's "
            "memory grows with the slots: raise the DaemonSet's memory limit before this bound)");
}

// Issue: one absurd rdmaHcaMax used to make the whole file invalid, because the total still
// counted the entry its own bound had skipped.
TEST(ParseConfig, AnEntrySkippedOnItsOwnCountsInNoTotal) {
  EXPECT_EQ(Outcome(ParseConfig(
                File({Entry("absurd", 1000000000), Entry("b", 100000), Entry("c", 100000)}))),
            "serve: 1 2\n"
            "config: configList[0].rdmaHcaMax: must be <= 100000 (a larger ListAndWatch message "
            "exceeds the kubelet's 4 MiB limit), got 1000000000");
}

// A name, a DRA pool name or a PCIDEVICE_ variable is claimed by the first entry that
// serves, never by a skipped one.
TEST(ParseConfig, AnEntrySkippedOnItsOwnClaimsNoName) {
  EXPECT_EQ(Outcome(ParseConfig(
                File({Entry("a", 1, R"(, "memlock": "lots")"), Entry("a", 2), Entry("a", 3)}))),
            "serve: 1\n"
            "config: configList[0].memlock: \"lots\" is not \"unlimited\" or a quantity (write "
            "\"unlimited\" or a quantity such as \"64Gi\")\n"
            "config: configList[2].resourceName: \"a\" already exists (configList[1])");
  EXPECT_EQ(Outcome(ParseConfig(File({Entry("env_dp", -1), Entry("ENV_DP", 1), Entry("ok", 1)}))),
            "serve: 1 2\n"
            "config: configList[0].rdmaHcaMax: must be >= 0, got -1");
}

// One hostile entry cannot say enough problems to fail the file (kMaxErrors): it says ten
// and that there are more, and the others serve.
TEST(ParseConfig, OneEntrysProblemsAreCappedSoTheOthersServe) {
  std::string vendors;
  for (int i = 0; i < 150; ++i) Append(vendors, i ? ", " : "", "\"v", i, "\"");
  auto r = ParseConfig(File(
      {Entry("bad", 1,
             Cat(R"(, "envHints": [)", Join(std::vector<std::string>(150, "\"x\""), ", "), "]")),
       Entry("good", 1)}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->indices, std::vector<size_t>{1});
  ASSERT_EQ(r->skipped.size(), 1u);
  ASSERT_EQ(r->skipped[0].problems.size(), 11u);
  EXPECT_EQ(r->skipped[0].problems.back(),
            "config: configList[0]: more problems in this entry are not shown; fix these first");
}

// A reload keeps the running version of an entry it skips, and that version meets every
// rule between entries and the total like any entry (review: it used to be added after).
TEST(ParseConfig, ARunningVersionKeptMeetsTheRulesBetweenEntries) {
  auto running = ParseConfig(File({Entry("a", 100000), Entry("b", 100000)}));
  ASSERT_TRUE(running.ok());
  // b turns bad; c comes before it and takes the room b's running version would need.
  auto r = ParseConfig(File({Entry("a", 100000), Entry("c", 50000), Entry("b", -1)}), {},
                       &running->config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->indices, (std::vector<size_t>{0, 1}));
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_FALSE(r->skipped[0].running_version_kept);
  ASSERT_EQ(r->skipped[0].problems.size(), 2u);
  EXPECT_THAT(r->skipped[0].problems[1], HasSubstr("configList[2].rdmaHcaMax: 100000 slots"));
  // With room, it is kept, at its place.
  r = ParseConfig(File({Entry("a", 50000), Entry("b", -1), Entry("c", 50000)}), {},
                  &running->config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->indices, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(r->config.resources[1].rdma_hca_max, 100000);
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_TRUE(r->skipped[0].running_version_kept);
}

// An entry the checks skip claims no name: a later entry of the same name serves (review:
// the rules between entries ran before the checks, and both were lost).
TEST(ParseConfig, AnEntryTheChecksSkipClaimsNoName) {
  const EntryChecks no_dra = [](const Config& c, const std::vector<size_t>& indices) {
    std::vector<std::string> problems;
    for (size_t i = 0; i < c.resources.size(); ++i) {
      if (c.resources[i].frontend == Frontend::kDra) {
        problems.push_back(Cat("config: configList[", indices[i], "].frontend: no node name"));
      }
    }
    return problems;
  };
  auto r = ParseConfig(File({Entry("x", 1, R"(, "frontend": "dra")"), Entry("x", 1)}), no_dra);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->indices, std::vector<size_t>{1});
}

TEST(ParseConfig, ChecksRunOnTheEntriesValidOnTheirOwnBeforeTheTotal) {
  std::vector<std::vector<size_t>> seen;
  const EntryChecks too_long = [&](const Config& c, const std::vector<size_t>& indices) {
    seen.push_back(indices);
    std::vector<std::string> problems;
    for (size_t i = 0; i < c.resources.size(); ++i) {
      if (c.resources[i].resource_name == "long") {
        problems.push_back(Cat("config: configList[", indices[i], "].resourceName: too long"));
      }
    }
    return problems;
  };
  // The entry the checks skip leaves room under the total for the later ones.
  EXPECT_EQ(Outcome(ParseConfig(File({Entry("bad!", 1), Entry("long", 100000), Entry("b", 100000),
                                      Entry("c", 100000)}),
                                too_long)),
            "serve: 2 3\n"
            "config: configList[0].resourceName: \"bad!\" contains invalid characters (allowed: "
            "letters, digits and '_')\n"
            "config: configList[1].resourceName: too long");
  EXPECT_EQ(seen, (std::vector<std::vector<size_t>>{{1, 2, 3}}));
  // Nothing left, or a problem outside any entry: the file fails, every problem said.
  EXPECT_EQ(Outcome(ParseConfig(File({Entry("bad!", 1), Entry("long", 1)}), too_long)),
            "<file fails>\n"
            "config: configList[0].resourceName: \"bad!\" contains invalid characters (allowed: "
            "letters, digits and '_')\n"
            "config: configList[1].resourceName: too long");
  EXPECT_EQ(Outcome(ParseConfig(File({Entry("a", 1)}),
                                [](const Config&, const std::vector<size_t>&) {
                                  return std::vector<std::string>{"config: --flag: bad"};
                                })),
            "<file fails>\nconfig: --flag: bad");
}

TEST(ParseConfig, ProblemsOutsideEntriesOrInEveryEntryStillFailTheFile) {
  EXPECT_FALSE(ParseConfig(R"({"periodicUpdateInterval": -1, "configList": [
      {"resourceName": "a1", "selectors": {"vendors": ["15b3"]}}]})")
                   .ok());
  EXPECT_FALSE(ParseConfig(R"({"configList": [{"resourceName": "a-1", "devices": ["ib0"]},
      {"resourceName": "b", "rdmaHcaMax": -1, "devices": ["ib0"]}]})")
                   .ok());
}

TEST(ParseConfig, SocketPathProblemsSkipTheirEntryByItsConfigListIndex) {
  const EntryChecks socket_paths = [](const Config& c, const std::vector<size_t>& indices) {
    return SocketPathProblems(c, {std::string(100, 'd')}, indices);
  };
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "bad!", "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "ok", "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "x", "selectors": {"vendors": ["15b3"]}}]})",
                       socket_paths);
  EXPECT_FALSE(r.ok()) << "nothing would be left";
  r = ParseConfig(R"({"configList": [
      {"resourceName": "bad!", "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "o", "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "xxxxx", "selectors": {"vendors": ["15b3"]}}]})",
                  [](const Config& c, const std::vector<size_t>& indices) {
                    return SocketPathProblems(c, {std::string(88, 'd')}, indices);
                  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->indices, (std::vector<size_t>{1}));
  ASSERT_EQ(r->skipped.size(), 2u);
  EXPECT_EQ(r->skipped[1].Label(), "configList[2] (xxxxx)");
}

// A 24 KB YAML alias bomb once cost 95 s, 7.5 GB and 25 M error lines (docs/reliability.md).
TEST(ParseConfig, AliasBombIsBoundedInTimeMemoryAndOutput) {
  std::string yaml = "x: &e {";
  for (int i = 0; i < 60; ++i) yaml += Cat(i ? ", " : "", "k", i, ": 1");
  yaml += "}\nconfigList: [";
  for (int i = 0; i < 250; ++i) yaml += Cat(i ? ", " : "", "*e");
  yaml += "]\n";
  const auto start = std::chrono::steady_clock::now();
  auto r = ParseConfig(yaml);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  ASSERT_FALSE(r.ok());
  const std::string message(r.status().message());
  EXPECT_LE(std::count(message.begin(), message.end(), '\n'), 101);
  EXPECT_THAT(message, HasSubstr("problems; the first ones are above: fix those first"));
  std::cout << "[measured] alias bomb parsed and rejected in " << ms << " ms\n";
}

// 5,000 nested lists got yaml-cpp's "bad file". The place is named; a quoted or commented
// bracket does not count.
// Mistakes that passed silently or were named wrongly.
TEST(ParseConfig, ATabInYamlIndentationIsCalledATab) {
  const std::string e = Errors("configList:\n  - resourceName: a\n\t  rdmaHcaMax: 1\n");
  EXPECT_THAT(e, HasSubstr("not valid YAML"));
  EXPECT_THAT(e, HasSubstr("line 3 is indented with a tab; YAML indents with spaces only"));
  // A tab inside a value is no indentation, and JSON has no indentation rules at all.
  EXPECT_THAT(Errors("configList:\n  - resourceName: a\tb\n    rdmaHcaMax: [\n"),
              Not(HasSubstr("tab")));
  EXPECT_THAT(Errors("{\"configList\": [\n\t{\"resourceName\": 1}"), Not(HasSubstr("tab")));
}

TEST(ParseConfig, SelectorsWithOnlyUnknownKeysNameThoseKeysOnly) {
  const std::string e = Errors(
      R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"vendor": ["15b3"]}}]})");
  EXPECT_THAT(e,
              HasSubstr("configList[0].selectors.vendor: unknown key; did you mean \"vendors\"?"));
  EXPECT_THAT(e, Not(HasSubstr("neither")));
  // An empty object is said as what it is (issue 52: it was "neither ... is set").
  EXPECT_EQ(Errors(R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 1, "selectors": {}}]})"),
            "config: configList[0].selectors: is empty, so it selects nothing; add vendors, "
            "deviceIDs, drivers, ifNames, linkTypes or pciAddresses");
}

// A value of the wrong type is its error alone: it used to come after a warning that the
// field "is not set (0)".
TEST(ParseConfig, AWrongTypeIsNotAlsoNotSet) {
  auto r = ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": "10", "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "b", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}}]})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_THAT(r->skipped[0].problems[0], HasSubstr("configList[0].rdmaHcaMax: "));
  EXPECT_THAT(r->warnings, Not(::testing::Contains(HasSubstr("is not set"))));
}

TEST(ParseConfig, ZeroSharesIsValidButWarned) {
  for (const char* max : {R"("rdmaHcaMax": 0, )", ""}) {
    auto r = ParseConfig(std::string(R"({"configList": [{"resourceName": "a", )") + max +
                         R"("selectors": {"vendors": ["15b3"]}}]})");
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->config.resources.size(), 1u);
    ASSERT_EQ(r->warnings.size(), 1u) << max;
    EXPECT_THAT(r->warnings[0], HasSubstr("configList[0].rdmaHcaMax: is"));
    EXPECT_THAT(r->warnings[0], HasSubstr("no slot is advertised"));
  }
}

TEST(ParseConfig, DeepNestingIsNamedWithItsPlace) {
  const std::string deep =
      "{\"configList\":\n " + std::string(5000, '[') + std::string(5000, ']') + "}";
  EXPECT_EQ(Errors(deep),
            "config: line 2 column 33: nested more than 32 levels deep; a config needs at most 4");
  const std::string quoted = std::string(R"({"configList": [{"resourceName": ")") +
                             std::string(100, '[') + R"(", "selectors": {"vendors": ["15b3"]}}]})";
  EXPECT_THAT(Errors(quoted), ::testing::Not(HasSubstr("nested")));
}

// A file that starts as JSON is read as JSON (the Go plugin's and the webhook's rule): what
// only YAML allows used to pass here and fail at a rollback or at network-operator's webhook.
TEST(ParseConfig, AFileThatStartsAsJsonMustBeJson) {
  constexpr std::string_view kWhy =
      " (a file that starts with '{' or '[' is read as JSON, as the Go plugin and "
      "network-operator's webhook read it: no comments, trailing commas or single quotes; "
      "write YAML without the braces)";
  EXPECT_EQ(Errors("{\"configList\": [\n  {\"resourceName\": \"a\", \"selectors\": {\"vendors\": "
                   "[\"15b3\"]},}]}"),
            Cat("config: line 2 column 60: not valid JSON: syntax error while parsing object key "
                "- unexpected '}'; expected string literal",
                kWhy));
  EXPECT_EQ(Errors("{'configList': []}"),
            Cat("config: line 1 column 2: not valid JSON: syntax error while parsing object key - "
                "invalid literal",
                kWhy));
  EXPECT_EQ(Errors("{\"configList\": [] # a comment\n}"),
            Cat("config: line 1 column 19: not valid JSON: syntax error while parsing object - "
                "invalid literal",
                kWhy));
  // The same content as YAML is read as YAML.
  EXPECT_EQ(Errors("# a comment\nconfigList:\n  - {resourceName: a, rdmaHcaMax: 1, selectors: "
                   "{vendors: ['15b3']},}\n"),
            "<ok>");
}

TEST(ParseConfig, OversizedListsAndObjectsAreRejectedWithoutWalkingThem) {
  std::string list = "[";
  for (int i = 0; i < 1025; ++i) list += Cat(i ? "," : "", "\"15b3\"");
  EXPECT_THAT(Errors(Cat(R"({"configList": [{"resourceName": "a", "selectors": {"vendors": )", list,
                         "]}}]}")),
              HasSubstr("config: configList[0].selectors.vendors: has 1025 entries; at most 1024"));
  std::string keys = "{";
  for (int i = 0; i < 65; ++i) keys += Cat(i ? "," : "", "\"k", i, "\": 1");
  EXPECT_THAT(Errors(Cat(R"({"configList": [)", keys, "}]}")),
              HasSubstr("config: configList[0]: has 65 keys; an object here has at most 14"));
}

TEST(LoadConfigFile, FifosAndHugeFilesAreRefusedBeforeReading) {
  testing::TempDir tmp;
  const std::string fifo = tmp.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = LoadConfigFile(fifo);  // would block for ever if it were opened
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("is not a regular file"));
  const std::string big = tmp.path() + "/big.json";
  std::ofstream(big) << std::string(kMaxConfigBytes + 1, ' ');
  r = LoadConfigFile(big);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("a config is at most 1048576 bytes"));
}

// 62-63 character names are valid for Kubernetes but do not fit a unix socket path under the
// default root (docs/architecture.md, "Lifecycle: what happens on each event").
TEST(SocketPathProblems, NamesThatCannotBindAreRejectedNamingTheLimit) {
  auto config_with = [](size_t length) {
    Config c;
    ResourceConfig rc;
    rc.resource_name = std::string(length, 'a');
    c.resources.push_back(rc);
    return c;
  };
  const std::vector<std::string> kubelet = {"/var/lib/kubelet/device-plugins"};  // 31 chars
  EXPECT_TRUE(SocketPathProblems(config_with(60), kubelet).empty());
  const auto problems = SocketPathProblems(config_with(61), kubelet);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], HasSubstr("config: configList[0].resourceName: \""));
  EXPECT_THAT(problems[0], HasSubstr("108 bytes, the limit for a unix socket path is 107"));
  EXPECT_THAT(problems[0], HasSubstr("use at most 60 characters here"));
  const std::vector<std::string> both = {"/var/lib/kubelet/device-plugins",
                                         "/var/lib/kubelet/plugins_registry"};
  EXPECT_TRUE(SocketPathProblems(config_with(58), both).empty());
  EXPECT_EQ(SocketPathProblems(config_with(59), both).size(), 1u);
}

// "unlimited" or a Kubernetes quantity of whole bytes; anything else is the entry's error
// naming the field (docs/memlock.md, "Using it").
TEST(ParseMemlock, UnlimitedOrAQuantityOfWholeBytes) {
  EXPECT_EQ(*ParseMemlock("unlimited"), kMemlockUnlimited);
  EXPECT_EQ(*ParseMemlock("64Gi"), 64ull << 30);
  EXPECT_EQ(*ParseMemlock("512Mi"), 512ull << 20);
  EXPECT_EQ(*ParseMemlock("1.5Gi"), 1610612736ull);
  EXPECT_EQ(*ParseMemlock("8388608"), 8388608ull);
  EXPECT_EQ(*ParseMemlock("2k"), 2000ull);
  EXPECT_EQ(*ParseMemlock("1M"), 1000000ull);
  EXPECT_EQ(*ParseMemlock("7Ei"), 7ull << 60);
  // Decimal exponents, as Kubernetes quantities have them (H8: "1e9" was refused while the
  // JSON number 1e9 passed).
  EXPECT_EQ(*ParseMemlock("1e9"), 1000000000ull);
  EXPECT_EQ(*ParseMemlock("1E9"), 1000000000ull);
  EXPECT_EQ(*ParseMemlock("5E+10"), 50000000000ull);
  EXPECT_EQ(*ParseMemlock("1.5e9"), 1500000000ull);
  EXPECT_EQ(*ParseMemlock("1E"), 1000000000000000000ull) << "E alone is exa";
  for (const char* bad :
       {"",           "0",         "0Gi",  "-1Gi", "1.5",      "0.1k1", "Gi",
        "1GB",        "1 Gi",      "8Ei",  "1e-3", "1e19",     "1eGi",  "1e9Gi",
        "unlimited ", "Unlimited", ".5Gi", "1.Gi", "0.0001Ki", "+1Gi",  "1000m"}) {
    EXPECT_FALSE(ParseMemlock(bad).ok()) << bad;
  }
  EXPECT_EQ(MemlockArg(kMemlockUnlimited), "unlimited");
  EXPECT_EQ(MemlockArg(65536), "65536");

  auto loaded = ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}, "memlock": "64Gi"},
      {"resourceName": "b", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}, "memlock": "lots"},
      {"resourceName": "c", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}, "memlock": 8388608},
      {"resourceName": "d", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]},
       "memlock": ["1Gi"]},
      {"resourceName": "e", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}, "memlock": "64Ki"},
      {"resourceName": "f", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}, "memlock": 1e9}]})");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->config.resources.size(), 3u);
  EXPECT_EQ(loaded->config.resources[0].memlock, 64ull << 30);
  EXPECT_EQ(loaded->config.resources[1].memlock, 8388608ull);
  EXPECT_EQ(loaded->config.resources[2].memlock, 1000000000ull);
  ASSERT_EQ(loaded->skipped.size(), 3u);
  EXPECT_EQ(loaded->skipped[0].problems,
            std::vector<std::string>{"config: configList[1].memlock: \"lots\" is not "
                                     "\"unlimited\" or a quantity (write \"unlimited\" or a "
                                     "quantity such as \"64Gi\")"});
  EXPECT_THAT(loaded->skipped[1].problems[0], HasSubstr("configList[3].memlock: must be"));
  // A Ki/Gi slip: below what runtimes give anyway, the hook would do nothing.
  EXPECT_EQ(loaded->skipped[2].problems,
            std::vector<std::string>{
                "config: configList[4].memlock: \"64Ki\" is 65536 bytes, below the 8Mi container "
                "runtimes give by default: it would change nothing (write at least \"8Mi\"; RDMA "
                "jobs usually want \"unlimited\" or tens of Gi)"});
}

// pciAddresses: a full address (domain included), lowercased; anything else is the entry's
// error naming the item.
TEST(ParseConfig, PciAddressesSelectorTakesFullAddresses) {
  auto loaded = ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 1,
       "selectors": {"pciAddresses": ["0000:3B:00.0", "10000:e1:00.1"]}},
      {"resourceName": "b", "rdmaHcaMax": 1, "selectors": {"pciAddresses": ["3b:00.0"]}}]})");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->config.resources.size(), 1u);
  EXPECT_EQ(loaded->config.resources[0].selectors.pci_addresses,
            (std::vector<std::string>{"0000:3b:00.0", "10000:e1:00.1"}));
  ASSERT_EQ(loaded->skipped.size(), 1u);
  EXPECT_EQ(loaded->skipped[0].problems[0],
            "config: configList[1].selectors.pciAddresses[0]: \"3b:00.0\" is not a PCI address "
            "with its domain (like \"0000:3b:00.0\")");
}

// H12 of the hardening round at 050f44e: addresses no PCI function can have passed
// `validate`, and their pool stayed empty. sysfs writes "%04x:%02x:%02x.%d": a domain past 4
// digits never starts with 0, and a device number is 5 bits (00 to 1f).
TEST(ParseConfig, PciAddressesNoFunctionCanHaveAreRefused) {
  auto loaded = ParseConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 1, "selectors":
        {"pciAddresses": ["0000:3b:1F.7", "10000:e1:00.1", "ffffffff:00:00.0"]}},
      {"resourceName": "b", "rdmaHcaMax": 1, "selectors": {"pciAddresses": ["00000:3b:00.0"]}},
      {"resourceName": "c", "rdmaHcaMax": 1, "selectors": {"pciAddresses": ["0000:3b:20.0"]}},
      {"resourceName": "d", "rdmaHcaMax": 1, "selectors": {"pciAddresses": ["010000:e1:00.1"]}},
      {"resourceName": "e", "rdmaHcaMax": 1, "selectors": {"pciAddresses": ["0000:3B:FF.0"]}}]})");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->config.resources.size(), 1u);
  EXPECT_EQ(loaded->config.resources[0].selectors.pci_addresses,
            (std::vector<std::string>{"0000:3b:1f.7", "10000:e1:00.1", "ffffffff:00:00.0"}));
  const std::vector<std::string> never = {"00000:3b:00.0", "0000:3b:20.0", "010000:e1:00.1",
                                          "0000:3B:FF.0"};
  ASSERT_EQ(loaded->skipped.size(), never.size());
  for (size_t i = 0; i < never.size(); ++i) {
    ASSERT_FALSE(loaded->skipped[i].problems.empty()) << never[i];
    EXPECT_EQ(loaded->skipped[i].problems[0],
              Cat("config: configList[", i + 1, "].selectors.pciAddresses[0]: \"", never[i],
                  "\" is not a PCI address with its domain (like \"0000:3b:00.0\")"));
  }
}

// An unknown top-level key stopped the daemon (`someFutureKey: unknown key`) where the Go
// plugin, whose file this reads unchanged, ignores it. Now it is one warning naming the key
// (and the nearest known key when one is close) and the file serves; inside an entry an
// unknown key still skips that entry alone (README.md, "Config"). Fails on the old code:
// ParseConfig refused the first three files as a whole.
TEST(ParseConfig, AnUnknownTopLevelKeyIsAWarningAndIgnored) {
  const std::string entry =
      R"({"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}})";
  auto future = ParseConfig(R"({"someFutureKey": {"x": [1, 2]}, "configList": [)" + entry + "]}");
  ASSERT_TRUE(future.ok()) << future.status();
  ASSERT_EQ(future->config.resources.size(), 1u);
  EXPECT_TRUE(future->skipped.empty());
  ASSERT_EQ(future->warnings.size(), 1u);
  EXPECT_EQ(future->warnings[0],
            "config: someFutureKey: unknown key (ignored, as the Go plugin ignores it; known "
            "keys: periodicUpdateInterval, configList)");

  // A near miss names the key it is near; the misspelled key's value is not read.
  auto typo = ParseConfig(R"({"periodicUpdateIntervall": 5, "configList": [)" + entry + "]}");
  ASSERT_TRUE(typo.ok()) << typo.status();
  EXPECT_EQ(typo->config.periodic_update_interval_seconds, 60);
  ASSERT_EQ(typo->warnings.size(), 1u);
  EXPECT_EQ(typo->warnings[0],
            "config: periodicUpdateIntervall: unknown key; did you mean "
            "\"periodicUpdateInterval\"? (ignored, as the Go plugin ignores it)");

  // YAML, the same.
  auto yaml = ParseConfig(
      "someFutureKey: [1]\nconfigList:\n  - resourceName: a\n    rdmaHcaMax: 1\n"
      "    selectors: {vendors: [15b3]}\n");
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  ASSERT_EQ(yaml->warnings.size(), 1u);
  EXPECT_THAT(yaml->warnings[0], HasSubstr("config: someFutureKey: unknown key (ignored"));

  // Inside an entry an unknown key still refuses that entry, and the others serve.
  auto inside = ParseConfig(R"({"configList": [)" + entry + R"(,
      {"resourceName": "b", "rdmaHcaMax": 1, "someFutureKey": 1,
       "selectors": {"vendors": ["15b3"]}}]})");
  ASSERT_TRUE(inside.ok()) << inside.status();
  ASSERT_EQ(inside->config.resources.size(), 1u);
  ASSERT_EQ(inside->skipped.size(), 1u);
  EXPECT_EQ(inside->skipped[0].index, 1u);
  EXPECT_THAT(inside->skipped[0].problems[0],
              HasSubstr("config: configList[1].someFutureKey: unknown key"));

  // A file whose list is under a misspelled key has no configList: it fails, and the line
  // naming the misspelled key comes with the error.
  const std::string lost = Errors(R"({"configLists": [)" + entry + "]}");
  EXPECT_THAT(lost, HasSubstr("config: configList: no resources configuration found"));
  EXPECT_THAT(lost, HasSubstr("config: configLists: unknown key; did you mean \"configList\"?"));
}

}  // namespace
}  // namespace rdmadp::config
