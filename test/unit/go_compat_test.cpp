// validate --go-compatible's checker. The tables of the Go plugin's and the webhook's cases
// take the inputs and verdicts of Mellanox/k8s-rdma-shared-dev-plugin
// pkg/resources/resources_manager_test.go and Mellanox/network-operator
// api/v1alpha1/validator/nicpolicy_webhook_test.go (both Apache License 2.0), written again
// as our own cases (docs/go-compat-notes.md, "Sources").
#include "pkg/config/go_compat.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rdmadp::config {
namespace {

using Lines = std::vector<std::string>;

// One test case: a config text and every line GoCompatProblems gives for it, in order.
struct Case {
  const char* name;
  std::string text;
  Lines want;
};

void ExpectCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(GoCompatProblems(c.text), c.want);
  }
}

// The entry that every other part of a test leaves alone: valid for both readers.
constexpr const char* kGoodEntry =
    R"({"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}})";

std::string WithEntry(const std::string& entry) { return R"({"configList": [)" + entry + "]}"; }

TEST(GoCompat, FullyCompatibleFileHasNoProblems) {
  EXPECT_EQ(GoCompatProblems(R"({
    "periodicUpdateInterval": 300,
    "configList": [
      {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000, "devices": ["ib0", "ib1"]},
      {"resourceName": "hca_shared_devices_b", "resourcePrefix": "example.com",
       "rdmaHcaMax": 500,
       "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "drivers": ["mlx5_core"],
                     "ifNames": ["ib3", "ib4"], "linkTypes": ["infiniband"]}}
    ]
  })"),
            Lines{});
  // network-operator's own example (its webhook test "Valid RDMA config JSON").
  EXPECT_EQ(GoCompatProblems(R"({"configList": [{"resourceName": "rdma_shared_device_a",
      "rdmaHcaMax": 63, "selectors": {"vendors": ["15b3"], "deviceIDs": ["101b"]}}]})"),
            Lines{});
  EXPECT_EQ(GoCompatProblems(WithEntry(kGoodEntry)), Lines{});
}

// pkg/resources/resources_manager_test.go, ReadConfig and ValidateConfigs, as files. The Go
// tests build the structs directly; the JSON here is what decodes to them.
TEST(GoCompat, GoPluginConfigTests) {
  ExpectCases({
      {"ReadConfig: valid, non-default periodic update",
       R"({"configList": [{
             "resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
             "devices": ["ib0", "ib1"]},
           {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
             "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"],
                           "ifNames": ["ib2", "ib3"]}}],
         "periodicUpdateInterval": 30})",
       {}},
      {"ReadConfig: valid, default periodic update",
       R"({"configList": [{
             "resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
             "devices": ["ib0", "ib1"]},
           {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
             "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"],
                           "ifNames": ["ib2", "ib3"]}}]})",
       {}},
      {"ReadConfig: invalid config file",
       R"({"configList": [{
    "resourceName": "hca_shared_devices_a",
    "rdmaHcaMax": 1000,
    "devices": ["ib0", "ib1"]
  }}},
]})",
       {"go-compatible: line 5 column 4: not JSON: syntax error while parsing array - "
        "unexpected '}'; expected ']': the Go plugin and the webhook refuse the file"}},
      {"ValidateConfigs: devices field",
       WithEntry(R"({"resourceName": "test_config", "rdmaHcaMax": 100, "devices": ["ib0"]})"),
       {}},
      {"ValidateConfigs: selectors field",
       WithEntry(R"({"resourceName": "test_config", "rdmaHcaMax": 100,
           "selectors": {"vendors": ["15b3"], "deviceIDs": ["1017"], "ifNames": ["eth1"]}})"),
       {}},
      {"ValidateConfigs: 0 number of resources",
       WithEntry(R"({"resourceName": "test_config", "rdmaHcaMax": 0, "devices": ["ib0"]})"),
       {}},
      {"ValidateConfigs: empty config list",
       R"({"configList": []})",
       {"go-compatible: configList: is empty: the webhook refuses it (it needs at least 1 entry)",
        "go-compatible: configList: has no entries: the Go plugin refuses the file (\"no "
        "resources configuration found\")"}},
      {"ValidateConfigs: invalid name",
       WithEntry(R"({"resourceName": "test_config$$", "rdmaHcaMax": 100, "devices": ["ib0"]})"),
       {"go-compatible: configList[0].resourceName: \"test_config$$\" must start and end with a "
        "letter or digit and hold only letters, digits, '-', '_' and '.': the webhook refuses "
        "it",
        "go-compatible: configList[0].resourceName: \"test_config$$\" holds characters other "
        "than letters, digits and '_': the Go plugin refuses the file (it allows only "
        "^[a-zA-Z0-9_]+$)"}},
      {"ValidateConfigs: repeated names",
       R"({"configList": [
           {"resourceName": "test_config", "rdmaHcaMax": 100, "devices": ["ib0"]},
           {"resourceName": "test_config", "rdmaHcaMax": 500, "devices": ["ib1"]}]})",
       {"go-compatible: configList[1].resourceName: \"test_config\" is already configList[0]'s "
        "name: the Go plugin refuses the file (names must be unique)"}},
      {"ValidateConfigs: invalid number of resources",
       WithEntry(R"({"resourceName": "test_config", "rdmaHcaMax": -100, "devices": ["ib0"]})"),
       {"go-compatible: configList[0].rdmaHcaMax: is -100: the Go plugin refuses the file (it "
        "must be >= 0)"}},
      {"ValidateConfigs: both selectors and devices",
       WithEntry(R"({"resourceName": "test_config", "rdmaHcaMax": 100, "devices": ["eth0"],
           "selectors": {"ifNames": ["eth1"]}})"),
       {"go-compatible: configList[0]: has both selectors and devices: the Go plugin refuses "
        "the file (an entry takes one of them, not both)"}},
      {"ValidateConfigs: neither selectors nor devices",
       WithEntry(R"({"resourceName": "test_config", "rdmaHcaMax": 100})"),
       {"go-compatible: configList[0]: has neither \"selectors\" nor \"devices\": the webhook "
        "refuses it",
        "go-compatible: configList[0]: has no selectors and no devices: the Go plugin refuses "
        "the file (an entry needs one of them)"}},
      // The Go test sets the duration to -10 ns directly; in a file the unit is seconds.
      {"ValidateConfigs: invalid periodicUpdateInterval",
       R"({"periodicUpdateInterval": -10, "configList": [)" + std::string(kGoodEntry) + "]}",
       {"go-compatible: periodicUpdateInterval: is -10: the Go plugin refuses the file (invalid "
        "\"periodicUpdateInterval\" configuration \"-10000000000\")"}},
  });
}

