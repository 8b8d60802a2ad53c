// Allocate latency, footprint and idle cost of the real plugin process, against two bare
// servers measured in the same run, each on the same number of unix sockets (one per
// resource) with an Allocate that returns an empty response:
//  - a bare gRPC C++ server on the sync API: the floor of the transport and of gRPC's own
//    memory and timers;
//  - a bare Go gRPC server (test/bench/gobaseline): what grpc-go, as the Go plugin uses it,
//    costs on its own.
// Idle, a third process shows the floor under any program linked with this machine's gRPC: it
// only calls grpc_init() and waits (gRPC's I/O-manager timer thread starts there). Last,
// calls one at a time on a new connection to each server, as pods start on a node, and idle
// again: the wake-ups that such calls leave behind for good.
//
//   alloc_bench                              run the benchmark
//   alloc_bench --serve-baseline DIR N       (internal) serve N bare sockets DIR/base-<i>.sock
//   alloc_bench --grpc-init-only             (internal) grpc_init(), then wait for SIGTERM
#include <grpc/grpc.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "test/bench/bench_common.h"
#include "test/support/plugin_harness.h"

using namespace rdmadp;
using namespace rdmadp::bench;
using std::chrono::milliseconds;

namespace {

class BareService final : public v1beta1::DevicePlugin::Service {
  grpc::Status Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest*,
                        v1beta1::AllocateResponse*) override {
    return grpc::Status::OK;
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

// A thread that does nothing but wait on a condition variable with a 1-second timeout, for as
// long as the object lives: its CPU per wake-up is this machine's price of waking at all.
class OnceASecond {
 public:
  OnceASecond()
      : thread_([this] {
          std::unique_lock lock(mu_);
          tid_ = gettid();
          cv_.notify_all();
          while (!stop_) cv_.wait_for(lock, std::chrono::seconds(1));
        }) {}
  ~OnceASecond() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  OnceASecond(const OnceASecond&) = delete;
  OnceASecond& operator=(const OnceASecond&) = delete;

  ThreadActivity Activity() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return tid_ != 0; });
    return ThreadActivityOf(getpid(), tid_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  pid_t tid_ = 0;
  std::thread thread_;  // last: starts once the members it uses exist
};

// On-CPU time from the scheduler (nanoseconds), not the 10 ms clock ticks of /proc/pid/stat,
// per minute of a window of `seconds`.
double CpuMsPerMinute(const ProcessFigures& a, const ProcessFigures& b, int seconds) {
  return (b.on_cpu_seconds - a.on_cpu_seconds) * 60.0 / seconds * 1000;
}

int GrpcInitOnly() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  grpc_init();
  int sig = 0;
  sigwait(&set, &sig);
  grpc_shutdown();
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--serve-baseline") {
    return ServeBaseline(argv[2], std::atoi(argv[3]));
  }
  if (argc == 2 && std::string(argv[1]) == "--grpc-init-only") return GrpcInitOnly();
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
  testing::PluginProcess go_baseline(RDMADP_GOBASELINE_BINARY, {base_dir, "4"});
  testing::PluginProcess grpc_floor(argv[0], {"--grpc-init-only"});
  const std::string base_socket = base_dir + "/base-0.sock";
  const std::string go_socket = base_dir + "/go-0.sock";
  Load(base_socket, 1, 1);  // waits for them to listen
  Load(go_socket, 1, 1);

  // Footprint after start: every process serves 4 sockets and has answered a call.
  Load(plugin_socket, 1, 1);
  const auto pf = Figures(h.plugin().pid());
  const auto bf = Figures(baseline.pid());
  const auto gf = Figures(go_baseline.pid());
  auto mib = [](long kib) { return Fmt(kib / 1024.0); };
  Row("footprint", "RSS after start, 4 resources", pf.rss_kib / 1024.0, "MiB",
      mib(bf.rss_kib) + " C++ sync, " + mib(gf.rss_kib) + " Go", "info", "info");
  // Where the difference is: resident KiB per mapping, plugin minus the C++ server.
  auto where = [&](const std::string& when) {
    auto plugin_maps = RssByMapping(h.plugin().pid());
    auto bare_maps = RssByMapping(baseline.pid());
    // Each process's own executable, compared with the other's.
    plugin_maps["[program]"] = plugin_maps["k8s-rdma-shared-dp"];
    plugin_maps.erase("k8s-rdma-shared-dp");
    bare_maps["[program]"] = bare_maps["alloc_bench"];
    bare_maps.erase("alloc_bench");
    for (const auto& [name, kib] : bare_maps) plugin_maps.try_emplace(name, 0);
    // Every mapping 40 KiB or more apart, either way (below: a negative figure).
    for (const auto& [name, kib] : plugin_maps) {
      auto it = bare_maps.find(name);
      const long bare = it == bare_maps.end() ? 0 : it->second;
      if (std::abs(kib - bare) >= 40) {
        Row("footprint", "RSS above C++ sync " + when + ": " + name, (kib - bare) / 1024.0, "MiB",
            Fmt(bare / 1024.0) + " MiB C++ sync", "info", "info");
      }
    }
  };
  where("after start");
  Row("footprint", "threads after start", static_cast<double>(pf.threads), "",
      std::to_string(bf.threads) + " C++ sync, " + std::to_string(gf.threads) + " Go", "info",
      "info");

  // Allocate latency, alternating rounds so all see the same machine noise.
  for (int clients : {1, 16}) {
    const int calls = clients == 1 ? 4000 : 1000;
    LoadResult plugin, base, go;
    auto add = [](LoadResult& into, const LoadResult& r) {
      into.latencies_us.insert(into.latencies_us.end(), r.latencies_us.begin(),
                               r.latencies_us.end());
      into.calls_per_second += r.calls_per_second / 3;
      into.failures += r.failures;
    };
    for (int round = 0; round < 3; ++round) {
      for (auto [socket, into] : {std::pair{&base_socket, &base}, std::pair{&go_socket, &go},
                                  std::pair{&plugin_socket, &plugin}}) {
        Load(*socket, clients, 200);  // warm-up
        add(*into, Load(*socket, clients, calls));
      }
    }
    const std::string tag = "allocate x" + std::to_string(clients);
    const double p50 = Percentile(plugin.latencies_us, 50), b50 = Percentile(base.latencies_us, 50);
    const double p99 = Percentile(plugin.latencies_us, 99), b99 = Percentile(base.latencies_us, 99);
    const double g50 = Percentile(go.latencies_us, 50), g99 = Percentile(go.latencies_us, 99);
    Row(tag, "p50 latency", p50, "us", Fmt(b50) + " C++ sync, " + Fmt(g50) + " Go", "info", "info");
    Row(tag, "p99 latency", p99, "us", Fmt(b99) + " C++ sync, " + Fmt(g99) + " Go",
        "<= 1.3x C++ sync", Verdict(p99 <= 1.3 * b99));
    Row(tag, "p99 / C++ sync p99", p99 / b99, "x", "1.00", "<= 1.30", Verdict(p99 <= 1.3 * b99));
    Row(tag, "p99 / Go p99", p99 / g99, "x", "1.00", "info", "info");
    Row(tag, "throughput", plugin.calls_per_second, "calls/s",
        Fmt(base.calls_per_second, 0) + " C++ sync, " + Fmt(go.calls_per_second, 0) + " Go", "info",
        "info");
    if (plugin.failures > 0) Row(tag, "failed calls", plugin.failures, "", "0", "0", "MISSED");
  }

  // 100,000 Allocate calls on each: memory must not grow, and stay near the bare server's.
  const auto before = Figures(h.plugin().pid());
  LoadResult big = Load(plugin_socket, 16, 100000 / 16);
  Load(base_socket, 16, 100000 / 16);
  Load(go_socket, 16, 100000 / 16);
  const auto after = Figures(h.plugin().pid());
  const long base_after = Figures(baseline.pid()).rss_kib;
  Row("footprint", "RSS growth over 100,000 Allocates", (after.rss_kib - before.rss_kib) / 1024.0,
      "MiB", "0", "<= 1 MiB", Verdict(after.rss_kib - before.rss_kib <= 1024));
  Row("footprint", "RSS after 100,000 Allocates", after.rss_kib / 1024.0, "MiB",
      mib(base_after) + " C++ sync, " + mib(Figures(go_baseline.pid()).rss_kib) + " Go",
      "<= C++ sync + 1 MiB", Verdict(after.rss_kib <= base_after + 1024));
  Row("footprint", "RSS above C++ sync after the load", (after.rss_kib - base_after) / 1024.0,
      "MiB", "0", "<= 1 MiB", Verdict(after.rss_kib <= base_after + 1024));
  if (big.failures > 0)
    Row("footprint", "failed calls in 100k", big.failures, "", "0", "0", "MISSED");
  where("after the load");

  // Idle: periodic rescans off, no kubelet activity. Every wake-up is a context switch.
  const int idle_seconds =
      std::getenv("BENCH_IDLE_SECONDS") ? std::atoi(std::getenv("BENCH_IDLE_SECONDS")) : 60;
  const auto p0 = Figures(h.plugin().pid());
  const auto b0 = Figures(baseline.pid());
  const auto g0 = Figures(go_baseline.pid());
  const auto f0 = Figures(grpc_floor.pid());
  const auto threads0 = ActivityByThreadName(h.plugin().pid());
  OnceASecond ticker;
  const ThreadActivity ticker0 = ticker.Activity();
  std::this_thread::sleep_for(std::chrono::seconds(idle_seconds));  // the measurement itself
  const ThreadActivity ticker1 = ticker.Activity();
  const auto p1 = Figures(h.plugin().pid());
  const auto b1 = Figures(baseline.pid());
  const auto g1 = Figures(go_baseline.pid());
  const auto f1 = Figures(grpc_floor.pid());
  const auto threads1 = ActivityByThreadName(h.plugin().pid());
  const double per_min = 60.0 / idle_seconds;
  const double plugin_wakeups = (p1.context_switches - p0.context_switches) * per_min;
  const double bare_wakeups = (b1.context_switches - b0.context_switches) * per_min;
  const double go_wakeups = (g1.context_switches - g0.context_switches) * per_min;
  const std::string idle = "idle " + std::to_string(idle_seconds) + " s";
  Row(idle, "wake-ups (context switches) per minute", plugin_wakeups, "/min",
      Fmt(bare_wakeups, 0) + " C++ sync, " + Fmt(go_wakeups, 0) + " Go", "<= 1.2x C++ sync",
      Verdict(plugin_wakeups <= 1.2 * bare_wakeups));
  // Which threads wake, and what they cost: our event loop runs on the main thread.
  for (const auto& [name, activity] : threads1) {
    const auto it = threads0.find(name);
    const ThreadActivity start = it == threads0.end() ? ThreadActivity{} : it->second;
    const double per_minute = (activity.context_switches - start.context_switches) * per_min;
    if (per_minute > 0 || name == "k8s-rdma-shared") {
      Row(idle, "wake-ups per minute, threads '" + name + "'", per_minute, "/min",
          Fmt((activity.on_cpu_seconds - start.on_cpu_seconds) * per_min * 1000) + " ms/min CPU",
          "info", "info");
    }
  }
  auto cpu_ms_per_min = [&](const ProcessFigures& a, const ProcessFigures& b) {
    return CpuMsPerMinute(a, b, idle_seconds);
  };
  const double cpu_ms = cpu_ms_per_min(p0, p1);
  const double go_cpu_ms = cpu_ms_per_min(g0, g1);
  Row(idle, "CPU time per minute", cpu_ms, "ms/min",
      Fmt(cpu_ms_per_min(b0, b1)) + " C++ sync, " + Fmt(go_cpu_ms) + " Go", "<= 60 ms",
      Verdict(cpu_ms <= 60));
  // The floor under any program linked with this gRPC: its I/O manager's timer thread alone.
  const double floor_ms = cpu_ms_per_min(f0, f1);
  const double floor_wakeups = (f1.context_switches - f0.context_switches) * per_min;
  Row(idle, "CPU time per minute, a process that only calls grpc_init()", floor_ms, "ms/min",
      Fmt(floor_wakeups, 0) + " wake-ups/min", "info", "info");
  // What one wake-up costs on this machine, whatever the thread does when awake: the idle
  // target allows (Go's CPU + 10 ms) / this price wake-ups a minute.
  const auto ticks = static_cast<double>(ticker1.context_switches - ticker0.context_switches);
  const double tick_ms =
      ticks > 0 ? (ticker1.on_cpu_seconds - ticker0.on_cpu_seconds) * 1000 / ticks : 0;
  auto per_wakeup_ms = [](const ProcessFigures& a, const ProcessFigures& b) {
    const auto switches = static_cast<double>(b.context_switches - a.context_switches);
    return switches > 0 ? (b.on_cpu_seconds - a.on_cpu_seconds) * 1000 / switches : 0;
  };
  Row(idle, "CPU per wake-up", per_wakeup_ms(p0, p1), "ms",
      Fmt(tick_ms, 3) + " a thread that only waits 1 s in a loop, " +
          Fmt(per_wakeup_ms(f0, f1), 3) + " grpc_init() only",
      "info", "info");
  // The same footprint once the load is over: the plugin hands freed heap back within 5 s.
  Row(idle, "RSS after the load and the idle window", p1.rss_kib / 1024.0, "MiB",
      mib(b1.rss_kib) + " C++ sync, " + mib(g1.rss_kib) + " Go", "<= C++ sync + 1 MiB",
      Verdict(p1.rss_kib <= b1.rss_kib + 1024));
  Row(idle, "RSS above C++ sync after the idle window", (p1.rss_kib - b1.rss_kib) / 1024.0, "MiB",
      "0", "<= 1 MiB", Verdict(p1.rss_kib <= b1.rss_kib + 1024));
  where("after the idle window");

  // Calls one at a time, as pods start on a node, then idle again. With HTTP/2 bandwidth
  // probing on (gRPC's default, as in the C++ server here) each call's probe timers can leave
  // gRPC's timer shards out of step, and the timer thread then wakes twice a second or more
  // for as long as the process lives (docs/performance.md). One new connection to each server.
  const int sparse_calls = 15;
  const auto sparse_gap = milliseconds(1500);
  {
    auto plugin_stub = v1beta1::DevicePlugin::NewStub(Connect(plugin_socket));
    auto base_stub = v1beta1::DevicePlugin::NewStub(Connect(base_socket));
    auto go_stub = v1beta1::DevicePlugin::NewStub(Connect(go_socket));
    v1beta1::AllocateRequest request;
    request.add_container_requests()->add_devices_ids("0");
    size_t failures = 0;
    for (int i = 0; i < sparse_calls; ++i) {
      for (auto* stub : {plugin_stub.get(), base_stub.get(), go_stub.get()}) {
        grpc::ClientContext ctx;
        v1beta1::AllocateResponse resp;
        if (!stub->Allocate(&ctx, request, &resp).ok()) ++failures;
      }
      std::this_thread::sleep_for(sparse_gap);  // the pace of the calls, not synchronisation
    }
    const std::string tag = "idle after sparse calls";
    if (failures > 0) Row(tag, "failed calls", failures, "", "0", "0", "MISSED");
    const int window = std::max(1, idle_seconds / 2);
    const auto q0 = Figures(h.plugin().pid());
    const auto c0 = Figures(baseline.pid());
    const auto o0 = Figures(go_baseline.pid());
    const auto timers0 = ActivityByThreadName(h.plugin().pid())["grpc_global_tim"];
    const auto base_timers0 = ActivityByThreadName(baseline.pid())["grpc_global_tim"];
    std::this_thread::sleep_for(std::chrono::seconds(window));  // the measurement itself
    const auto q1 = Figures(h.plugin().pid());
    const auto c1 = Figures(baseline.pid());
    const auto o1 = Figures(go_baseline.pid());
    const auto timers1 = ActivityByThreadName(h.plugin().pid())["grpc_global_tim"];
    const auto base_timers1 = ActivityByThreadName(baseline.pid())["grpc_global_tim"];
    const double scale = 60.0 / window;
    const std::string what = std::to_string(sparse_calls) + " Allocates " +
                             Fmt(sparse_gap.count() / 1000.0, 1) + " s apart, then " +
                             std::to_string(window) + " s idle";
    Row(tag, what, sparse_calls, "calls", "the same on each server", "info", "info");
    const double wakeups = (q1.context_switches - q0.context_switches) * scale;
    Row(tag, "wake-ups (context switches) per minute", wakeups, "/min",
        Fmt((c1.context_switches - c0.context_switches) * scale, 0) + " C++ sync, " +
            Fmt((o1.context_switches - o0.context_switches) * scale, 0) + " Go",
        "<= 1.2x C++ sync",
        Verdict(wakeups <= 1.2 * (c1.context_switches - c0.context_switches) * scale));
    Row(tag, "wake-ups per minute, threads 'grpc_global_tim'",
        (timers1.context_switches - timers0.context_switches) * scale, "/min",
        Fmt((base_timers1.context_switches - base_timers0.context_switches) * scale, 0) +
            " C++ sync (bandwidth probing on)",
        "info", "info");
    const double cpu = CpuMsPerMinute(q0, q1, window);
    const double go_cpu = CpuMsPerMinute(o0, o1, window);
    Row(tag, "CPU time per minute", cpu, "ms/min",
        Fmt(CpuMsPerMinute(c0, c1, window)) + " C++ sync, " + Fmt(go_cpu) + " Go", "<= 60 ms",
        Verdict(cpu <= 60));
  }

  for (testing::PluginProcess* p : {&baseline, &go_baseline, &grpc_floor, &h.plugin()}) {
    p->Signal(SIGTERM);
    p->WaitExit(milliseconds(2000));
  }
  return 0;
}
