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
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

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
            .dra_driver = "",
            .events_api = {},
            .events_clock = {}};
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

// RDMAUnused Events (pod_events.h), through a transport that answers as the test scripts it
// and records each call, on a budget clock the test holds.
struct ScriptedApi final : kube::ApiTransport {
  struct Script {
    std::mutex mu;
    std::vector<std::pair<std::string, std::string>> calls;  // path, body
    std::deque<kube::HttpResponse> answers;                  // then 201
    size_t Calls() {
      std::lock_guard<std::mutex> lock(mu);
      return calls.size();
    }
  };
  explicit ScriptedApi(std::shared_ptr<Script> s) : script(std::move(s)) {}
  absl::StatusOr<kube::HttpResponse> Call(std::string_view method, const std::string& path,
                                          const std::string& body,
                                          std::chrono::milliseconds) override {
    std::lock_guard<std::mutex> lock(script->mu);
    EXPECT_EQ(method, "POST");
    script->calls.emplace_back(path, body);
    if (script->answers.empty()) return kube::HttpResponse{201, "{}", 0};
    kube::HttpResponse answer = script->answers.front();
    script->answers.pop_front();
    return answer;
  }
  absl::StatusOr<long> Stream(const std::string&, const std::function<bool(std::string_view)>&,
                              const std::function<void()>&) override {
    return absl::UnimplementedError("no watch here");
  }
  void Cancel() override {}
  void ResetCancel() override {}
  void Shutdown() override {}
  int stream_retry_after_seconds() const override { return 0; }
  std::shared_ptr<Script> script;
};

class ObserverEvents : public Observer {
 protected:
  ObserverOptions WithEvents() {
    ObserverOptions o = Options();
    o.events_api = [script = script_]() -> absl::StatusOr<std::unique_ptr<kube::ApiTransport>> {
      return std::make_unique<ScriptedApi>(script);
    };
    o.events_clock = [clock = clock_] {
      return std::chrono::steady_clock::time_point(seconds(clock->load()));
    };
    return o;
  }
  // Until the Events written, found to exist or failed add up to `n`.
  void AwaitEvents(const RdmaUseObserver& o, uint64_t n) {
    auto done = [&] {
      const auto e = View(o).events;
      return e.at("created") + e.at("exists") + e.at("failed");
    };
    while (done() < n) ASSERT_TRUE(host_.scheduler().AwaitPosted(milliseconds(10000)));
    ASSERT_EQ(done(), n);
  }
  std::map<std::string, uint64_t> Events(const RdmaUseObserver& o) { return View(o).events; }

  std::shared_ptr<ScriptedApi::Script> script_ = std::make_shared<ScriptedApi::Script>();
  std::shared_ptr<std::atomic<int64_t>> clock_ = std::make_shared<std::atomic<int64_t>>(1000);
};