// api/v1alpha1/validator/nicpolicy_webhook_test.go, its RdmaSharedDevicePlugin cases.
TEST(GoCompat, WebhookTests) {
  ExpectCases({
      {"missing starting {",
       R"("configList": [{"resourceName": "a", "rdmaHcaMax": 63, )"
       R"("selectors": {"vendors": ["15b3"]}}]})",
       {"go-compatible: line 1 column 13: not JSON: syntax error while parsing value - "
        "unexpected ':'; expected end of input: the Go plugin and the webhook refuse the file"}},
      {"resourceName not valid",
       WithEntry(R"({"resourceName": "rdma-shared-device-a!!", "rdmaHcaMax": 63,
           "selectors": {"vendors": ["15b3"], "deviceIDs": ["101b"]}})"),
       {"go-compatible: configList[0].resourceName: \"rdma-shared-device-a!!\" must start and "
        "end with a letter or digit and hold only letters, digits, '-', '_' and '.': the "
        "webhook refuses it",
        "go-compatible: configList[0].resourceName: \"rdma-shared-device-a!!\" holds characters "
        "other than letters, digits and '_': the Go plugin refuses the file (it allows only "
        "^[a-zA-Z0-9_]+$)"}},
      {"no configList provided",
       R"({"configList_a": [)" + std::string(kGoodEntry) + "]}",
       {"go-compatible: configList_a: unknown key (did you mean \"configList\"?): the Go plugin "
        "and the webhook ignore it",
        "go-compatible: configList: is missing: the webhook refuses it (configList is required)",
        "go-compatible: configList: has no entries: the Go plugin refuses the file (\"no "
        "resources configuration found\")"}},
      {"none of the selectors are provided",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 63, "selectors": {}})"),
       {"go-compatible: configList[0].selectors: has none of vendors, deviceIDs, drivers, "
        "ifNames, linkTypes: the webhook refuses it (it needs at least one)",
        "go-compatible: configList[0]: has no selectors and no devices: the Go plugin refuses "
        "the file (an entry needs one of them)"}},
      {"vendors must be list of strings",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 63,
           "selectors": {"vendors": [15], "deviceIDs": ["101b"]}})"),
       {"go-compatible: configList[0].selectors.vendors[0]: must be a string, got 15: the Go "
        "plugin refuses the file and the webhook refuses it"}},
      {"deviceIDs must be list of strings",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 63,
           "selectors": {"vendors": ["15b3"], "deviceIDs": [1010]}})"),
       {"go-compatible: configList[0].selectors.deviceIDs[0]: must be a string, got 1010: the "
        "Go plugin refuses the file and the webhook refuses it"}},
      {"resourcePrefix is not FQDN",
       WithEntry(R"({"resourceName": "a", "resourcePrefix": "nvidia.com#$&&@", "rdmaHcaMax": 63,
           "selectors": {"vendors": ["15b3"]}})"),
       {"go-compatible: configList[0].resourcePrefix: \"nvidia.com#$&&@\" is not a domain name "
        "such as \"example.com\" (labels after the first hold letters only): the webhook "
        "refuses it (the Go plugin takes any prefix)"}},
  });
}

