// The real binary's /metrics, /healthz and /readyz across its lifecycle.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "pkg/text/cat.h"
#ifdef RDMADP_WITH_FAKEAPI
#include "test/support/fake_apiserver.h"
#endif
#include "test/support/fake_pod_resources.h"
#include "test/support/fs_wait.h"
#include "test/support/node_use_tree.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
constexpr char kA[] = "rdma/hca_shared_devices_a";

long Rss(pid_t pid) {  // bytes
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6)) * 1024;
  }
  return -1;
}

size_t OpenFds(pid_t pid) {
  const std::filesystem::path dir = "/proc/" + std::to_string(pid) + "/fd";
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir), {}));
}

class MetricsE2E : public ::testing::Test {
 protected:
  virtual std::string Config() { return PluginHarness::DemoConfig(); }
  virtual std::vector<std::string> Flags() { return {"--metrics-address=127.0.0.1:0"}; }
  void SetUp() override {
    h.AddDemoHcas();
    h.WriteConfig(Config());
    h.StartPlugin(Flags());
    std::smatch m;
    const std::regex re("metrics on http://127.0.0.1:([0-9]+)/metrics");
    ASSERT_TRUE(WaitForFiles(
        h.root(),
        [&] {
          log_ = h.PluginLog();
          return std::regex_search(log_, m, re);
        },
        milliseconds(5000)));
    port_ = std::stoi(m[1]);
  }
  httplib::Result Get(const std::string& path) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(5, 0);
    return client.Get(path.c_str());
  }
  // Value of one sample line in /metrics, or -1.
  double Sample(const std::string& series) {
    auto r = Get("/metrics");
    if (!r) return -1;
    const std::string line_start = "\n" + series + " ";  // a sample line, not a # HELP line
    const auto pos = r->body.find(line_start);
    if (pos == std::string::npos) return -1;
    return std::stod(r->body.substr(pos + line_start.size()));
  }
  // The page as Prometheus's own text parser (expfmt) reads it, with each of `families`.
  void ExpectPageParses(std::initializer_list<const char*> families) {
    std::string cmd = Cat(RDMADP_PROMCHECK_BINARY, " http://127.0.0.1:", port_, "/metrics");
    for (const char* family : families) Append(cmd, " ", family);
    FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
    EXPECT_EQ(::pclose(p), 0) << out;
    EXPECT_THAT(out, HasSubstr("ok: "));
  }
  bool Registered(int n) {
    return h.kubelet().WaitRegistered({kA, "rdma/hca_shared_devices_b"}, n, milliseconds(5000));
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "---- plugin log ----\n" << h.PluginLog();
  }
  PluginHarness h;
  std::string log_;
  int port_ = 0;
};

