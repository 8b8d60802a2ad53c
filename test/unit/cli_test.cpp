#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>

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

// Issue 29 item 4: `kubectl exec ... discover` in the DaemonSet's pod must see the host's
// /dev and the daemon's config, which the DaemonSet gives through the environment.
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

}  // namespace
}  // namespace rdmadp::cli
