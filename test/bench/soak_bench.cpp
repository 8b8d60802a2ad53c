// A long soak of the real plugin (hours; not CI): a mixed load in cycles of ~5 s, each with
// 200 Allocates from a fresh connection, a /metrics scrape and a port flap (periodic rescans
// every second push it to the kubelet); in every cycle but the restarts, the kubelet ends
// resource A's ListAndWatch stream (a flaky kubelet) and a re-registration later than 5 s
// counts as a miss (16 misses in 5 min before the fix: docs/reliability.md, "The mixed soak
// with a flaky kubelet stream"); every 6th cycle a kubelet restart, every 12th a SIGHUP
// reload. It samples RSS, fds and threads once per cycle, prints them per tenth of the run,
// and fits RSS after the warm-up (the first fifth, at least 60 s) to a line: the slope, in
// MiB per hour, should be ~0. Beside RSS it fits the allocator's own figures from the scrape
// (glibc mallinfo2 over every arena: bytes in use, bytes kept free), which tell a leak (in
// use grows) from fragmentation (free grows).
//
//   soak_bench [SECONDS=7200]       (scripts/bench.sh runs it when BENCH_SOAK_SECONDS is set)
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "pkg/api/deviceplugin.grpc.pb.h"
#include "test/bench/bench_common.h"
#include "test/support/plugin_harness.h"

using namespace rdmadp;
using namespace rdmadp::bench;
using std::chrono::milliseconds;

namespace {

constexpr char kA[] = "rdma/hca_shared_devices_a";
constexpr char kB[] = "rdma/hca_shared_devices_b";

struct Sample {
  double seconds = 0;
  long rss_kib = 0;
  double heap_in_use_kib = 0;  // from the scrape; 0 when it failed
  double heap_free_kib = 0;
  size_t fds = 0;
  long threads = 0;
};

Sample Take(pid_t pid, Clock::time_point start) {
  Sample s;
  s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const auto f = Figures(pid);
  s.rss_kib = f.rss_kib;
  s.threads = f.threads;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    ++s.fds;
  }
  return s;
}

// How many threads of each name pid runs (names as /proc shows them, 15 characters at most).
std::map<std::string, int> ThreadsByName(pid_t pid) {
  std::map<std::string, int> count;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::string name;
    std::getline(std::ifstream(e.path() / "comm"), name);
    ++count[name];
  }
  return count;
}

// Least-squares slope of a figure (KiB) over time, in MiB per hour.
double SlopeMibPerHour(const std::vector<Sample>& samples, double (*kib)(const Sample&)) {
  if (samples.size() < 2) return 0;
  double mx = 0, my = 0;
  for (const auto& s : samples) {
    mx += s.seconds;
    my += kib(s);
  }
  mx /= static_cast<double>(samples.size());
  my /= static_cast<double>(samples.size());
  double num = 0, den = 0;
  for (const auto& s : samples) {
    num += (s.seconds - mx) * (kib(s) - my);
    den += (s.seconds - mx) * (s.seconds - mx);
  }
  return den == 0 ? 0 : num / den * 3600 / 1024;
}

// The value of an unlabelled sample line "<name> <value>" on a metrics page; 0 if absent.
double MetricValue(const std::string& page, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const auto at = page.find(key);
  return at == std::string::npos ? 0 : std::strtod(page.c_str() + at + key.size(), nullptr);
}

// RSS (MiB) of the samples just before and at `seconds`, as "a -> b MiB".
std::string RssAcross(const std::vector<Sample>& samples, double seconds) {
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].seconds >= seconds) {
      return Fmt(samples[i - 1].rss_kib / 1024.0) + " -> " + Fmt(samples[i].rss_kib / 1024.0) +
             " MiB RSS";
    }
  }
  return "";
}

// A plain GET on a new connection; true on a 200 answer, whose text goes to `page`.
bool Scrape(int port, std::string* page) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string req = "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      std::string answer;
      char buf[4096];
      for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) answer.append(buf, n);
      ok = answer.rfind("HTTP/1.1 200 ", 0) == 0;
      *page = std::move(answer);
    }
  }
  ::close(fd);
  return ok;
}

