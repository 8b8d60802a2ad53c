#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pkg/cli/flags.h"

namespace rdmadp::cli {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<Options> Parse(std::vector<std::string_view> args) { return ParseFlags(args); }

TEST(Flags, DefaultsMatchTheGoPlugin) {
  auto o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->command, Command::kRun);
  EXPECT_EQ(o->config_file, "/k8s-rdma-shared-dev-plugin/config.json");
  EXPECT_EQ(o->kubelet_root_dir, "/var/lib/kubelet");
  EXPECT_EQ(o->registration_mode, RegistrationMode::kKubelet);
  EXPECT_EQ(o->sysfs_root, "/sys");
  EXPECT_EQ(o->dev_root, "/dev");
  EXPECT_FALSE(o->use_cdi);
  EXPECT_EQ(o->cdi_spec_dir, "/var/run/cdi");
  EXPECT_TRUE(o->link_up);
}

TEST(Flags, OneOrTwoDashesEqualsOrSeparateValue) {
  auto o = Parse({"-config-file=/a.json", "--kubelet-root-dir", "/data/kubelet",
                  "--registration-mode=watcher", "-sysfs-root", "/fake/sys", "--use-cdi",
                  "--no-link-up", "--cdi-spec-dir=/etc/cdi"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->config_file, "/a.json");
  EXPECT_EQ(o->kubelet_root_dir, "/data/kubelet");
  EXPECT_EQ(o->registration_mode, RegistrationMode::kWatcher);
  EXPECT_EQ(o->sysfs_root, "/fake/sys");
  EXPECT_TRUE(o->use_cdi);
  EXPECT_FALSE(o->link_up);
  EXPECT_EQ(o->cdi_spec_dir, "/etc/cdi");
}

TEST(Flags, BooleansAcceptExplicitValues) {
  auto o = Parse({"-use-cdi=false", "--no-link-up=0"});
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->use_cdi);
  EXPECT_TRUE(o->link_up);
  EXPECT_THAT(std::string(Parse({"--use-cdi=yes"}).status().message()),
              HasSubstr("invalid boolean value \"yes\" for -use-cdi"));
}

TEST(Flags, VersionAndHelp) {
  EXPECT_EQ(Parse({"-v"})->command, Command::kVersion);
  EXPECT_EQ(Parse({"--version"})->command, Command::kVersion);
  EXPECT_EQ(Parse({"-h"})->command, Command::kHelp);
  EXPECT_EQ(Parse({"--version", "--help"})->command, Command::kHelp);
}

TEST(Flags, Errors) {
  EXPECT_EQ(Parse({"--bogus"}).status().message(), "flag provided but not defined: -bogus");
  EXPECT_EQ(Parse({"--config-file"}).status().message(), "flag needs an argument: -config-file");
  EXPECT_THAT(std::string(Parse({"--registration-mode=sometimes"}).status().message()),
              HasSubstr("use kubelet, watcher or auto"));
  EXPECT_THAT(std::string(Parse({"--config-file="}).status().message()),
              HasSubstr("must not be empty"));
  EXPECT_FALSE(Parse({"---config-file=/x"}).ok());
  EXPECT_EQ(Parse({"--memlock-hook-path=bin/hook"}).status().message(),
            "-memlock-hook-path: \"bin/hook\" is not an absolute path (or empty: never)");
  EXPECT_EQ(Parse({"--memlock-hook-path="})->memlock_hook_path, "");
  EXPECT_EQ(Parse({})->memlock_hook_path, "/var/lib/k8s-rdma-shared-dp/bin/rdmadp-memlock-hook");
}