TEST_F(MetricsE2E, ProbesAndMetricsFollowTheLifecycle) {
  // Serving, but no kubelet yet: alive, not ready.
  auto health = Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto ready = Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_THAT(ready->body, HasSubstr("is not registered with the kubelet"));

  ASSERT_TRUE(h.kubelet().Start().ok());
  ASSERT_TRUE(Registered(1));
  std::string last_readyz;
  // Ready once both registrations are logged (the log file's writes wake this wait).
  ASSERT_TRUE(WaitForFiles(
      h.root(),
      [&] {
        auto r = Get("/readyz");
        if (r) last_readyz = r->body;
        return r && r->status == 200;
      },
      milliseconds(3000)))
      << last_readyz;
  auto metrics = Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->get_header_value("Content-Type"), HasSubstr("version=0.0.4"));
  EXPECT_EQ(Sample("rdma_shared_dp_slots{resource=\"rdma/hca_shared_devices_a\"}"), 1000);
  EXPECT_EQ(Sample("rdma_shared_dp_hcas{resource=\"rdma/hca_shared_devices_a\"}"), 2);
  EXPECT_EQ(Sample("rdma_shared_dp_registered{resource=\"rdma/hca_shared_devices_a\"}"), 1);
  EXPECT_EQ(Sample("rdma_shared_dp_open_streams{resource=\"rdma/hca_shared_devices_a\"}"), 1);
  // Every error class from the start (docs/observability.md; "dra" was missing, and a series
  // that appears late breaks rate()); nothing but registration warnings (the kubelet started
  // after the plugin) counted here.
  for (const char* cls : {"config", "cdi", "link", "metrics", "dra", "usage"}) {
    EXPECT_EQ(Sample(Cat("rdma_shared_dp_errors_by_class_total{class=\"", cls, "\"}")), 0) << cls;
  }
  EXPECT_GT(Sample("rdma_shared_dp_errors_by_class_total{class=\"registration\"}"), 0);

  ASSERT_TRUE(h.kubelet().Allocate(kA, {"0"}).ok());
  ASSERT_TRUE(h.kubelet().Allocate(kA, {"1"}).ok());
  EXPECT_EQ(Sample("rdma_shared_dp_allocations_total{resource=\"rdma/hca_shared_devices_a\"}"), 2);
  // Every port of every pooled HCA, by the kernel's state number (docs/observability.md).
  for (const char* hca : {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}) {
    EXPECT_EQ(Sample(Cat("rdma_shared_dp_port_state{hca=\"", hca, "\",port=\"1\"}")), 4) << hca;
  }

  ASSERT_TRUE(h.kubelet().Restart().ok());
  ASSERT_TRUE(Registered(2));
  // Allocations survive the server's re-creation in the counter.
  EXPECT_EQ(Sample("rdma_shared_dp_allocations_total{resource=\"rdma/hca_shared_devices_a\"}"), 2);
  // Every port of every pooled HCA, by the kernel's state number (docs/observability.md).
  for (const char* hca : {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}) {
    EXPECT_EQ(Sample(Cat("rdma_shared_dp_port_state{hca=\"", hca, "\",port=\"1\"}")), 4) << hca;
  }
  EXPECT_GE(Sample("rdma_shared_dp_kubelet_restarts_total"), 1);
  // The kubelet side counts a registration when it dials back; the plugin when Register
  // returns, and it logs that: wait for the log, not for time.
  EXPECT_TRUE(WaitForFiles(
      h.root(),
      [&] {
        return Sample(
                   "rdma_shared_dp_registrations_total{resource=\"rdma/hca_shared_devices_a\"}") >=
               2;
      },
      milliseconds(3000)));

  const auto start = std::chrono::steady_clock::now();
  h.plugin().Signal(SIGTERM);
  EXPECT_EQ(h.plugin().WaitExit(milliseconds(10000)), 0);  // a hang guard; the time is a figure
  std::cout
      << "[measured] SIGTERM with the metrics endpoint -> exit: "
      << std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start).count()
      << " ms\n";
  EXPECT_FALSE(Get("/healthz"));  // the endpoint is gone with the process
}

// The port is open on every node IP. What any client there can send must not cost the
// plugin its memory, its fds or its probes (docs/observability.md; before those bounds:
// 1,069 MB from one POST, 1,000 fds from idle connections, probes timing out behind two slow
// clients).
TEST_F(MetricsE2E, HostileClientsCostNeitherMemoryNorFdsNorProbes) {
  ASSERT_TRUE(h.kubelet().Start().ok());
  ASSERT_TRUE(Registered(1));
  ASSERT_TRUE(Get("/healthz"));
  const long rss_before = Rss(h.plugin().pid());
  const size_t fds_before = OpenFds(h.plugin().pid());
  auto connect = [&] {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  };
  auto send_all = [](int fd, const std::string& data) {
    return ::send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
  };
  std::vector<int> fds;
  // A declared 2 GiB body, and the first MiB of it.
  const int post = connect();
  ASSERT_TRUE(send_all(post, "POST /metrics HTTP/1.1\r\nContent-Length: 2147483648\r\n\r\n"));
  send_all(post, std::string(1 << 20, 'x'));  // may stop early: the plugin answered and closed
  fds.push_back(post);
  // Heads over the limit, many times.
  for (int i = 0; i < 20; ++i) {
    const int big = connect();
    send_all(big, "GET /metrics HTTP/1.1\r\nX: " + std::string(1 << 20, 'a'));
    fds.push_back(big);
  }
  // 300 connections that never finish their head.
  for (int i = 0; i < 300; ++i) {
    fds.push_back(connect());
    ASSERT_TRUE(send_all(fds.back(), "GET /healthz HTTP/1.1\r\nX-Slow: "));
  }
  auto health = Get("/healthz");  // the kubelet's probe, on a new connection
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  const long rss_growth = Rss(h.plugin().pid()) - rss_before;
  const size_t fds_after = OpenFds(h.plugin().pid());
  std::cout << "[measured] hostile clients: RSS growth " << rss_growth / 1024 << " KiB, fds "
            << fds_before << " -> " << fds_after << "\n";
  EXPECT_LE(fds_after, fds_before + 64) << "the connection cap is 64";
  EXPECT_LT(rss_growth, 8L << 20) << "the hostile requests were buffered";
  for (int fd : fds) ::close(fd);
}