// One Event on the pod when its container turns unused, as events.k8s.io/v1 takes it; never
// one per sample; a restart of ours finds it told (409) and writes no second.
TEST_F(ObserverEvents, AnUnusedContainerIsToldOnceByAnEventOnItsPod) {
  tree_.Container("team-a", "busy", "nccl", 'a', seconds(1800), kBusy);
  tree_.Container("team-a", "idle", "nccl", 'b', seconds(1800), kIdle);
  Pods({{"busy", 'a'}, {"idle", 'b'}});
  {
    RdmaUseObserver observer(host_, WithEvents());
    EXPECT_EQ(Events(observer), (std::map<std::string, uint64_t>{
                                    {"created", 0}, {"dropped", 0}, {"exists", 0}, {"failed", 0}}));
    observer.Apply(config_, TwoHcas(), "start");
    AwaitSamples(observer, 1);
    AwaitEvents(observer, 1);
    ASSERT_EQ(script_->Calls(), 1u);
    EXPECT_EQ(script_->calls[0].first, "/apis/events.k8s.io/v1/namespaces/team-a/events");
    const auto event = nlohmann::json::parse(script_->calls[0].second);
    EXPECT_EQ(event.at("apiVersion"), "events.k8s.io/v1");
    EXPECT_EQ(event.at("kind"), "Event");
    EXPECT_EQ(event.at("metadata").at("namespace"), "team-a");
    EXPECT_EQ(event.at("metadata").at("name"),
              UnusedEventName({.pod_namespace = "team-a",
                               .pod = "idle",
                               .pod_uid = NodeUseTree::Uid('b'),
                               .container = "nccl",
                               .container_id = std::string(64, 'b'),
                               .note = ""}));
    EXPECT_THAT(std::string(event.at("metadata").at("name")),
                ::testing::MatchesRegex("idle\\.rdma-unused\\.[0-9a-f]{16}"));
    EXPECT_EQ(event.at("reason"), "RDMAUnused");
    EXPECT_EQ(event.at("type"), "Warning");
    EXPECT_EQ(event.at("action"), "Observe");
    EXPECT_EQ(event.at("reportingController"), "k8s-rdma-shared-dp");
    EXPECT_EQ(event.at("reportingInstance"), "node1");
    EXPECT_EQ(event.at("regarding"), (nlohmann::json{{"apiVersion", "v1"},
                                                     {"kind", "Pod"},
                                                     {"namespace", "team-a"},
                                                     {"name", "idle"},
                                                     {"uid", NodeUseTree::Uid('b')}}));
    EXPECT_EQ(event.at("note"),
              "Container nccl has held rdma/hca (mlx5_0,mlx5_1) for 30 min and uses none of it: "
              "no QP and no verbs object beyond contexts (source: cgroup); NCCL or UCX may have "
              "fallen back to TCP (docs/observability.md)");
    EXPECT_THAT(std::string(event.at("eventTime")),
                ::testing::MatchesRegex("20[0-9-]{8}T[0-9:]{8}\\.[0-9]{6}Z"));
    host_.scheduler().Advance(seconds(60));
    AwaitSamples(observer, 2);
    EXPECT_EQ(script_->Calls(), 1u) << "one Event per verdict change, not per sample";
    EXPECT_EQ(Events(observer).at("created"), 1u);
    observer.Stop();
  }
  script_->answers.push_back({409, R"({"kind":"Status","reason":"AlreadyExists"})", 0});
  RdmaUseObserver again(host_, WithEvents());  // a restart of ours
  again.Apply(config_, TwoHcas(), "start");
  AwaitEvents(again, 1);
  EXPECT_EQ(script_->Calls(), 2u);
  EXPECT_EQ(nlohmann::json::parse(script_->calls[1].second).at("metadata").at("name"),
            nlohmann::json::parse(script_->calls[0].second).at("metadata").at("name"))
      << "the same name: the server dedups";
  EXPECT_EQ(Events(again), (std::map<std::string, uint64_t>{
                               {"created", 0}, {"dropped", 0}, {"exists", 1}, {"failed", 0}}));
  again.Stop();
}

// At most kEventBurst at once and one per kEventRefill after; nothing while the server's
// Retry-After runs; a refusal is dropped, counted and said once, never retried.
TEST_F(ObserverEvents, EventsKeepToTheBudgetAndTheServersRetryAfter) {
  std::vector<std::pair<std::string, char>> pods;
  for (char id : std::string("0123456")) {
    const std::string pod = std::string("idle-") + id;
    tree_.Container("team-a", pod, "nccl", id, seconds(1800), kIdle);
    pods.push_back({pod, id});
  }
  Pods(pods);
  RdmaUseObserver observer(host_, WithEvents());
  observer.Apply(config_, TwoHcas(), "start");
  AwaitSamples(observer, 1);
  AwaitEvents(observer, 5);
  EXPECT_EQ(script_->Calls(), 5u) << "the burst";
  host_.scheduler().Advance(seconds(60));  // the next sample, no budget yet
  AwaitSamples(observer, 2);
  EXPECT_EQ(script_->Calls(), 5u);

  *clock_ += 12;  // one more
  script_->answers.push_back({429, "", 30});
  host_.scheduler().Advance(seconds(60));
  AwaitSamples(observer, 3);
  EXPECT_EQ(script_->Calls(), 6u) << "answered 429, Retry-After 30";
  *clock_ += 24;  // budget for two, but the server's 30 s are not over
  host_.scheduler().Advance(seconds(60));
  AwaitSamples(observer, 4);
  EXPECT_EQ(script_->Calls(), 6u);
  *clock_ += 6;  // they are
  script_->answers.push_back({403, R"({"kind":"Status","reason":"Forbidden"})", 0});
  host_.scheduler().Advance(seconds(60));
  AwaitSamples(observer, 5);
  AwaitEvents(observer, 7);
  EXPECT_EQ(script_->Calls(), 8u) << "the one held by the 429, then the last";
  EXPECT_EQ(Events(observer), (std::map<std::string, uint64_t>{
                                  {"created", 6}, {"dropped", 0}, {"exists", 0}, {"failed", 1}}));
  size_t said = 0;
  for (const auto& p : host_.problems()) {
    said += p.message.find("RDMAUnused Event on pod team-a/") != std::string::npos &&
            p.message.find("answered 403") != std::string::npos;
  }
  EXPECT_EQ(said, 1u);
  host_.scheduler().Advance(seconds(60));
  AwaitSamples(observer, 6);
  EXPECT_EQ(script_->Calls(), 8u) << "a refused Event is not written again";
  observer.Stop();
}

}  // namespace
}  // namespace rdmadp::observe
