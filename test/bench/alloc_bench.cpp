// Allocate latency and footprint of the real plugin process, against a bare gRPC C++ server
// process measured in the same run: the same callback API, the same number of unix sockets
// (one per resource), an Allocate that returns an empty response. That server is the floor
// of the transport and of gRPC's own memory.
//
//   alloc_bench                              run the benchmark
//   alloc_bench --serve-baseline DIR N       (internal) serve N bare sockets DIR/base-<i>.sock
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <thread>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "test/bench/bench_common.h"
#include "test/support/plugin_harness.h"

using namespace rdmadp;
using namespace rdmadp::bench;
using std::chrono::milliseconds;

namespace {

class BareService final : public v1beta1::DevicePlugin::CallbackService {
  grpc::ServerUnaryReactor* Allocate(grpc::CallbackServerContext* ctx,
                                     const v1beta1::AllocateRequest*,
                                     v1beta1::AllocateResponse*) override {
    auto* r = ctx->DefaultReactor();
    r->Finish(grpc::Status::OK);
    return r;
  }
};

int ServeBaseline(const std::string& dir, int n) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::vector<std::unique_ptr<BareService>> services;
  std::vector<std::unique_ptr<grpc::Server>> servers;
  for (int i = 0; i < n; ++i) {
    services.push_back(std::make_unique<BareService>());
    grpc::ServerBuilder b;
    b.AddListeningPort("unix:" + dir + "/base-" + std::to_string(i) + ".sock",
                       grpc::InsecureServerCredentials());
    b.RegisterService(services.back().get());
    servers.push_back(b.BuildAndStart());
  }
  int sig = 0;
  sigwait(&set, &sig);
  for (auto& s : servers) s->Shutdown();
  return 0;
}

std::shared_ptr<grpc::Channel> Connect(const std::string& socket) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // one connection per client
  auto ch = grpc::CreateCustomChannel("unix://" + socket, grpc::InsecureChannelCredentials(), args);
  ch->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10));
  return ch;
}

struct LoadResult {
  std::vector<double> latencies_us;
  double calls_per_second = 0;
  size_t failures = 0;
};

// `clients` threads, each on its own connection, each making `calls` sequential Allocates.
LoadResult Load(const std::string& socket, int clients, int calls) {
  std::vector<std::vector<double>> per(clients);
  std::vector<size_t> failures(clients);
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int c = 0; c < clients; ++c) channels.push_back(Connect(socket));
  v1beta1::AllocateRequest request;
  request.add_container_requests()->add_devices_ids("0");
  const auto start = Clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto stub = v1beta1::DevicePlugin::NewStub(channels[c]);
      per[c].reserve(calls);
      for (int i = 0; i < calls; ++i) {
        grpc::ClientContext ctx;
        v1beta1::AllocateResponse resp;
        const auto t = Clock::now();
        if (!stub->Allocate(&ctx, request, &resp).ok()) ++failures[c];
        per[c].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  LoadResult r;
  for (int c = 0; c < clients; ++c) {
    r.latencies_us.insert(r.latencies_us.end(), per[c].begin(), per[c].end());
    r.failures += failures[c];
  }
  r.calls_per_second = static_cast<double>(r.latencies_us.size()) / seconds;
  return r;
}