// Device IDs come from whoever can reach the socket. A newline must not forge a log line, a
// 3 MB ID must be INVALID_ARGUMENT with a short message (not a 3 MB status the transport
// refuses), and 5,000 bad requests must not make 5,000 log lines; the counter sees all.
TEST_F(MetricsE2E, HostileAllocateIdsNeitherForgeLogLinesNorFloodTheLog) {
  ASSERT_TRUE(h.kubelet().Start().ok());
  ASSERT_TRUE(Registered(1));
  const std::string forged = "1\n2030-01-01T00:00:00.000Z error: forged line";
  auto r = h.kubelet().Allocate(kA, {forged});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  auto big = h.kubelet().Allocate(kA, {std::string(3 << 20, 'x')});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument) << big.status();
  EXPECT_THAT(std::string(big.status().message()), HasSubstr("... (3145728 bytes)"));
  EXPECT_LT(big.status().message().size(), 300u);
  for (int i = 0; i < 5000; ++i) ASSERT_FALSE(h.kubelet().Allocate(kA, {"999999"}).ok());
  EXPECT_EQ(
      Sample("rdma_shared_dp_allocate_rejections_total{resource=\"rdma/hca_shared_devices_a\"}"),
      5002);
  const std::string log = h.PluginLog();
  EXPECT_EQ(log.find("\n2030-01-01T00:00:00.000Z error: forged line"), std::string::npos);
  EXPECT_THAT(log,
              HasSubstr("unknown device ID \"1\\n2030-01-01T00:00:00.000Z error: forged line\""));
  size_t lines = 0;
  for (size_t pos = 0; (pos = log.find("Allocate rejected:", pos)) != std::string::npos; ++pos) {
    ++lines;
  }
  EXPECT_LE(lines, 5u * 2) << "at most 5 lines per 10 s window (the run may span two)";
}

// `:PORT` listens on both stacks: probes reach it on IPv4-only and IPv6-primary nodes alike.
TEST(MetricsFlag, ColonPortIsDualStack) {
  PluginHarness h;
  h.AddDemoHcas();
  h.WriteConfig(PluginHarness::DemoConfig());
  h.StartPlugin({"--metrics-address=:0"});
  std::smatch m;
  const std::regex re("metrics on http://\\[::\\]:([0-9]+)/metrics");
  std::string log;
  ASSERT_TRUE(WaitForFiles(
      h.root(),
      [&] {
        log = h.PluginLog();
        return std::regex_search(log, m, re);
      },
      milliseconds(5000)))
      << log;
  const int port = std::stoi(m[1]);
  for (const char* host : {"127.0.0.1", "::1"}) {
    httplib::Client client(host, port);
    auto r = client.Get("/healthz");
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 200) << host;
  }
}

// What a Prometheus server would make of the page: parsed by its own text-format parser,
// with every family the README documents present.
TEST_F(MetricsE2E, PageParsesWithPrometheusOwnParser) {
  ASSERT_TRUE(h.kubelet().Start().ok());
  ASSERT_TRUE(Registered(1));
  ASSERT_FALSE(h.kubelet().Allocate(kA, {"999999"}).ok());  // one rejection to count
  ExpectPageParses(
      {"rdma_shared_dp_slots", "rdma_shared_dp_registered", "rdma_shared_dp_allocations_total",
       "rdma_shared_dp_allocate_rejections_total", "rdma_shared_dp_registrations_total",
       "rdma_shared_dp_registration_failures_total", "rdma_shared_dp_socket_recreations_total",
       "rdma_shared_dp_registration_retries_total", "rdma_shared_dp_rescans_total",
       "rdma_shared_dp_errors_by_class_total", "rdma_shared_dp_config_entries_skipped",
       "process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
       "process_start_time_seconds", "rdma_shared_dp_heap_in_use_bytes",
       "rdma_shared_dp_heap_free_bytes"});
  EXPECT_EQ(
      Sample("rdma_shared_dp_allocate_rejections_total{resource=\"rdma/hca_shared_devices_a\"}"),
      1);
  EXPECT_GT(Sample("process_resident_memory_bytes"), 1e6);
  EXPECT_GT(Sample("process_start_time_seconds"), 1.7e9);
  // Live objects: config, pools, gRPC's state; always under the resident set. (Under a
  // sanitizer, as this test and the plugin are built alike, its allocator replaces glibc's
  // and mallinfo2 sees almost nothing.)
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  EXPECT_GT(Sample("rdma_shared_dp_heap_in_use_bytes"), 1e5);
#endif
  EXPECT_LT(Sample("rdma_shared_dp_heap_in_use_bytes"), Sample("process_resident_memory_bytes"));
}

