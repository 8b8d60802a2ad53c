// The daemon's per-container RDMA use observer (pkg/observe/rdma_use_observer.h) in process,
// on fake time (test/support/fake_host.h), reading a real node layout: the fake kubelet's
// pod-resources server over its unix socket, a systemd-driver cgroup tree and the kubelet's
// links (test/support/node_use_tree.h). Exact counts of samples and Lists; verdicts asserted
// on the metrics view, never on log text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "pkg/observe/rdma_use_observer.h"
#include "test/support/fake_host.h"
#include "test/support/fake_pod_resources.h"
#include "test/support/node_use_tree.h"
#include "test/support/temp_dir.h"

namespace rdmadp::observe {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::FakeContainer;
using testing::FakePod;
using testing::NodeUseTree;

constexpr const char* kIdle =
    "mlx5_0 hca_handle=1 hca_object=0 \nmlx5_1 hca_handle=1 hca_object=0 \n";
constexpr const char* kBusy =
    "mlx5_0 hca_handle=1 hca_object=31 \nmlx5_1 hca_handle=1 hca_object=0 \n";

sysfs::NodeInventory TwoHcas() {
  sysfs::NodeInventory inv;
  for (int i = 0; i < 2; ++i) {
    sysfs::PciFunction fn;
    fn.address = "0000:1" + std::to_string(i) + ":00.0";
    fn.vendor = "15b3";
    fn.device = "1017";
    fn.driver = "mlx5_core";
    fn.rdma_devices = {{"mlx5_" + std::to_string(i), {{1, sysfs::PortState::kActive}}}};
    fn.char_devices = {"uverbs" + std::to_string(i)};
    fn.rdma_capable = true;
    inv.functions.push_back(fn);
  }
  return inv;
}

class Observer : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fake = testing::FakePodResources::Start(dir_.path() + "/kubelet.sock", 34);
    ASSERT_TRUE(fake.ok()) << fake.status();
    kubelet_ = std::move(*fake);
    auto config = config::ParseConfig(
        R"({"configList": [{"resourceName": "hca", "rdmaHcaMax": 100,
                            "selectors": {"vendors": ["15b3"]}}]})");
    ASSERT_TRUE(config.ok()) << config.status();
    config_ = config->config;
  }
  ObserverOptions Options() {
    return {.interval = seconds(60),
            .grace = seconds(600),
            .sources = {.pod_resources_socket = dir_.path() + "/kubelet.sock",
                        .cgroup_root = tree_.cgroup_root(),
                        .container_logs_dir = tree_.links_dir(),
                        .sysfs_root = dir_.path() + "/sys",
                        .list_timeout = seconds(10),
                        .max_containers = 100},
            .node_name = "node1",
            .dra_driver = ""};
  }
  void Pods(std::vector<std::pair<std::string, char>> pods) {
    std::vector<FakePod> out;
    for (const auto& [name, id] : pods) {
      out.push_back({.name = name,
                     .pod_namespace = "team-a",
                     .uid = NodeUseTree::Uid(id),
                     .containers = {FakeContainer("nccl", {{"rdma/hca", {"7"}}})},
                     .finished = false});
    }
    kubelet_->SetPods(std::move(out));
  }
  // Until the observer has taken `n` samples: the thread hands each back with a Post, which
  // Advance() itself may already have run.
  void AwaitSamples(const RdmaUseObserver& o, uint64_t n) {
    while (View(o).samples < n) ASSERT_TRUE(host_.scheduler().AwaitPosted(milliseconds(10000)));
    ASSERT_EQ(View(o).samples, n);
  }
  metrics::RdmaUseView View(const RdmaUseObserver& o) {
    metrics::View v;
    o.Collect(v);
    return *v.rdma_use;
  }
  static std::map<std::string, bool> Unused(const metrics::RdmaUseView& v) {
    std::map<std::string, bool> out;
    for (const auto& c : v.containers) out[c.pod] = c.unused;
    return out;
  }

  rdmadp::testing::TempDir dir_;
  NodeUseTree tree_{dir_.path()};
  testing::FakeHost host_{dir_.path() + "/kubelet"};
  std::unique_ptr<testing::FakePodResources> kubelet_;
  config::Config config_;
};

