#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST(Flags, PositionalArgumentsAndDoubleDash) {
  auto o = Parse({"extra", "--use-cdi", "--", "--not-a-flag"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->positional, (std::vector<std::string>{"extra", "--not-a-flag"}));
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
}

}  // namespace
}  // namespace rdmadp::cli