std::string FourResources() {
  return R"({"periodicUpdateInterval": 0, "configList": [
    {"resourceName": "hca_a", "rdmaHcaMax": 1000, "selectors": {"linkTypes": ["infiniband"]}},
    {"resourceName": "hca_b", "rdmaHcaMax": 500, "selectors": {"linkTypes": ["ether"]}},
    {"resourceName": "hca_all", "rdmaHcaMax": 63, "selectors": {"vendors": ["15b3"]}},
    {"resourceName": "hca_numa0", "rdmaHcaMax": 100, "selectors": {"ifNames": ["ib0", "ib1"]}}
  ]})";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--serve-baseline") {
    return ServeBaseline(argv[2], std::atoi(argv[3]));
  }
  testing::PluginHarness h;
  h.AddDemoHcas();
  h.WriteConfig(FourResources());
  if (!h.kubelet().Start().ok()) return 1;
  h.StartPlugin({"--log-level=warning"});
  const bool up = h.kubelet().WaitFor(
      [](const testing::SimState& s) {
        int ready = 0;
        for (const auto& [name, r] : s.resources) ready += r.stream_open ? 1 : 0;
        return ready == 4;
      },
      milliseconds(10000));
  if (!up) {
    std::fprintf(stderr, "plugin did not register 4 resources\n%s", h.PluginLog().c_str());
    return 1;
  }
  const std::string plugin_socket = h.kubelet().State().resources.at("rdma/hca_a").endpoint;
  const std::string base_dir = h.root() + "/baseline";
  std::filesystem::create_directories(base_dir);
  testing::PluginProcess baseline(argv[0], {"--serve-baseline", base_dir, "4"});
  const std::string base_socket = base_dir + "/base-0.sock";
  Load(base_socket, 1, 1);  // waits for it to listen

  // Footprint after start: both processes serve 4 sockets and have answered a call.
  Load(plugin_socket, 1, 1);
  const auto pf = Figures(h.plugin().pid());
  const auto bf = Figures(baseline.pid());
  Row("footprint", "RSS after start, 4 resources", pf.rss_kib / 1024.0, "MiB",
      Fmt(bf.rss_kib / 1024.0) + " MiB bare gRPC", "<= baseline+2 MiB",
      Verdict(pf.rss_kib <= bf.rss_kib + 2048));
  // Where the difference is: resident KiB per mapping, plugin minus bare server.
  {
    auto plugin_maps = RssByMapping(h.plugin().pid());
    auto bare_maps = RssByMapping(baseline.pid());
    // Each process's own executable, compared with the other's.
    plugin_maps["[program]"] = plugin_maps["k8s-rdma-shared-dp"];
    plugin_maps.erase("k8s-rdma-shared-dp");
    bare_maps["[program]"] = bare_maps["alloc_bench"];
    for (const auto& [name, kib] : plugin_maps) {
      auto it = bare_maps.find(name);
      const long bare = it == bare_maps.end() ? 0 : it->second;
      if (kib - bare >= 150) {
        Row("footprint", "RSS above bare gRPC: " + name, (kib - bare) / 1024.0, "MiB",
            Fmt(bare / 1024.0) + " MiB bare gRPC", "info", "info");
      }
    }
  }
  Row("footprint", "threads after start", static_cast<double>(pf.threads), "",
      std::to_string(bf.threads) + " bare gRPC", "info", "info");

  // Allocate latency, alternating rounds so both see the same machine noise.
  for (int clients : {1, 16}) {
    const int calls = clients == 1 ? 4000 : 1000;
    LoadResult plugin, base;
    for (int round = 0; round < 3; ++round) {
      Load(base_socket, clients, 200);  // warm-up
      LoadResult b = Load(base_socket, clients, calls);
      Load(plugin_socket, clients, 200);
      LoadResult p = Load(plugin_socket, clients, calls);
      base.latencies_us.insert(base.latencies_us.end(), b.latencies_us.begin(),
                               b.latencies_us.end());
      plugin.latencies_us.insert(plugin.latencies_us.end(), p.latencies_us.begin(),
                                 p.latencies_us.end());
      base.calls_per_second += b.calls_per_second / 3;
      plugin.calls_per_second += p.calls_per_second / 3;
      plugin.failures += p.failures;
    }
    const std::string tag = "allocate x" + std::to_string(clients);
    const double p50 = Percentile(plugin.latencies_us, 50), b50 = Percentile(base.latencies_us, 50);
    const double p99 = Percentile(plugin.latencies_us, 99), b99 = Percentile(base.latencies_us, 99);
    Row(tag, "p50 latency", p50, "us", Fmt(b50) + " us", "info", "info");
    Row(tag, "p99 latency", p99, "us", Fmt(b99) + " us", "<= 1.3x baseline",
        Verdict(p99 <= 1.3 * b99));
    Row(tag, "p99 / baseline p99", p99 / b99, "x", "1.00", "<= 1.30", Verdict(p99 <= 1.3 * b99));
    Row(tag, "throughput", plugin.calls_per_second, "calls/s",
        Fmt(base.calls_per_second, 0) + " calls/s", "info", "info");
    if (plugin.failures > 0) Row(tag, "failed calls", plugin.failures, "", "0", "0", "MISSED");
  }

  // 100,000 Allocate calls: memory must not grow.
  const auto before = Figures(h.plugin().pid());
  LoadResult big = Load(plugin_socket, 16, 100000 / 16);
  const auto after = Figures(h.plugin().pid());
  Row("footprint", "RSS growth over 100,000 Allocates", (after.rss_kib - before.rss_kib) / 1024.0,
      "MiB", "0", "<= 1 MiB", Verdict(after.rss_kib - before.rss_kib <= 1024));
  Row("footprint", "RSS after 100,000 Allocates", after.rss_kib / 1024.0, "MiB",
      Fmt(Figures(baseline.pid()).rss_kib / 1024.0) + " MiB bare gRPC", "info", "info");
  if (big.failures > 0)
    Row("footprint", "failed calls in 100k", big.failures, "", "0", "0", "MISSED");

  // Idle: periodic rescans off, no kubelet activity. Every wake-up is a context switch.
  const int idle_seconds =
      std::getenv("BENCH_IDLE_SECONDS") ? std::atoi(std::getenv("BENCH_IDLE_SECONDS")) : 60;
  const auto p0 = Figures(h.plugin().pid());
  const auto b0 = Figures(baseline.pid());
  const auto threads0 = SwitchesByThreadName(h.plugin().pid());
  std::this_thread::sleep_for(std::chrono::seconds(idle_seconds));  // the measurement itself
  const auto p1 = Figures(h.plugin().pid());
  const auto b1 = Figures(baseline.pid());
  const auto threads1 = SwitchesByThreadName(h.plugin().pid());
  const double per_min = 60.0 / idle_seconds;
  const double plugin_wakeups = (p1.context_switches - p0.context_switches) * per_min;
  const double bare_wakeups = (b1.context_switches - b0.context_switches) * per_min;
  Row("idle " + std::to_string(idle_seconds) + " s", "wake-ups (context switches) per minute",
      plugin_wakeups, "/min", Fmt(bare_wakeups, 0) + "/min bare gRPC", "0 (no polling)",
      Verdict(plugin_wakeups == 0));
  // Ours alone: what the plugin adds on top of gRPC's own timers.
  Row("idle " + std::to_string(idle_seconds) + " s", "wake-ups above bare gRPC per minute",
      std::max(0.0, plugin_wakeups - bare_wakeups), "/min", "0", "0",
      Verdict(plugin_wakeups <= bare_wakeups));
  // Which threads wake: our event loop runs on the main thread.
  for (const auto& [name, switches] : threads1) {
    auto it = threads0.find(name);
    const double per_minute = (switches - (it == threads0.end() ? 0 : it->second)) * per_min;
    if (per_minute > 0 || name == "k8s-rdma-shared") {
      Row("idle " + std::to_string(idle_seconds) + " s",
          "wake-ups per minute, threads '" + name + "'", per_minute, "/min", "info", "info",
          "info");
    }
  }
  Row("idle " + std::to_string(idle_seconds) + " s", "CPU time per minute",
      (p1.cpu_seconds - p0.cpu_seconds) * per_min * 1000, "ms/min",
      Fmt((b1.cpu_seconds - b0.cpu_seconds) * per_min * 1000) + " ms/min bare gRPC", "info",
      "info");

  baseline.Signal(SIGTERM);
  baseline.WaitExit(milliseconds(2000));
  h.plugin().Signal(SIGTERM);
  h.plugin().WaitExit(milliseconds(2000));
  return 0;
}