TEST(GoCompat, StrictJsonSyntax) {
  ExpectCases({
      {"empty",
       "  \n",
       {"go-compatible: top level: the file is empty: the Go plugin and the "
        "webhook refuse the file"}},
      {"trailing comma",
       R"({"periodicUpdateInterval": 30,})",
       {"go-compatible: line 1 column 31: not JSON: syntax error while parsing object key - "
        "unexpected '}'; expected string literal (a trailing comma is not JSON): the Go plugin "
        "and the webhook refuse the file"}},
      {"comment",
       "{\n  // x\n  \"configList\": []\n}",
       {"go-compatible: line 2 column 3: not JSON: syntax error while parsing object key - "
        "invalid literal; last read: '{<U+000A>  /'; expected string literal (comments are not "
        "JSON): the Go plugin and the webhook refuse the file"}},
      {"single quotes",
       R"({'configList': []})",
       {"go-compatible: line 1 column 2: not JSON: syntax error while parsing object key - "
        "invalid literal; last read: '{''; expected string literal (JSON strings take double "
        "quotes): the Go plugin and the webhook refuse the file"}},
      {"YAML",
       "configList:\n- resourceName: a\n",
       {"go-compatible: line 1 column 1: not JSON: syntax error while parsing value - invalid "
        "literal; last read: 'c' (the Go plugin reads JSON only; this looks like YAML): the Go "
        "plugin and the webhook refuse the file"}},
      // nlohmann would skip the mark; Go's scanner does not. The rest is still checked.
      {"byte order mark",
       "\xEF\xBB\xBF" + WithEntry(kGoodEntry),
       {"go-compatible: line 1 column 1: a UTF-8 byte order mark is not JSON to Go: the Go "
        "plugin and the webhook refuse the file"}},
      // nlohmann stops at a NUL as at the end of the input; Go refuses it.
      {"NUL after the document",
       WithEntry(kGoodEntry) + std::string(1, '\0'),
       {"go-compatible: line 1 column 93: a NUL byte is not JSON: the Go plugin and the webhook "
        "refuse the file"}},
      {"deeper than Go's scanner goes",
       std::string(10001, '[') + std::string(10001, ']'),
       {"go-compatible: line 1 column 10001: arrays and objects nest more than 10000 deep: the "
        "Go plugin and the webhook refuse the file"}},
      {"as deep as Go's scanner goes",
       std::string(10000, '[') + std::string(10000, ']'),
       {"go-compatible: top level: must be an object, got a list: the Go plugin and the webhook "
        "refuse the file"}},
      {"number beyond a float64",
       R"({"x": 1e999})",
       {"go-compatible: line 1 column 11: the number 1e999 does not fit a float64: the webhook "
        "refuses it, and the Go plugin refuses the file unless the key is one it ignores "
        "(nothing after it was checked)"}},
  });
}

// Go reads these and decodes them differently from what is written: replacement characters.
TEST(GoCompat, TextGoReadsDifferently) {
  ExpectCases({
      {"bytes that are not UTF-8",
       "{\"configList\": [{\"resourceName\": \"a\", \"rdmaHcaMax\": 1,\n"
       "\"selectors\": {\"ifNames\": [\"i\xff\"]}}]}",
       {"go-compatible: line 2 column 29: a string holds bytes that are not UTF-8: the Go plugin "
        "reads each as U+FFFD, so the value differs from the file"}},
      {"half a surrogate pair (a whole pair is fine)",
       R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 1, )"
       R"("devices": ["\ud83d\ude00", "\udc00x"]}]})",
       {"go-compatible: line 1 column 85: a \\u escape names half of a UTF-16 surrogate pair: "
        "the Go plugin reads it as U+FFFD"}},
  });
}