// Capacity matters more than metrics: a busy port is logged and retried while the device
// plugin registers and serves; when the port frees up, the endpoint comes up. The probes
// have a listener of their own (--health-address, docs/observability.md): the kubelet's liveness
// and readiness checks pass all along, so the pod is not restarted over a metrics port.
TEST(MetricsFlag, BusyPortIsRetriedWhileTheDevicePluginServes) {
  // Another process's listener on the port: a plain socket we can close.
  int blocker = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(blocker, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(blocker, 1), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(blocker, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  PluginHarness h;
  h.AddDemoHcas();
  h.WriteConfig(PluginHarness::DemoConfig());
  ASSERT_TRUE(h.kubelet().Start().ok());
  h.StartPlugin(
      {"--metrics-address=127.0.0.1:" + std::to_string(port), "--health-address=127.0.0.1:0"});
  ASSERT_TRUE(h.kubelet().WaitRegistered({kA, "rdma/hca_shared_devices_b"}, 1, milliseconds(5000)));
  std::smatch m;
  std::string log;
  ASSERT_TRUE(WaitForFiles(
      h.root(),
      [&] {
        log = h.PluginLog();
        return std::regex_search(log, m, std::regex("probes on http://127.0.0.1:([0-9]+)/healthz"));
      },
      milliseconds(5000)));
  httplib::Client probes("127.0.0.1", std::stoi(m[1]));
  auto live = probes.Get("/healthz");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);
  // Ready once both resources are registered (the kubelet simulator saw them already; the
  // plugin's loop may handle the last Register answer a moment later).
  auto ready = probes.Get("/readyz");
  for (int i = 0; i < 100 && ready && ready->status != 200; ++i) {
    std::this_thread::sleep_for(milliseconds(20));  // polling a remote state, not a sync
    ready = probes.Get("/readyz");
  }
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200) << ready->body;
  ::close(blocker);  // the port frees up
  EXPECT_TRUE(WaitForFiles(
      h.root(),
      [&] {
        return h.PluginLog().find("metrics on http://127.0.0.1:" + std::to_string(port)) !=
               std::string::npos;
      },
      milliseconds(10000)))
      << h.PluginLog();
  httplib::Client client("127.0.0.1", port);
  auto r = client.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_THAT(r->body, HasSubstr("rdma_shared_dp_errors_by_class_total{class=\"metrics\"} "));
  h.plugin().Signal(SIGTERM);
  EXPECT_EQ(h.plugin().WaitExit(milliseconds(5000)), 0);
}

// One bad entry never takes down the good ones: the Go plugin's README example has
// `resourcePrefix: "example_prefix"`, which the kubelet rejects; the Go plugin serves the rest.
class SkippedEntryE2E : public MetricsE2E {
 protected:
  std::string Config() override {
    return R"({"configList": [
      {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 1000,
       "selectors": {"linkTypes": ["infiniband"]}},
      {"resourceName": "hca_shared_devices_x", "resourcePrefix": "example_prefix",
       "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "hca_shared_devices_b", "rdmaHcaMax": 500,
       "selectors": {"linkTypes": ["ether"]}}]})";
  }
};