// A container with objects is never flagged; one with contexts alone turns unused when its
// grace ends, once; its deletion clears its series within one sample.
TEST_F(Observer, AnIdleContainerIsFlaggedOnceAtTheEndOfItsGraceAndGoesWithItsPod) {
  tree_.Container("team-a", "busy", "nccl", 'a', seconds(0), kBusy);
  tree_.Container("team-a", "idle", "nccl", 'b', seconds(0), kIdle);
  Pods({{"busy", 'a'}, {"idle", 'b'}});
  RdmaUseObserver observer(host_, Options());
  observer.Apply(config_, TwoHcas(), "start");  // the first sample at once
  AwaitSamples(observer, 1);
  metrics::RdmaUseView v = View(observer);
  EXPECT_EQ(v.samples, 1u);
  EXPECT_EQ(kubelet_->calls(), 1);
  EXPECT_EQ(Unused(v), (std::map<std::string, bool>{{"busy", false}, {"idle", false}}));
  EXPECT_EQ(v.verdicts, (std::map<std::string, uint64_t>{
                            {"in grace", 1}, {"unknown", 0}, {"unused", 0}, {"used", 1}}));
  ASSERT_EQ(v.containers[0].resources, std::vector<std::string>{"rdma/hca"});

  for (int minute = 1; minute <= 9; ++minute) {
    host_.scheduler().Advance(seconds(60));
    AwaitSamples(observer, minute + 1);
  }
  v = View(observer);
  EXPECT_EQ(v.samples, 10u);
  EXPECT_FALSE(Unused(v).at("idle"));  // 9 min of 10
  host_.scheduler().Advance(seconds(60));
  AwaitSamples(observer, 11);
  v = View(observer);
  EXPECT_EQ(v.samples, 11u);
  EXPECT_EQ(kubelet_->calls(), 11);
  EXPECT_EQ(Unused(v), (std::map<std::string, bool>{{"busy", false}, {"idle", true}}));
  EXPECT_EQ(v.verdicts, (std::map<std::string, uint64_t>{
                            {"in grace", 0}, {"unknown", 0}, {"unused", 1}, {"used", 1}}));
  // The objects behind it, per HCA and type.
  for (const auto& c : v.containers) {
    if (c.pod != "idle") continue;
    ASSERT_EQ(c.objects.size(), 4u);
    EXPECT_EQ(c.objects[0].device, "mlx5_0");
    EXPECT_EQ(c.objects[0].type, "hca_handle");
    EXPECT_EQ(c.objects[0].count, 1);
  }

  // The pod goes: its series with it, at the next sample.
  Pods({{"busy", 'a'}});
  tree_.Remove('b');
  host_.scheduler().Advance(seconds(60));
  AwaitSamples(observer, 12);
  v = View(observer);
  EXPECT_EQ(Unused(v), (std::map<std::string, bool>{{"busy", false}}));
  EXPECT_EQ(observer.verdicts().entries().size(), 1u);
}

// A container that starts using its HCAs after being flagged turns used; a restart of ours
// judges an old idle container at once (its link's time), not after a new grace.
TEST_F(Observer, UseAfterTheFlagClearsItAndARestartDoesNotRestartTheGrace) {
  tree_.Container("team-a", "old", "nccl", 'c', minutes(30), kIdle);
  Pods({{"old", 'c'}});
  RdmaUseObserver observer(host_, Options());
  observer.Apply(config_, TwoHcas(), "start");
  AwaitSamples(observer, 1);
  EXPECT_EQ(Unused(View(observer)), (std::map<std::string, bool>{{"old", true}}));
  tree_.SetRdma('c', kBusy);
  host_.scheduler().Advance(seconds(60));
  AwaitSamples(observer, 2);
  EXPECT_EQ(Unused(View(observer)), (std::map<std::string, bool>{{"old", false}}));
}