TEST(GoCompat, TopLevelMustBeAnObject) {
  ExpectCases({
      {"list",
       "[]",
       {"go-compatible: top level: must be an object, got a list: the Go plugin and the webhook "
        "refuse the file"}},
      {"string",
       R"("x")",
       {"go-compatible: top level: must be an object, got the string \"x\": the Go plugin and "
        "the webhook refuse the file"}},
      // Go decodes null into an empty config, which ValidateConfigs refuses.
      {"null",
       "null",
       {"go-compatible: top level: is null: the webhook refuses it (it must be an object; the Go "
        "plugin reads no configList)",
        "go-compatible: configList: has no entries: the Go plugin refuses the file (\"no "
        "resources configuration found\")"}},
  });
}

TEST(GoCompat, ConfigListShape) {
  ExpectCases({
      {"missing",
       "{}",
       {"go-compatible: configList: is missing: the webhook refuses it (configList is required)",
        "go-compatible: configList: has no entries: the Go plugin refuses the file (\"no "
        "resources configuration found\")"}},
      {"null",
       R"({"configList": null})",
       {"go-compatible: configList: is null: the webhook refuses it (it must be a list; the Go "
        "plugin reads no entries)",
        "go-compatible: configList: has no entries: the Go plugin refuses the file (\"no "
        "resources configuration found\")"}},
      {"an object",
       R"({"configList": {}})",
       {"go-compatible: configList: must be a list, got an object: the Go plugin refuses the "
        "file and the webhook refuses it",
        "go-compatible: configList: has no entries: the Go plugin refuses the file (\"no "
        "resources configuration found\")"}},
      {"a null entry",
       R"({"configList": [null]})",
       {"go-compatible: configList[0]: is null: the webhook refuses it (it must be an object; "
        "the Go plugin reads an empty entry)",
        "go-compatible: configList[0].resourceName: is missing or empty: the Go plugin refuses "
        "the file (it allows only ^[a-zA-Z0-9_]+$)",
        "go-compatible: configList[0]: has no selectors and no devices: the Go plugin refuses "
        "the file (an entry needs one of them)"}},
      {"a string entry",
       R"({"configList": ["a"]})",
       {"go-compatible: configList[0]: must be an object, got the string \"a\": the Go plugin "
        "refuses the file and the webhook refuses it",
        "go-compatible: configList[0].resourceName: is missing or empty: the Go plugin refuses "
        "the file (it allows only ^[a-zA-Z0-9_]+$)",
        "go-compatible: configList[0]: has no selectors and no devices: the Go plugin refuses "
        "the file (an entry needs one of them)"}},
      {"required keys missing",
       WithEntry(R"({"selectors": {"vendors": ["15b3"]}})"),
       {"go-compatible: configList[0].resourceName: is missing: the webhook refuses it "
        "(resourceName is required)",
        "go-compatible: configList[0].rdmaHcaMax: is missing: the webhook refuses it (rdmaHcaMax "
        "is required; the Go plugin reads 0)",
        "go-compatible: configList[0].resourceName: is missing or empty: the Go plugin refuses "
        "the file (it allows only ^[a-zA-Z0-9_]+$)"}},
  });
}

// Go's int: strconv.ParseInt of the literal, 64 bits. The webhook's "integer": any whole
// number.
TEST(GoCompat, RdmaHcaMaxTypes) {
  auto entry = [](const std::string& value) {
    return WithEntry(R"({"resourceName": "a", "rdmaHcaMax": )" + value +
                     R"(, "selectors": {"vendors": ["15b3"]}})");
  };
  const std::string kBoth = "the Go plugin refuses the file and the webhook refuses it";
  const std::string kGoOnly = "the Go plugin refuses the file (the webhook accepts it)";
  const std::string kPath = "go-compatible: configList[0].rdmaHcaMax: ";
  ExpectCases({
      {"string", entry(R"("10")"), {kPath + "must be an integer, got the string \"10\": " + kBoth}},
      {"fraction",
       entry("1.5"),
       {kPath + "must be an integer without a fraction or exponent, got 1.5: " + kBoth}},
      {"exponent",
       entry("1e3"),
       {kPath + "must be an integer without a fraction or exponent, got 1e3: " + kGoOnly}},
      {"whole with a fraction",
       entry("10.0"),
       {kPath + "must be an integer without a fraction or exponent, got 10.0: " + kGoOnly}},
      {"beyond uint64",
       entry("99999999999999999999"),
       {kPath + "99999999999999999999 is out of range of Go's 64-bit int: " + kGoOnly}},
      {"beyond int64",
       entry("9223372036854775808"),
       {kPath + "9223372036854775808 is out of range of Go's 64-bit int: " + kGoOnly}},
      {"largest int64", entry("9223372036854775807"), {}},
      {"boolean", entry("true"), {kPath + "must be an integer, got true: " + kBoth}},
      {"list", entry("[1]"), {kPath + "must be an integer, got a list: " + kBoth}},
      {"null",
       entry("null"),
       {kPath + "is null: the webhook refuses it (it must be an integer; the Go plugin reads 0)"}},
      {"negative",
       entry("-1"),
       {kPath + "is -1: the Go plugin refuses the file (it must be >= 0)"}},
  });
}