TEST_F(SkippedEntryE2E, BadEntryIsSkippedTheOthersServeAndReadinessSaysWhy) {
  ASSERT_TRUE(h.kubelet().Start().ok());
  ASSERT_TRUE(Registered(1));
  EXPECT_EQ(h.kubelet().State().resources.count("example_prefix/hca_shared_devices_x"), 0u);
  const std::string log = h.PluginLog();
  EXPECT_THAT(log, HasSubstr("config: configList[1].resourcePrefix: \"example_prefix\" is not a "
                             "DNS subdomain"));
  EXPECT_THAT(log, HasSubstr("configList[1] (hca_shared_devices_x) skipped: it is invalid; the "
                             "other 2 resource(s) start"));
  auto ready = Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  EXPECT_THAT(ready->body, HasSubstr("configList[1] (hca_shared_devices_x) is invalid"));
  EXPECT_EQ(Sample("rdma_shared_dp_config_entries_skipped"), 1);
  EXPECT_EQ(Sample("rdma_shared_dp_config_entry_skipped{entry=\"configList[1]\",resource_name="
                   "\"hca_shared_devices_x\"}"),
            1);
  // validate reports the same entry and exits 1.
  RunResult v = RunToExit({"validate", "--config-file=" + h.config_path()}, milliseconds(10000));
  EXPECT_EQ(v.status, 1);
  EXPECT_THAT(v.output,
              HasSubstr("configList[1] (hca_shared_devices_x) would be skipped at start"));
  // A reload that fixes the entry makes it serve and the plugin ready.
  h.WriteConfig(PluginHarness::DemoConfig());
  ASSERT_TRUE(WaitForFiles(
      h.root(), [&] { return h.PluginLog().find("applying the new config") != std::string::npos; },
      milliseconds(5000)));
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) { return s.resources.count("rdma/hca_shared_devices_a") > 0; },
      milliseconds(5000)));
  EXPECT_EQ(Sample("rdma_shared_dp_config_entries_skipped"), 0);
}

// The daemon sampling per-container RDMA use (--rdma-usage-interval): its first sample at
// start, on the page as Prometheus's own parser reads it: a container with objects used, one
// with contexts alone past the grace unused, a foreign user's objects, by verdict.
class RdmaUseE2E : public MetricsE2E {
 protected:
  std::vector<std::string> Flags() override {
    tree_.Container("team-a", "trainer-0", "nccl", 'a', std::chrono::seconds(1800),
                    "mlx5_0 hca_handle=1 hca_object=57 \nmlx5_1 hca_handle=0 hca_object=0 \n");
    tree_.Container("team-a", "trainer-1", "nccl", 'b', std::chrono::seconds(1800),
                    "mlx5_0 hca_handle=1 hca_object=0 \nmlx5_1 hca_handle=1 hca_object=0 \n");
    tree_.Container("team-b", "gpu-job", "main", 'e', std::chrono::seconds(1800),
                    "mlx5_3 hca_handle=1 hca_object=9 \n");
    auto fake = FakePodResources::Start(socket_, 34);
    EXPECT_TRUE(fake.ok()) << fake.status();
    kubelet_ = std::move(*fake);
    std::vector<FakePod> pods;
    for (const auto& [name, id] : {std::pair{"trainer-0", 'a'}, std::pair{"trainer-1", 'b'}}) {
      pods.push_back({.name = name,
                      .pod_namespace = "team-a",
                      .uid = NodeUseTree::Uid(id),
                      .containers = {FakeContainer("nccl", {{kA, {"1"}}})},
                      .finished = false});
    }
    kubelet_->SetPods(std::move(pods));
    return {"--metrics-address=127.0.0.1:0",
            "--rdma-usage-interval=3600",
            "--rdma-unused-grace=600",
            "--pod-resources-socket=" + socket_,
            "--cgroup-root=" + tree_.cgroup_root(),
            "--container-logs-dir=" + tree_.links_dir()};
  }
  const std::string socket_ = h.root() + "/pod-resources.sock";
  NodeUseTree tree_{h.root()};
  std::unique_ptr<FakePodResources> kubelet_;
};