size_t Allocates(const std::string& socket, int calls) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto channel =
      grpc::CreateCustomChannel("unix://" + socket, grpc::InsecureChannelCredentials(), args);
  auto stub = v1beta1::DevicePlugin::NewStub(channel);
  v1beta1::AllocateRequest request;
  request.add_container_requests()->add_devices_ids("0");
  size_t failures = 0;
  for (int i = 0; i < calls; ++i) {
    grpc::ClientContext ctx;
    ctx.set_wait_for_ready(true);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1beta1::AllocateResponse response;
    if (!stub->Allocate(&ctx, request, &response).ok()) ++failures;
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 7200;
  testing::PluginHarness h;
  h.AddDemoHcas();
  h.WriteConfig(testing::PluginHarness::DemoConfig(1));  // a rescan every second
  if (!h.kubelet().Start().ok()) return 1;
  h.StartPlugin({"--metrics-address=127.0.0.1:0"});
  auto registered = [&](int n) {
    return h.kubelet().WaitRegistered({kA, kB}, n, milliseconds(10000));
  };
  if (!registered(1)) {
    std::fprintf(stderr, "plugin did not register\n%s", h.PluginLog().c_str());
    return 1;
  }
  int port = 0;  // from the log line "metrics on http://127.0.0.1:PORT/metrics"
  {
    std::smatch m;
    const std::string log = h.PluginLog();
    if (std::regex_search(log, m, std::regex("metrics on http://127.0.0.1:([0-9]+)/metrics"))) {
      port = std::stoi(m[1]);
    }
  }
  const auto start = Clock::now();
  const double warmup = std::max(60.0, seconds / 5.0);
  std::vector<Sample> samples;
  std::map<std::string, long> maps_after_warmup;  // resident KiB per mapping, for the growth rows
  // Threads started after the warm-up, each with when: a new thread's stack and allocator
  // cache are a step in RSS, not a slope.
  std::map<std::string, int> threads_seen;
  std::vector<std::pair<std::string, double>> thread_births;  // name, seconds
  size_t failures = 0, scrape_failures = 0;
  int restarts = 0, reloads = 0, cycles = 0, registrations = 1, stream_ends = 0, misses = 0;
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    ++cycles;
    const std::string socket = h.kubelet().State().resources.at(kA).endpoint;
    failures += Allocates(socket, 200);
    std::string page;
    if (port != 0 && !Scrape(port, &page)) ++scrape_failures;
    // A port flaps: the next periodic rescan pushes a changed device list to the kubelet.
    h.node().SetPortState("mlx5_0", 1, cycles % 2 == 0 ? "4: ACTIVE" : "1: DOWN");
    if (cycles % 6 != 0) {
      const int before = h.kubelet().State().resources.at(kA).registrations;
      h.kubelet().CancelStream(kA);
      ++stream_ends;
      if (!h.kubelet().WaitRegistered({kA}, before + 1, milliseconds(5000))) ++misses;
    }
    if (cycles % 6 == 0) {
      if (!h.kubelet().Restart().ok() || !registered(++registrations)) {
        std::fprintf(stderr, "no re-registration after restart %d\n%s", restarts + 1,
                     h.PluginLog().c_str());
        return 1;
      }
      ++restarts;
    }
    if (cycles % 12 == 0) {
      h.plugin().Signal(SIGHUP);
      ++reloads;
    }
    samples.push_back(Take(h.plugin().pid(), start));
    samples.back().heap_in_use_kib = MetricValue(page, "rdma_shared_dp_heap_in_use_bytes") / 1024;
    samples.back().heap_free_kib = MetricValue(page, "rdma_shared_dp_heap_free_bytes") / 1024;
    if (maps_after_warmup.empty() && samples.back().seconds >= warmup) {
      maps_after_warmup = RssByMapping(h.plugin().pid());
      threads_seen = ThreadsByName(h.plugin().pid());
    } else if (!maps_after_warmup.empty()) {
      for (const auto& [name, n] : ThreadsByName(h.plugin().pid())) {
        for (int& seen = threads_seen[name]; seen < n; ++seen) {
          thread_births.emplace_back(name, samples.back().seconds);
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::seconds(5));  // the load's pace
  }

  const std::string tag = "soak " + std::to_string(seconds) + " s";
  Row(tag, "stream ends by the kubelet: re-registrations later than 5 s", misses, "misses",
      std::to_string(stream_ends) + " stream ends", "0", Verdict(misses == 0));
  for (int tenth = 1; tenth <= 10; ++tenth) {
    const double until = seconds * tenth / 10.0;
    const Sample* last = nullptr;
    for (const auto& s : samples) {
      if (s.seconds <= until) last = &s;
    }
    if (last == nullptr) continue;
    Row(tag, "at " + std::to_string(tenth * 10) + "%: RSS / fds / threads", last->rss_kib / 1024.0,
        "MiB", std::to_string(last->fds) + " fds, " + std::to_string(last->threads) + " threads",
        "info", "info");
    Row(tag, "at " + std::to_string(tenth * 10) + "%: malloc in use / kept free",
        last->heap_in_use_kib / 1024, "MiB", Fmt(last->heap_free_kib / 1024) + " MiB free", "info",
        "info");
  }
  std::vector<Sample> after_warmup;
  for (const auto& s : samples) {
    if (s.seconds >= warmup) after_warmup.push_back(s);
  }
  const double slope =
      SlopeMibPerHour(after_warmup, [](const Sample& s) { return static_cast<double>(s.rss_kib); });
  Row(tag, "RSS slope after warm-up", slope, "MiB/h", "0", "|slope| <= 0.1",
      Verdict(std::abs(slope) <= 0.1));
  Row(tag, "malloc in-use slope after warm-up (a leak shows here)",
      SlopeMibPerHour(after_warmup, [](const Sample& s) { return s.heap_in_use_kib; }), "MiB/h",
      "0", "info", "info");
  Row(tag, "malloc kept-free slope after warm-up (fragmentation shows here)",
      SlopeMibPerHour(after_warmup, [](const Sample& s) { return s.heap_free_kib; }), "MiB/h", "0",
      "info", "info");
  // Where RSS grew after the warm-up: every mapping 40 KiB or more apart, either way.
  if (!maps_after_warmup.empty()) {
    auto at_end = RssByMapping(h.plugin().pid());
    for (const auto& [name, kib] : maps_after_warmup) at_end.try_emplace(name, 0);
    for (const auto& [name, kib] : at_end) {
      const auto it = maps_after_warmup.find(name);
      const long before = it == maps_after_warmup.end() ? 0 : it->second;
      if (std::abs(kib - before) >= 40) {
        Row(tag, "RSS growth after warm-up: " + name, (kib - before) / 1024.0, "MiB",
            Fmt(before / 1024.0) + " MiB after warm-up", "info", "info");
      }
    }
  }
  for (const auto& [name, when] : thread_births) {
    Row(tag, "thread started after warm-up: '" + name + "'", when * 100 / seconds, "% of run",
        RssAcross(samples, when), "info", "info");
  }
  if (!after_warmup.empty()) {
    Row(tag, "fds after warm-up -> end", static_cast<double>(samples.back().fds), "",
        std::to_string(after_warmup.front().fds) + " after warm-up", "no growth",
        Verdict(samples.back().fds <= after_warmup.front().fds));
  }
  Row(tag, "load", cycles, "cycles",
      std::to_string(cycles * 200) + " Allocates, " + std::to_string(restarts) +
          " kubelet restarts, " + std::to_string(reloads) + " reloads",
      "info", "info");
  Row(tag, "failed Allocates / scrapes", static_cast<double>(failures + scrape_failures), "", "0",
      "0", Verdict(failures + scrape_failures == 0));
  // After hours of connections coming and going: does gRPC's timer thread still wake once a
  // second when nothing happens, or have its timer shards' windows come apart (grpc_runtime.h)?
  // The rescans (every second here) keep the event loop awake; gRPC's thread is counted alone.
  const auto idle0 = ActivityByThreadName(h.plugin().pid());
  std::this_thread::sleep_for(std::chrono::seconds(60));  // the measurement itself
  const auto idle1 = ActivityByThreadName(h.plugin().pid());
  const auto timer0 = idle0.find("grpc_global_tim");
  const auto timer1 = idle1.find("grpc_global_tim");
  if (timer0 != idle0.end() && timer1 != idle1.end()) {
    Row(tag, "after the load, 60 s idle: wake-ups of gRPC's timer threads",
        static_cast<double>(timer1->second.context_switches - timer0->second.context_switches),
        "/min", "gRPC's own schedule: about 60", "info", "info");
  }
  h.plugin().Signal(SIGTERM);
  h.plugin().WaitExit(milliseconds(2000));
  return 0;
}