TEST(GoCompat, PeriodicUpdateIntervalTypes) {
  auto file = [](const std::string& value) {
    return R"({"periodicUpdateInterval": )" + value + R"(, "configList": [)" +
           std::string(kGoodEntry) + "]}";
  };
  const std::string kPath = "go-compatible: periodicUpdateInterval: ";
  ExpectCases({
      {"null: the default", file("null"), {}},
      {"0: off", file("0"), {}},
      {"string",
       file(R"("60")"),
       {kPath + "must be an integer (seconds) or null, got the string \"60\": the Go plugin "
                "refuses the file"}},
      {"fraction",
       file("1.5"),
       {kPath + "must be an integer without a fraction or exponent, got 1.5: the Go plugin "
                "refuses the file"}},
      {"largest that fits Go's duration", file("9223372036"), {}},
      {"wraps negative",
       file("9223372037"),
       {kPath + "is 9223372037 seconds, beyond Go's 64-bit nanosecond duration: the Go plugin "
                "refuses the file (invalid \"periodicUpdateInterval\" configuration "
                "\"-9223372036709551616\")"}},
      {"wraps positive",
       file("18446744074"),
       {kPath + "is 18446744074 seconds, beyond Go's 64-bit nanosecond duration: the Go plugin "
                "reads it as 290448384 ns"}},
  });
}

TEST(GoCompat, StringAndListTypes) {
  ExpectCases({
      {"wrong types",
       WithEntry(R"({"resourceName": 5, "rdmaHcaMax": 1, "devices": "ib0"})"),
       {"go-compatible: configList[0].resourceName: must be a string, got 5: the Go plugin "
        "refuses the file and the webhook refuses it",
        "go-compatible: configList[0].devices: must be a list of strings, got the string "
        "\"ib0\": the Go plugin refuses the file and the webhook refuses it",
        "go-compatible: configList[0].resourceName: is missing or empty: the Go plugin refuses "
        "the file (it allows only ^[a-zA-Z0-9_]+$)",
        "go-compatible: configList[0]: has no selectors and no devices: the Go plugin refuses "
        "the file (an entry needs one of them)"}},
      {"list items",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
           "selectors": {"ifNames": ["ib0", null, "", 7]}})"),
       {"go-compatible: configList[0].selectors.ifNames[1]: is null: the webhook refuses it (it "
        "must be a string; the Go plugin reads \"\")",
        "go-compatible: configList[0].selectors.ifNames[2]: is empty: the webhook refuses it "
        "(strings here need at least 1 character)",
        "go-compatible: configList[0].selectors.ifNames[3]: must be a string, got 7: the Go "
        "plugin refuses the file and the webhook refuses it"}},
      {"nulls Go takes",
       WithEntry(R"({"resourceName": null, "rdmaHcaMax": 1, "selectors": null,
           "devices": ["ib0"]})"),
       {"go-compatible: configList[0].resourceName: is null: the webhook refuses it (it must be "
        "a string; the Go plugin leaves it unset)",
        "go-compatible: configList[0].selectors: is null: the webhook refuses it (it must be an "
        "object; the Go plugin reads no selectors)",
        "go-compatible: configList[0].resourceName: is missing or empty: the Go plugin refuses "
        "the file (it allows only ^[a-zA-Z0-9_]+$)"}},
      {"null list",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
           "selectors": {"vendors": ["15b3"], "drivers": null}})"),
       {"go-compatible: configList[0].selectors.drivers: is null: the webhook refuses it (it "
        "must be a list of strings; the Go plugin reads an empty list)"}},
      {"selectors not an object",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1, "selectors": ["15b3"]})"),
       {"go-compatible: configList[0].selectors: must be an object, got a list: the Go plugin "
        "refuses the file and the webhook refuses it",
        "go-compatible: configList[0]: has no selectors and no devices: the Go plugin refuses "
        "the file (an entry needs one of them)"}},
  });
}

