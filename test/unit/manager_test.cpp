// The manager's own rules, in process on a loop the test drives (test/support/manual_loop.h):
// what a config reload refuses, how kernel link events are debounced into one rescan of the
// function they concern, and what it fans out of the kubelet's directories to every front
// end. The inputs are real: a config file written as a ConfigMap update writes it (inotify),
// files in a kubelet root, a fake node's sysfs (test/support/fake_node.h) and rtnetlink link
// events of a veth pair in a private network namespace. Time moves only on Advance(): every
// debounce is asserted at its exact millisecond.
#include "pkg/manager/manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/netlink/link_up.h"
#include "pkg/text/cat.h"
#include "test/support/fake_node.h"
#include "test/support/manual_loop.h"
#include "test/support/temp_dir.h"

namespace rdmadp::testing {
namespace {

namespace fs = std::filesystem;
using Kind = frontend::KubeletEvent::Kind;
using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What a front end was told, in order.
struct Told {
  std::vector<std::string> applies;    // each Apply's reason
  std::vector<std::string> resources;  // the resource names of the last Apply's config
  std::vector<frontend::KubeletEvent> events;
  int stops = 0;
};

class RecordingFrontEnd final : public frontend::FrontEnd {
 public:
  explicit RecordingFrontEnd(Told& told) : told_(told) {}
  void Apply(const config::Config& config, const sysfs::NodeInventory& /*inventory*/,
             std::string_view reason) override {
    told_.applies.emplace_back(reason);
    told_.resources.clear();
    for (const auto& r : config.resources) told_.resources.push_back(r.resource_name);
  }
  void OnKubeletEvent(const frontend::KubeletEvent& event) override {
    told_.events.push_back(event);
  }
  std::vector<std::string> Problems(const config::Config& /*config*/,
                                    const std::vector<size_t>& /*indices*/) const override {
    return {};
  }
  void Collect(metrics::View& /*view*/) const override {}
  void Stop() override { ++told_.stops; }

 private:
  Told& told_;
};

std::string ConfigWith(const std::string& resource) {
  return Cat(R"({"periodicUpdateInterval": 0, "configList": [{"resourceName": ")", resource,
             R"(", "rdmaHcaMax": 4, "selectors": {"vendors": ["15b3"]}}]})");
}

class ManagerOnTheSeam : public ::testing::Test {
 protected:
  void SetUp() override {
    // The manager's link-event socket sees this test's veth pair and nothing else.
    if (::unshare(CLONE_NEWNET) != 0) {
      GTEST_SKIP() << "cannot create a private network namespace: " << std::strerror(errno)
                   << " (needs CAP_SYS_ADMIN)";
    }
    node_.Add(FakeNode::ConnectX(0, 0, /*infiniband=*/true));  // netdev ib0
    node_.Add(FakeNode::ConnectX(1, 0, /*infiniband=*/true));  // netdev ib1
    fs::create_directories(kubelet_ + "/device-plugins");
    fs::create_directories(kubelet_ + "/plugins_registry");
    fs::create_directories(tmp_.path() + "/config");
    WriteConfig(ConfigWith("hca_a"));
    auto loaded = config::LoadConfigFile(config_);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    auto owned = std::make_unique<ManualLoop>();
    loop_ = owned.get();
    manager::ManagerOptions options;
    options.config_file = config_;
    options.kubelet_root_dir = kubelet_;
    options.sysfs_root = node_.sysfs_root();
    options.dev_root = node_.dev_root();
    options.link_up = false;  // the fake node's links are not this namespace's
    options.version = "test";
    manager_ = std::make_unique<manager::Manager>(
        std::move(owned), options,
        [this](frontend::Host& /*host*/) {
          std::vector<std::unique_ptr<frontend::FrontEnd>> front_ends;
          for (Told& t : told_) front_ends.push_back(std::make_unique<RecordingFrontEnd>(t));
          return front_ends;
        },
        loaded->config);
    ASSERT_EQ(manager_->Start(), 0);
    loop_->Dispatch();
  }
  void TearDown() override {
    if (manager_) manager_->Shutdown();
  }

  // As a ConfigMap update lands: written aside, then renamed over the file.
  void WriteConfig(const std::string& text) {
    std::ofstream(config_ + ".tmp") << text;
    fs::rename(config_ + ".tmp", config_);
  }
  metrics::View View() const { return manager_->BuildView(); }

  TempDir tmp_;
  FakeNode node_{tmp_.path() + "/node"};
  const std::string kubelet_ = tmp_.path() + "/kubelet";
  const std::string config_ = tmp_.path() + "/config/config.json";
  Told told_[2];  // two front ends: what one is told, the other is too
  ManualLoop* loop_ = nullptr;
  std::unique_ptr<manager::Manager> manager_;
};

TEST_F(ManagerOnTheSeam, StartAppliesTheConfigToEveryFrontEndOnce) {
  for (const Told& t : told_) {
    EXPECT_THAT(t.applies, ElementsAre("start"));
    EXPECT_THAT(t.resources, ElementsAre("hca_a"));
    EXPECT_TRUE(t.events.empty());
  }
  EXPECT_EQ(View().counters.rescans, 0u);
  EXPECT_EQ(View().counters.functions_read, 2u);
}