// The kubelet unreachable: the sample is counted as failed, the verdicts stand (an empty
// round would forget every container and start its grace again), the problem said once.
TEST_F(Observer, AFailedListKeepsTheVerdictsAndIsCounted) {
  tree_.Container("team-a", "old", "nccl", 'c', minutes(30), kIdle);
  Pods({{"old", 'c'}});
  RdmaUseObserver observer(host_, Options());
  observer.Apply(config_, TwoHcas(), "start");
  AwaitSamples(observer, 1);
  kubelet_.reset();
  for (int i = 0; i < 3; ++i) {
    host_.scheduler().Advance(seconds(60));
    AwaitSamples(observer, i + 2);
  }
  const metrics::RdmaUseView v = View(observer);
  EXPECT_EQ(v.samples, 4u);
  EXPECT_EQ(v.failed_samples, 3u);
  EXPECT_EQ(Unused(v), (std::map<std::string, bool>{{"old", true}}));
  int said = 0;
  for (const auto& p : host_.problems()) said += p.error_class == "usage" ? 1 : 0;
  EXPECT_EQ(said, 1);
}

// Each sample reads our HCAs' port counters: bytes from the 4-octet words, every counter as
// sysfs has it (a saturated 8-bit one at its ceiling), a file that is no number said.
TEST_F(Observer, PortCountersAreReadWithEachSample) {
  const std::string port = dir_.path() + "/sys/class/infiniband/mlx5_0/ports/1";
  std::filesystem::create_directories(port + "/counters");
  std::filesystem::create_directories(port + "/hw_counters");
  std::ofstream(port + "/counters/port_xmit_data") << "1000\n";
  std::ofstream(port + "/counters/port_rcv_data") << "4294967295\n";
  std::ofstream(port + "/counters/link_downed") << "255\n";
  std::ofstream(port + "/hw_counters/np_cnp_sent") << "17\n";
  std::ofstream(port + "/hw_counters/lifespan") << "10\n";
  std::ofstream(port + "/hw_counters/broken") << "n/a\n";
  Pods({});
  RdmaUseObserver observer(host_, Options());
  observer.Apply(config_, TwoHcas(), "start");
  AwaitSamples(observer, 1);
  metrics::View v;
  observer.Collect(v);
  ASSERT_EQ(v.rdma_use->ports.size(), 2u);  // mlx5_1 has no counters: an empty entry
  const std::string page = metrics::FormatPrometheus(v);
  EXPECT_THAT(page, ::testing::HasSubstr(
                        "rdma_shared_dp_port_xmit_bytes_total{hca=\"mlx5_0\",port=\"1\"} 4000\n"));
  EXPECT_THAT(page, ::testing::HasSubstr("rdma_shared_dp_port_rcv_bytes_total{hca=\"mlx5_0\","
                                         "port=\"1\"} 17179869180\n"));
  EXPECT_THAT(page, ::testing::HasSubstr("rdma_shared_dp_port_counter{hca=\"mlx5_0\",port=\"1\","
                                         "source=\"counters\",counter=\"link_downed\"} 255\n"));
  EXPECT_THAT(page, ::testing::HasSubstr("rdma_shared_dp_port_counter{hca=\"mlx5_0\",port=\"1\","
                                         "source=\"hw_counters\",counter=\"np_cnp_sent\"} 17\n"));
  EXPECT_THAT(page, ::testing::Not(::testing::HasSubstr("lifespan")));
  EXPECT_THAT(page, ::testing::Not(::testing::HasSubstr("\"mlx5_1\",port=\"1\"} ")));
  ASSERT_EQ(host_.problems().size(), 1u);
  EXPECT_THAT(host_.problems()[0].message,
              ::testing::EndsWith("hw_counters/broken is not a counter"));
}

// A sample that outlasts the interval is not doubled: the ticks meanwhile are skipped.
TEST_F(Observer, ASlowSampleIsNotDoubled) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> reads{0};
  RdmaUseObserver observer(host_, Options(), [&](const OurDevices&, auto) {
    ++reads;
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return release; });
    return NodeUse{.view = {}, .list_ok = true, .list_error = {}, .ports = {}};
  });
  observer.Apply(config_, TwoHcas(), "start");
  host_.scheduler().Advance(seconds(180));  // three ticks while the first read waits
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  AwaitSamples(observer, 1);
  EXPECT_EQ(reads.load(), 1);
  EXPECT_EQ(View(observer).samples, 1u);
  host_.scheduler().Advance(seconds(60));
  AwaitSamples(observer, 2);
  EXPECT_EQ(reads.load(), 2);
  observer.Stop();
}

}  // namespace
}  // namespace rdmadp::observe