TEST(GoCompat, ResourceNames) {
  const std::string kWebhookName =
      "\" must start and end with a letter or digit and hold only letters, digits, '-', '_' "
      "and '.': the webhook refuses it";
  const std::string kGoName =
      "\" holds characters other than letters, digits and '_': the Go plugin refuses the file "
      "(it allows only ^[a-zA-Z0-9_]+$)";
  auto entry = [](const std::string& name) {
    return WithEntry(R"({"resourceName": ")" + name +
                     R"(", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}})");
  };
  const std::string kPath = "go-compatible: configList[0].resourceName: ";
  const std::string kLong(70, 'a');
  ExpectCases({
      {"'-': the webhook's only", entry("a-b"), {kPath + "\"a-b" + kGoName}},
      {"'.': the webhook's only", entry("a.b"), {kPath + "\"a.b" + kGoName}},
      {"leading '_': Go's only", entry("_a"), {kPath + "\"_a" + kWebhookName}},
      {"trailing '_': Go's only", entry("a_"), {kPath + "\"a_" + kWebhookName}},
      {"empty",
       entry(""),
       {kPath + "is empty: the webhook refuses it (a name starts and ends with a letter or "
                "digit)",
        kPath + "is missing or empty: the Go plugin refuses the file (it allows only "
                "^[a-zA-Z0-9_]+$)"}},
      // Echoes escape control characters and quotes, and stop at 64 bytes.
      {"escaped",
       entry(R"(a\tb\"c)"),
       {kPath + "\"a\\tb\\\"c" + kWebhookName, kPath + "\"a\\tb\\\"c" + kGoName}},
      {"long",
       entry(kLong + "-"),
       {kPath + "\"" + std::string(64, 'a') + "... (71 bytes)" + kWebhookName,
        kPath + "\"" + std::string(64, 'a') + "... (71 bytes)" + kGoName}},
  });
}

TEST(GoCompat, ResourcePrefixes) {
  auto entry = [](const std::string& prefix) {
    return WithEntry(R"({"resourceName": "a", "resourcePrefix": ")" + prefix +
                     R"(", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}})");
  };
  auto refused = [](const std::string& prefix) {
    return "go-compatible: configList[0].resourcePrefix: \"" + prefix +
           "\" is not a domain name such as \"example.com\" (labels after the first hold "
           "letters only): the webhook refuses it (the Go plugin takes any prefix)";
  };
  ExpectCases({
      {"nvidia.com", entry("nvidia.com"), {}},
      {"rdma-1.example.io", entry("rdma-1.example.io"), {}},
      {"no dot: the Go plugin's own default", entry("rdma"), {refused("rdma")}},
      {"a digit after the first label", entry("rdma.k8s.io"), {refused("rdma.k8s.io")}},
      {"upstream README's example_prefix", entry("example_prefix"), {refused("example_prefix")}},
      {"a one-letter last label", entry("example.c"), {refused("example.c")}},
      {"empty: Go takes the default", entry(""), {refused("")}},
  });
}

// Keys only this plugin reads: the Go plugin skips them (and so changes what the entry
// means), the webhook's schema lets them through.
TEST(GoCompat, OurEntryKeys) {
  const std::string kWhat = ": is a key only this plugin reads: ";
  EXPECT_EQ(
      GoCompatProblems(WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 10,
          "selectors": {"vendors": ["15b3"]}, "frontend": "dra", "deviceModel": "perHca",
          "envHints": ["nccl"], "skipUnusable": true, "memlock": "unlimited",
          "pciDeviceEnv": false, "unusedGraceSeconds": 600, "trafficClass": 106,
          "gidIndex": "auto"})")),
      (Lines{
          "go-compatible: configList[0].frontend" + kWhat +
              "the Go plugin ignores it and serves the entry through the device-plugin API, not "
              "DRA",
          "go-compatible: configList[0].deviceModel" + kWhat +
              "the Go plugin ignores it (it has no DRA front end, and each slot it advertises "
              "gives the whole pool)",
          "go-compatible: configList[0].envHints" + kWhat +
              "the Go plugin ignores it: containers get no NCCL_IB_HCA or UCX_NET_DEVICES",
          "go-compatible: configList[0].skipUnusable" + kWhat +
              "the Go plugin ignores it: functions with no ACTIVE port or an all-zero GID table "
              "stay in the pool",
          "go-compatible: configList[0].memlock" + kWhat +
              "the Go plugin ignores it: containers keep the container runtime's RLIMIT_MEMLOCK",
          "go-compatible: configList[0].trafficClass" + kWhat +
              "the Go plugin ignores it: containers get no NCCL_IB_TC or UCX_IB_TRAFFIC_CLASS",
          "go-compatible: configList[0].gidIndex" + kWhat +
              "the Go plugin ignores it: containers get no NCCL_IB_GID_INDEX or UCX_IB_GID_INDEX",
      }))
      << "pciDeviceEnv is no line: the Go plugin sets no variable, true or false; "
         "unusedGraceSeconds neither: it changes what this plugin says, never what a pod gets";
  // At their defaults they change nothing for the Go plugin.
  EXPECT_EQ(GoCompatProblems(WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 10,
          "devices": ["ib0"], "frontend": "devicePlugin", "deviceModel": "auto",
          "envHints": [], "skipUnusable": false, "memlock": null, "pciDeviceEnv": true,
          "trafficClass": null, "gidIndex": null})")),
            Lines{});
  // This plugin matches its keys ignoring ASCII case, as it does the Go plugin's.
  EXPECT_EQ(GoCompatProblems(WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 10,
          "devices": ["ib0"], "SkipUnusable": true})")),
            Lines{"go-compatible: configList[0].SkipUnusable" + kWhat +
                  "the Go plugin ignores it: functions with no ACTIVE port or an all-zero GID "
                  "table stay in the pool"});
}