TEST_F(ManagerOnTheSeam, WhatTheKubeletsDirectoriesSawReachesEveryFrontEnd) {
  std::ofstream(kubelet_ + "/plugins_registry/other-reg.sock") << "";
  loop_->Dispatch();
  for (const Told& t : told_) EXPECT_TRUE(t.events.empty());  // a creation there is nobody's
  std::ofstream(kubelet_ + "/device-plugins/kubelet.sock") << "";
  fs::remove(kubelet_ + "/plugins_registry/other-reg.sock");
  loop_->Dispatch();
  for (const Told& t : told_) {
    ASSERT_EQ(t.events.size(), 2u);
    // Deletions first, then the kubelet's start (manager_watch.cpp, OnInotifyEvents).
    EXPECT_EQ(t.events[0].kind, Kind::kFileDeleted);
    EXPECT_EQ(t.events[0].dir, kubelet_ + "/plugins_registry");
    EXPECT_EQ(t.events[0].file, "other-reg.sock");
    EXPECT_EQ(t.events[1].kind, Kind::kKubeletSocketCreated);
    EXPECT_THAT(t.applies, ElementsAre("start"));  // no rescan for either
  }
}

TEST_F(ManagerOnTheSeam, AConfigThatFailsAsAWholeIsRefusedSaysSoAndChangesNothing) {
  WriteConfig("{\"configList\": [");
  loop_->Dispatch();
  loop_->Advance(milliseconds(99));
  EXPECT_EQ(View().config.rejected, "");  // the debounce: 100 ms after the last write
  loop_->Advance(milliseconds(1));
  const metrics::View refused = View();
  EXPECT_THAT(refused.config.rejected, HasSubstr("was rejected at the last reload"));
  EXPECT_THAT(refused.config.rejected, HasSubstr("the previous config keeps serving"));
  EXPECT_FALSE(refused.config.last_load_complete);
  EXPECT_EQ(refused.counters.errors_by_class.at("config"), 1u);
  EXPECT_EQ(refused.counters.reloads, 0u);
  EXPECT_EQ(refused.counters.rescans, 0u);
  for (const Told& t : told_) {
    EXPECT_THAT(t.applies, ElementsAre("start"));
    EXPECT_THAT(t.resources, ElementsAre("hca_a"));
  }
  // Fixed: applied, and the refusal is gone from the view.
  WriteConfig(ConfigWith("hca_b"));
  loop_->Dispatch();
  loop_->Advance(milliseconds(100));
  const metrics::View fixed = View();
  EXPECT_EQ(fixed.config.rejected, "");
  EXPECT_TRUE(fixed.config.last_load_complete);
  EXPECT_EQ(fixed.counters.reloads, 1u);
  for (const Told& t : told_) {
    EXPECT_THAT(t.applies, ElementsAre("start", "config file changed"));
    EXPECT_THAT(t.resources, ElementsAre("hca_b"));
  }
}

TEST_F(ManagerOnTheSeam, ABurstOfConfigWritesIsOneReloadAfterTheLast) {
  WriteConfig(ConfigWith("hca_b"));
  loop_->Dispatch();
  loop_->Advance(milliseconds(50));
  WriteConfig(ConfigWith("hca_c"));
  loop_->Dispatch();
  loop_->Advance(milliseconds(99));  // 100 ms after the first write: nothing yet
  EXPECT_EQ(View().counters.reloads, 0u);
  loop_->Advance(milliseconds(1));
  const metrics::View v = View();
  EXPECT_EQ(v.counters.reloads, 1u);
  EXPECT_EQ(v.counters.rescans_by_trigger.at("config_file"), 1u);
  for (const Told& t : told_) {
    EXPECT_THAT(t.applies, ElementsAre("start", "config file changed"));
    EXPECT_THAT(t.resources, ElementsAre("hca_c"));
  }
}

// CNI makes and removes veth pairs by the hundred on a busy node: only a link of a served
// function is a rescan, a burst of its events is one, and it re-reads that function only.
TEST_F(ManagerOnTheSeam, LinkEventsOfAServedHcaAreOneRescanOfThatFunction) {
  nl_sock* sock = nl_socket_alloc();
  ASSERT_EQ(nl_connect(sock, NETLINK_ROUTE), 0);
  const int rc = rtnl_link_veth_add(sock, "ib0", "other0", ::getpid());
  nl_socket_free(sock);
  if (rc < 0) GTEST_SKIP() << "cannot create a veth pair: " << nl_geterror(rc);
  loop_->Dispatch();  // the pair's creation: ib0 is a served function's netdev
  loop_->Advance(milliseconds(10));
  ASSERT_TRUE(netlink::SetLinkAdminState("ib0", true).ok());
  ASSERT_TRUE(netlink::SetLinkAdminState("ib0", false).ok());
  loop_->Dispatch();
  loop_->Advance(milliseconds(9));
  EXPECT_EQ(View().counters.rescans, 0u);  // 20 ms after the first event, not the last
  loop_->Advance(milliseconds(1));
  metrics::View v = View();
  EXPECT_EQ(v.counters.rescans, 1u);
  EXPECT_EQ(v.counters.rescans_by_trigger.at("link"), 1u);
  EXPECT_EQ(v.counters.functions_read, 2u + 1u);  // the start's two, then ib0's function
  for (const Told& t : told_) EXPECT_THAT(t.applies, ElementsAre("start", "link event ib0"));
  // Another link, no function of ours behind it: nothing.
  ASSERT_TRUE(netlink::SetLinkAdminState("other0", true).ok());
  loop_->Dispatch();
  loop_->Advance(milliseconds(1000));
  EXPECT_EQ(View().counters.rescans, 1u);
}

TEST_F(ManagerOnTheSeam, ShutdownStopsEveryFrontEndOnce) {
  manager_->Shutdown();
  manager_.reset();
  for (const Told& t : told_) EXPECT_EQ(t.stops, 1);
}

}  // namespace
}  // namespace rdmadp::testing