TEST(Flags, TheDraHealthTimeoutIsSecondsTheKubeletCanKeep) {
  EXPECT_EQ(Parse({})->dra_health_timeout_seconds, 30);
  EXPECT_EQ(Parse({"-dra-health-timeout=3"})->dra_health_timeout_seconds, 3);
  EXPECT_EQ(Parse({"--dra-health-timeout", "3600"})->dra_health_timeout_seconds, 3600);
  for (std::string_view bad : {"2", "3601", "10s", "", "-5"}) {
    const std::string arg = "--dra-health-timeout=" + std::string(bad);
    EXPECT_EQ(Parse({arg}).status().message(),
              "invalid value \"" + std::string(bad) + "\" for -dra-health-timeout: use 3..3600")
        << bad;
  }
  EXPECT_THAT(Usage("k8s-rdma-shared-dp"), HasSubstr("--dra-health-timeout"));
}

TEST(Flags, StrayArgumentsAreUsageErrorsNeverARun) {
  EXPECT_EQ(Parse({"valdiate", "--config-file", "x"}).status().message(),
            "unexpected argument \"valdiate\"; did you mean `validate`?");
  EXPECT_EQ(Parse({"dicsover"}).status().message(),
            "unexpected argument \"dicsover\"; did you mean `discover`?");
  EXPECT_EQ(Parse({"--use-cdi", "true", "validate"}).status().message(),
            "unexpected argument \"true\"; boolean flags take their value after '=', e.g. "
            "--use-cdi=true");
  EXPECT_THAT(std::string(Parse({"validate", "extra"}).status().message()),
              HasSubstr("unexpected argument \"extra\"; the commands are"));
  EXPECT_FALSE(Parse({"--", "--not-a-flag"}).ok());
  auto v = Parse({"validate", "--use-cdi"});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->command, Command::kValidate);
}

TEST(Flags, LogLevelIgnoresCase) {
  auto o = Parse({"--log-level=DEBUG"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->log_level, "debug");
  EXPECT_EQ(Parse({"--log-level=Warn"})->log_level, "warning");
}

TEST(Usage, ListsEveryFlagWithItsDefault) {
  const std::string usage = Usage("k8s-rdma-shared-dp");
  for (const char* flag : {"--config-file", "--kubelet-root-dir", "--registration-mode",
                           "--sysfs-root", "--dev-root", "--use-cdi", "--cdi-spec-dir",
                           "--no-link-up", "--log-level", "--log-format", "--version", "--help"}) {
    EXPECT_THAT(usage, HasSubstr(flag));
  }
  EXPECT_THAT(usage, HasSubstr("(default \"/k8s-rdma-shared-dev-plugin/config.json\")"));
  EXPECT_THAT(usage, HasSubstr("(default \"/var/lib/kubelet\")"));
  // The environment the image and DaemonSet set, and what the process sets itself
  // (pkg/loop/malloc_setup.h, grpc_runtime.h).
  for (const char* variable : {"GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", "MALLOC_ARENA_MAX",
                               "GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS"}) {
    EXPECT_THAT(usage, HasSubstr(variable));
  }
  EXPECT_THAT(usage, HasSubstr("--health-address"));
  EXPECT_THAT(usage, HasSubstr("RDMADP_DEV_ROOT"));
}

// `kubectl exec ... discover` in the DaemonSet's pod must see the host's /dev and the
// daemon's config, which the DaemonSet gives through the environment (docs/troubleshooting.md).
TEST(Flags, TheEnvironmentSetsDefaultsAndTheCommandLineWins) {
  const std::map<std::string, std::string> env = {{"RDMADP_DEV_ROOT", "/host/dev"},
                                                  {"RDMADP_CONFIG_FILE", "/etc/rdma/config.json"},
                                                  {"RDMADP_USE_CDI", "true"},
                                                  {"RDMADP_HELP", "true"}};
  auto lookup = [&](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  auto o = ParseFlags({"discover", "--config-file=/tmp/c.json"}, lookup);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->command, Command::kDiscover);  // RDMADP_HELP is not a flag's default
  EXPECT_EQ(o->dev_root, "/host/dev");
  EXPECT_EQ(o->config_file, "/tmp/c.json");
  EXPECT_TRUE(o->use_cdi);
  EXPECT_EQ(EnvName("kubelet-root-dir"), "RDMADP_KUBELET_ROOT_DIR");
  auto bad = ParseFlags({}, [](const std::string& name) -> std::optional<std::string> {
    return name == "RDMADP_REGISTRATION_MODE" ? std::optional<std::string>("sometimes")
                                              : std::nullopt;
  });
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("environment RDMADP_REGISTRATION_MODE: "));
}