TEST(GoCompat, PciAddressesSelector) {
  const std::string kPath = "go-compatible: configList[0].selectors.pciAddresses: ";
  ExpectCases({
      // Go sees no selector at all, and refuses the entry.
      {"alone",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
           "selectors": {"pciAddresses": ["0000:3b:00.0"]}})"),
       {kPath + "is not a Go plugin selector: the webhook refuses it; the Go plugin ignores it "
                "and finds no selector in this entry",
        "go-compatible: configList[0].selectors: has none of vendors, deviceIDs, drivers, "
        "ifNames, linkTypes: the webhook refuses it (it needs at least one)",
        "go-compatible: configList[0]: has no selectors and no devices: the Go plugin refuses "
        "the file (an entry needs one of them)"}},
      // Go starts, with a wider pool.
      {"with another selector",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
           "selectors": {"vendors": ["15b3"], "pciAddresses": ["0000:3b:00.0"]}})"),
       {kPath + "is not a Go plugin selector: the webhook refuses it; the Go plugin ignores it "
                "and pools every function the other selectors match"}},
      {"empty",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
           "selectors": {"vendors": ["15b3"], "pciAddresses": []}})"),
       {kPath + "is not a Go plugin selector: the webhook refuses it; the Go plugin ignores it "
                "(it is empty here)"}},
  });
}

TEST(GoCompat, UnknownKeys) {
  ExpectCases({
      {"at each level",
       R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 1,
           "selector": {"vendors": ["15b3"]}}], "configLists": [], "owner": "x"})",
       {"go-compatible: configList[0].selector: unknown key (did you mean \"selectors\"?): the "
        "Go plugin and the webhook ignore it",
        "go-compatible: configList[0]: has neither \"selectors\" nor \"devices\": the webhook "
        "refuses it",
        "go-compatible: configLists: unknown key (did you mean \"configList\"?): the Go plugin "
        "and the webhook ignore it",
        "go-compatible: owner: unknown key: the Go plugin and the webhook ignore it",
        "go-compatible: configList[0]: has no selectors and no devices: the Go plugin refuses "
        "the file (an entry needs one of them)"}},
      // The webhook's schema closes the selectors object (additionalProperties: false).
      {"in selectors",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
           "selectors": {"vendors": ["15b3"], "vendor": ["15b3"], "linkType": ["ether"]}})"),
       {"go-compatible: configList[0].selectors.vendor: unknown key (did you mean "
        "\"vendors\"?): the webhook refuses it; the Go plugin ignores it",
        "go-compatible: configList[0].selectors.linkType: unknown key (did you mean "
        "\"linkTypes\"?): the webhook refuses it; the Go plugin ignores it"}},
      {"a key with a control character",
       R"({"configList": [)" + std::string(kGoodEntry) + R"(], "a\u0001b": 1})",
       {"go-compatible: a\\u0001b: unknown key: the Go plugin and the webhook ignore it"}},
  });
}