TEST_F(RdmaUseE2E, TheFirstSampleIsOnThePageAtStart) {
  ASSERT_TRUE(WaitForFiles(
      h.root(), [&] { return Sample("rdma_shared_dp_rdma_use_samples_total") == 1; },
      milliseconds(10000)));
  EXPECT_EQ(kubelet_->calls(), 1);
  ExpectPageParses({"rdma_shared_dp_pod_rdma_unused", "rdma_shared_dp_pod_rdma_objects",
                    "rdma_shared_dp_pod_rdma_containers", "rdma_shared_dp_foreign_rdma_objects",
                    "rdma_shared_dp_rdma_use_samples_total",
                    "rdma_shared_dp_rdma_use_failed_samples_total",
                    "rdma_shared_dp_rdma_use_last_sample_duration_seconds",
                    "rdma_shared_dp_rdma_use_last_sample_timestamp_seconds"});
  const std::string pod0 = R"(namespace="team-a",pod="trainer-0",container="nccl")";
  const std::string pod1 = R"(namespace="team-a",pod="trainer-1",container="nccl")";
  const std::string resource = R"(,resource="rdma/hca_shared_devices_a"})";
  EXPECT_EQ(Sample("rdma_shared_dp_pod_rdma_unused{" + pod0 + resource), 0);
  EXPECT_EQ(Sample("rdma_shared_dp_pod_rdma_unused{" + pod1 + resource), 1);
  EXPECT_EQ(
      Sample("rdma_shared_dp_pod_rdma_objects{" + pod0 + R"(,device="mlx5_0",type="hca_object"})"),
      57);
  EXPECT_EQ(
      Sample("rdma_shared_dp_pod_rdma_objects{" + pod1 + R"(,device="mlx5_1",type="hca_handle"})"),
      1);
  EXPECT_EQ(Sample(R"(rdma_shared_dp_pod_rdma_containers{verdict="unused"})"), 1);
  EXPECT_EQ(Sample(R"(rdma_shared_dp_pod_rdma_containers{verdict="used"})"), 1);
  EXPECT_EQ(Sample(R"(rdma_shared_dp_foreign_rdma_objects{namespace="team-b",pod="gpu-job",)"
                   R"(container="main",device="mlx5_3",type="hca_object"})"),
            9);
  EXPECT_EQ(Sample("rdma_shared_dp_rdma_use_failed_samples_total"), 0);
}

#ifdef RDMADP_WITH_FAKEAPI
// RDMAUnused Events from the real binary (--rdma-unused-events with the device-plugin front
// end) into the fake kube-apiserver, whose port of kube-apiserver's event validation
// (test/manifests/event_validation.mjs) refuses what the real one refuses: exactly one Event,
// on the unused container's pod, and no refused write.
class RdmaUnusedEventsE2E : public RdmaUseE2E {
 protected:
  std::vector<std::string> Flags() override {
    std::vector<std::string> flags = RdmaUseE2E::Flags();
    for (auto& f : api_.PluginFlags()) flags.push_back(f);
    flags.push_back("--rdma-unused-events");
    flags.push_back("--node-name=node-a");
    return flags;
  }
  FakeApiServer api_;
};

TEST_F(RdmaUnusedEventsE2E, TheUnusedContainersPodGetsOneEvent) {
  ASSERT_TRUE(api_.Await("stats.eventCreates === 1")["ok"]) << h.PluginLog();
  const nlohmann::json events = api_.Admin("/events");
  ASSERT_EQ(events.size(), 1u) << events.dump(2);
  const nlohmann::json& e = events[0];
  EXPECT_EQ(e.at("reason"), "RDMAUnused");
  EXPECT_EQ(e.at("type"), "Warning");
  EXPECT_EQ(e.at("metadata").at("namespace"), "team-a");
  EXPECT_EQ(e.at("regarding").at("name"), "trainer-1");
  EXPECT_EQ(e.at("regarding").at("uid"), NodeUseTree::Uid('b'));
  EXPECT_EQ(e.at("reportingInstance"), "node-a");
  EXPECT_THAT(std::string(e.at("note")),
              ::testing::StartsWith("Container nccl has held rdma/hca_shared_devices_a "
                                    "(mlx5_0,mlx5_1) for 30 min and uses none of it"));
  EXPECT_EQ(api_.Stats().at("invalid").size(), 0u) << api_.Stats().dump(2);
  ASSERT_TRUE(WaitForFiles(
      h.root(),
      [&] {
        return Sample(R"(rdma_shared_dp_pod_events_total{reason="RDMAUnused",result="created"})") ==
               1;
      },
      milliseconds(5000)));
  EXPECT_EQ(Sample(R"(rdma_shared_dp_pod_events_total{reason="RDMAUnused",result="failed"})"), 0);
  EXPECT_EQ(api_.Stats().at("eventCreates"), 1);
}
#endif

}  // namespace
}  // namespace rdmadp::testing