// A malformed --metrics-address or --health-address was taken, and the endpoint then retried
// it for ever as if the port were busy; so were the two on one port. Now each is a usage error
// (main: exit 2) in one line naming the flag, checked by syntax only; what was valid stays
// valid (docs/observability.md). Fails on the old code: every value below parsed.
TEST(Flags, ListenAddressesAreCheckedWhenParsed) {
  for (const char* flag : {"metrics-address", "health-address"}) {
    for (const char* ok : {":9090", "0.0.0.0:9090", "[::]:9090", "127.0.0.1:0", ":0", "[::1]:10109",
                           "localhost:10109", "node-1.example.com:80", "[fe80::1%eth0]:80",
                           "::1:9090" /* unbracketed, as always taken */}) {
      const std::string arg = std::string("--") + flag + "=" + ok;
      EXPECT_TRUE(Parse({arg}).ok()) << arg << ": " << Parse({arg}).status();
    }
    EXPECT_TRUE(Parse({std::string("--") + flag + "="}).ok()) << "empty: off";
    const std::pair<const char*, const char*> bad[] = {
        {"garbage", "use HOST:PORT, :PORT or [IPv6]:PORT (e.g. :10109)"},
        {":-1", "port \"-1\" is not a number 0..65535 (0: any free port)"},
        {"127.0.0.1:99999", "port \"99999\" is not a number 0..65535 (0: any free port)"},
        {"[::1", "no ']' after the IPv6 address (use [IPv6]:PORT)"},
        {"[::1]", "no :PORT after ']' (use [IPv6]:PORT, e.g. [::1]:10109)"},
        {":", "port \"\" is not a number 0..65535 (0: any free port)"},
        {"999.1.1.1:80", "host \"999.1.1.1\" is neither an IP address nor a host name"},
        {"http://node:80", "host \"http://node\" is neither an IP address nor a host name"},
        {"[node]:80", "\"node\" in brackets is not an IP address"},
    };
    for (const auto& [value, why] : bad) {
      const std::string arg = std::string("--") + flag + "=" + value;
      const auto o = Parse({arg});
      ASSERT_FALSE(o.ok()) << arg;
      const std::string message(o.status().message());
      EXPECT_THAT(message, HasSubstr(std::string("invalid value \"") + value + "\" for -" + flag +
                                     ": " + why));
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
  // A newline is echoed escaped: the error stays one line.
  EXPECT_THAT(std::string(Parse({"--health-address=a\nb:1"}).status().message()),
              HasSubstr("invalid value \"a\\nb:1\" for -health-address: host \"a\\nb\""));
  // From the environment, the same check.
  auto env = ParseFlags({}, [](const std::string& name) -> std::optional<std::string> {
    return name == "RDMADP_HEALTH_ADDRESS" ? std::optional<std::string>("[::1") : std::nullopt;
  });
  ASSERT_FALSE(env.ok());
  EXPECT_THAT(std::string(env.status().message()),
              HasSubstr("environment RDMADP_HEALTH_ADDRESS: invalid value \"[::1\""));
  // Both listeners on one port: the second bind could never succeed.
  EXPECT_EQ(Parse({"--metrics-address=:10109", "--health-address=:10109"}).status().message(),
            "invalid value \":10109\" for -health-address: it takes the port of "
            "-metrics-address \":10109\"; give the probes a port of their own (the DaemonSet: "
            "127.0.0.1:10110)");
  EXPECT_FALSE(Parse({"--metrics-address=:10109", "--health-address=127.0.0.1:10109"}).ok())
      << ":PORT takes every address";
  EXPECT_FALSE(Parse({"--metrics-address=0.0.0.0:1", "--health-address=127.0.0.1:1"}).ok());
  EXPECT_FALSE(Parse({"--metrics-address=[::]:1", "--health-address=[::1]:1"}).ok());
  EXPECT_TRUE(Parse({"--metrics-address=:10109", "--health-address=127.0.0.1:10110"}).ok())
      << "the DaemonSet's";
  EXPECT_TRUE(Parse({"--metrics-address=127.0.0.1:0", "--health-address=127.0.0.1:0"}).ok())
      << "port 0: each gets a free port of its own";
  EXPECT_TRUE(Parse({"--metrics-address=127.0.0.1:9", "--health-address=[::1]:9"}).ok());
  EXPECT_TRUE(Parse({"--metrics-address=:10109", "--health-address=:10109", "--help"}).ok())
      << "--help runs nothing";
}

// A bad RDMADP_<FLAG> value was fatal even when the command line set that flag
// (RDMADP_LOG_LEVEL=bogus with --log-level=info: exit 2); the command line now wins without
// the environment's value being read. And a misspelled RDMADP_ name was ignored without a
// word; now each is one warning naming the nearest flag's variable (docs/reference.md,
// "Command line"). Fails on the old code: the first parse failed (and ParseFlags took no list of
// names).
TEST(Flags, TheCommandLineWinsUnreadAndStrayEnvironmentNamesAreWarned) {
  const std::map<std::string, std::string> env = {{"RDMADP_LOG_LEVEL", "bogus"},
                                                  {"RDMADP_USE_CDI", "maybe"},
                                                  {"RDMADP_METRICS_ADDRESS", "garbage"},
                                                  {"RDMADP_DEV_ROOT", "/host/dev"}};
  std::vector<std::string> read;
  auto lookup = [&](const std::string& name) -> std::optional<std::string> {
    read.push_back(name);
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  auto o =
      ParseFlags({"--log-level=info", "--use-cdi=false", "--metrics-address", ":10109"}, lookup);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->log_level, "info");
  EXPECT_FALSE(o->use_cdi);
  EXPECT_EQ(o->metrics_address, ":10109");
  EXPECT_EQ(o->dev_root, "/host/dev");  // not on the command line: the environment's
  for (const char* name : {"RDMADP_LOG_LEVEL", "RDMADP_USE_CDI", "RDMADP_METRICS_ADDRESS"}) {
    EXPECT_EQ(std::count(read.begin(), read.end(), name), 0) << name << " was read";
  }
  EXPECT_TRUE(o->warnings.empty());
  // Where the command line does not set it, a bad value is still a usage error.
  auto bad = ParseFlags({"--use-cdi", "--metrics-address=:1"}, lookup);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "environment RDMADP_LOG_LEVEL: invalid value \"bogus\" for -log-level: use debug, "
            "info, warning or error");

  auto named = ParseFlags({"validate"}, nullptr,
                          {"RDMADP_DEVROOT", "RDMADP_DEV_ROOT", "RDMADP_DEVROOT",
                           "rdmadp_config_file", "RDMADP_HELP", "RDMADP_KUBE_RELEASE", "PATH"});
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_THAT(named->warnings,
              ::testing::ElementsAre(
                  "environment RDMADP_DEVROOT: no flag reads it, ignored; did you mean "
                  "RDMADP_DEV_ROOT (--dev-root)?",
                  "environment rdmadp_config_file: no flag reads it, ignored; did you mean "
                  "RDMADP_CONFIG_FILE (--config-file)?",
                  "environment RDMADP_HELP: -help is read from the command line only; ignored",
                  "environment RDMADP_KUBE_RELEASE: no flag reads it, ignored (RDMADP_<FLAG> sets "
                  "--<flag>; the nearest is RDMADP_KUBE_CA_FILE, for --kube-ca-file)"));
  EXPECT_TRUE(IsRdmadpEnvName("Rdmadp_x"));
  EXPECT_FALSE(IsRdmadpEnvName("RDMADPX"));
  EXPECT_FALSE(IsRdmadpEnvName("PATH"));
}

}  // namespace
}  // namespace rdmadp::cli