// Go matches keys ignoring case (Unicode simple folding); the webhook's schema does not.
TEST(GoCompat, KeysMatchedIgnoringCase) {
  ExpectCases({
      {"configList",
       WithEntry(kGoodEntry).replace(2, 10, "ConfigList"),
       {"go-compatible: ConfigList: matches \"configList\" only ignoring case: the Go plugin "
        "reads it; the webhook's schema matches keys exactly and skips it",
        "go-compatible: configList: is missing: the webhook refuses it (configList is "
        "required)"}},
      {"in an entry and in selectors",
       WithEntry(R"({"resourceName": "a", "RdmaHcaMax": 1,
           "selectors": {"vendors": ["15b3"], "IfNames": ["ib0"]}})"),
       {"go-compatible: configList[0].RdmaHcaMax: matches \"rdmaHcaMax\" only ignoring case: "
        "the Go plugin reads it; the webhook's schema matches keys exactly and skips it",
        "go-compatible: configList[0].selectors.IfNames: matches \"ifNames\" only ignoring "
        "case: the Go plugin reads it; the webhook refuses it (its schema matches keys "
        "exactly)",
        "go-compatible: configList[0].rdmaHcaMax: is missing: the webhook refuses it "
        "(rdmaHcaMax is required)"}},
      // U+212A KELVIN SIGN folds onto 'k' for Go (and not for this plugin).
      {"Kelvin sign",
       WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
           "selectors": {"vendors": ["15b3"], "lin\u212aTypes": ["ether"]}})"),
       {"go-compatible: configList[0].selectors.lin\xE2\x84\xAATypes: matches \"linkTypes\" "
        "only ignoring case: the Go plugin reads it; the webhook refuses it (its schema matches "
        "keys exactly)"}},
  });
}

// Go decodes every copy of a key in file order; an object merges into the earlier one.
TEST(GoCompat, DuplicateKeys) {
  const std::string kWho =
      ": the Go plugin decodes both in file order: a later value overwrites an earlier one, an "
      "object merges into it";
  // Merged, the selectors hold vendors and ifNames: valid for Go.
  EXPECT_EQ(
      GoCompatProblems(WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
          "rdmaHcaMax": 2, "selectors": {"vendors": ["15b3"]},
          "selectors": {"ifNames": ["ib0"]}})")),
      (Lines{
          "go-compatible: configList[0].rdmaHcaMax: repeats \"rdmaHcaMax\" in this object" + kWho,
          "go-compatible: configList[0].selectors: repeats \"selectors\" in this object" + kWho,
      }));
  // The merge decides: devices and the first selectors both survive, which Go refuses.
  EXPECT_EQ(
      GoCompatProblems(WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
          "selectors": {"vendors": ["15b3"]}, "devices": ["ib0"], "selectors": {}})")),
      (Lines{
          "go-compatible: configList[0].selectors: repeats \"selectors\" in this object" + kWho,
          "go-compatible: configList[0].selectors: has none of vendors, deviceIDs, "
          "drivers, ifNames, linkTypes: the webhook refuses it (it needs at least one)",
          "go-compatible: configList[0]: has both selectors and devices: the Go plugin "
          "refuses the file (an entry takes one of them, not both)",
      }));
}

// This plugin takes "15B3" and "0x15b3" for 15b3; the Go plugin compares strings exactly.
TEST(GoCompat, PciIdsGoComparesAsWritten) {
  const std::string kWho = ": the Go plugin compares it as written and matches no device";
  EXPECT_EQ(GoCompatProblems(WithEntry(R"({"resourceName": "a", "rdmaHcaMax": 1,
          "selectors": {"vendors": ["15B3", "0x15b3", "mlx"], "deviceIDs": ["101B"]}})")),
            (Lines{
                "go-compatible: configList[0].selectors.vendors[0]: \"15B3\" is not 4 lowercase "
                "hex digits (write \"15b3\")" +
                    kWho,
                "go-compatible: configList[0].selectors.vendors[1]: \"0x15b3\" is not 4 "
                "lowercase hex digits (write \"15b3\")" +
                    kWho,
                "go-compatible: configList[0].selectors.vendors[2]: \"mlx\" is not 4 lowercase "
                "hex digits" +
                    kWho,
                "go-compatible: configList[0].selectors.deviceIDs[0]: \"101B\" is not 4 "
                "lowercase hex digits (write \"101b\")" +
                    kWho,
            }));
}

TEST(GoCompat, ProblemsAreCapped) {
  std::string text = R"({"configList": [)" + std::string(kGoodEntry) + "]";
  for (int i = 0; i < 105; ++i) text += ", \"k" + std::to_string(i) + "\": 0";
  text += "}";
  const Lines got = GoCompatProblems(text);
  ASSERT_EQ(got.size(), 101u);
  EXPECT_EQ(got[0], "go-compatible: k0: unknown key: the Go plugin and the webhook ignore it");
  EXPECT_EQ(got[99], "go-compatible: k99: unknown key: the Go plugin and the webhook ignore it");
  EXPECT_EQ(got[100],
            "go-compatible: top level: 5 more problems not listed: fix the ones above first");
}

}  // namespace
}  // namespace rdmadp::config
