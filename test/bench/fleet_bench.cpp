// A fleet against one API server (docs/performance.md, "A fleet against one API server"):
// NODES simulated nodes, each the plugin's own SlicePublisher (two threads, two TLS
// connections, its own user agent "fleet/<node>"), 8 HCAs a node, against the fake
// kube-apiserver with API Priority and Fairness on (a request budget a second, 429 with
// Retry-After past it, LISTs slower as the budget runs out, bookmarks). The fleet goes
// through waves; each has a budget that is checked and printed, and a broken budget fails
// the run with the wave and the figure:
//
//   cold      every node starts (spread over NODES/250 s, as a DaemonSet's pods come up):
//             served per node <= 1 LIST, 1 WATCH, 1 write per slice (plus the node GET
//             for the owner reference and the dry-run capability probe)
//   rollout   the DaemonSet restarted at maxUnavailable 1 (the first 20 nodes) and 10 %:
//             every restarted node adopts its slices with 0 writes
//   wipe      every kubelet restarts (wipes its node's slices), 100 a second (at least
//             10 s): every node right again within 2 s of its wipe, writes = slices wiped
//   flap      10 % of the nodes have one HCA flapping every 2 s for 20 s (each port on its
//             own phase of the period): the first change
//             written within 1 s, then <= 1 write per node per 10 s; other nodes 0 writes
//   overload  the budget cut to 10 % (Retry-After 4 s) for 60 s while every node's pool
//             changes: no request before its Retry-After, everything right within 30 s of
//             the budget's return
//   outage    every request refused (503) for 60 s while a tenth of the nodes' pools change
//             (as in the flap wave): <= 8 requests per node during it, every node right
//             within 10 s of the return, the busiest second after it <= NODES/10 requests
//             (were every pool to change, all NODES writes would have to fit in 10 s at
//             NODES/10 a second exactly: no spread of independent nodes does that)
//   steady    10 minutes of nothing, simulated in one (the publishers' clocks and the
//             server's timers run ten times as fast): 0 writes, <= 1 watch opened per
//             node per 5 min
//
//   fleet_bench [NODES=100]
//   FLEET_WAVES=cold,rollout,...   the waves to run (cold always runs first)
//   FLEET_BUDGET=1000              the API server's budget, requests a second
//   FLEET_OUTAGE_S=60 FLEET_OVERLOAD_S=60 FLEET_STEADY_S=600 (simulated)
//   FLEET_STEADY_RATE=10           how much faster than real time the steady wave runs
// `scripts/bench.sh fleet` runs it at 100, 1,000 and 5,000 nodes.
//
// The publishers live in worker processes of up to kNodesPerWorker nodes each, fewer where
// the descriptor limit is lower (a publisher holds 6 descriptors: two sockets and libcurl's
// wake-up pair for each; a process may hold 20,000 here), driven over a socketpair; this process
// runs the waves and reads every figure off the server.
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "pkg/dra/slices/resource_slices.h"
#include "pkg/dra/slices/slice_publisher.h"
#include "pkg/text/cat.h"
#include "test/bench/bench_common.h"
#include "test/support/fake_apiserver.h"
#include "test/support/hca_fixture.h"
#include "test/support/scaled_clock.h"

using namespace rdmadp;
using namespace std::chrono_literals;
using bench::Clock;
using bench::PeakRssKib;
using bench::Percentile;
using nlohmann::json;

namespace {

constexpr int kHcas = 8;
constexpr const char* kDriver = "rdma.example.com";

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// A node's pool with its first `hcas` HCAs (a flapping port takes the last one away).
dra::WantedPool Pool(const std::string& node, int hcas) {
  pool::PoolModel p;
  p.resource.resource_name = "a";
  p.resource.rdma_hca_max = 8;
  for (int i = 0; i < hcas; ++i) {
    p.hcas.push_back(testing::ConnectXHca(Cat("0000:", 10 + i, ":00.0"), 0));
  }
  dra::SliceContext ctx;
  ctx.driver = kDriver;
  ctx.node_name = node;
  return {dra::PoolName(ctx, p.resource), dra::RenderResourceSlices(p, ctx)};
}

size_t Devices(const dra::WantedPool& pool) {
  size_t n = 0;
  for (const auto& s : pool.slices) n += s["spec"]["devices"].size();
  return n;
}

struct Node {
  std::string name;
  int hcas = kHcas;
};

constexpr size_t kNodesPerWorker = 2500;
constexpr size_t kDescriptorsPerNode = 6;  // two sockets and libcurl's wake-up pair for each

// The API server a worker's publishers talk to.
struct ApiAddress {
  std::string server, ca_file, token_file;
};

// A worker process's command loop: one line in, one line out, until its parent closes the
// socket. Commands: "api <server> <ca> <token>", "start <node> <hcas>" (a publisher
// started, its pool published), "stop <node>", "publish <node> <hcas>", "ready <node>"
// ("1" once it listed and has nothing to write), "rate <r>" (the publishers' clock runs r
// times as fast from now on), "rss" (its peak RSS, KiB).
[[noreturn]] void WorkerMain(int fd) {
  FILE* in = ::fdopen(fd, "r");
  ApiAddress api;
  testing::ScaledClock clock;  // every publisher's time; the steady wave speeds it up
  std::map<std::string, std::unique_ptr<dra::SlicePublisher>> publishers;
  char line[4096];
  while (std::fgets(line, sizeof line, in) != nullptr) {
    std::istringstream words(line);
    std::string verb, node;
    int hcas = 0;
    words >> verb;
    std::string answer = "ok";
    if (verb == "api") {
      words >> api.server >> api.ca_file >> api.token_file;
    } else if (verb == "start" || verb == "publish") {
      words >> node >> hcas;
      if (verb == "start") {
        dra::PublisherOptions o;
        o.api = {api.server, api.ca_file, api.token_file, Cat("fleet/", node)};
        o.driver = kDriver;
        o.node_name = node;
        o.clock = &clock;
        auto started = dra::SlicePublisher::Start(o);
        if (!started.ok()) {
          std::fprintf(stderr, "publisher %s: %s\n", node.c_str(),
                       std::string(started.status().message()).c_str());
          std::_Exit(1);
        }
        publishers[node] = std::move(*started);
      }
      publishers.at(node)->Publish({Pool(node, hcas)});
    } else if (verb == "stop") {
      words >> node;
      publishers.erase(node);
    } else if (verb == "ready") {
      words >> node;
      const auto st = publishers.at(node)->stats();
      answer = st.synced && st.in_sync ? "1" : "0";
    } else if (verb == "rate") {
      double rate = 0;
      words >> rate;
      if (rate > 0) {
        clock.SetRate(rate);
      } else {
        answer = "bad rate";
      }
    } else if (verb == "rss") {
      answer = std::to_string(PeakRssKib(::getpid()));
    }
    answer += '\n';
    if (::write(fd, answer.data(), answer.size()) != static_cast<ssize_t>(answer.size())) break;
  }
  std::_Exit(0);  // not through the publishers' destructors: thousands of joins for nothing
}

// This process's end of one worker. Workers are forked before anything starts a thread.
class Worker {
 public:
  // `siblings`: the workers forked before, whose sockets the new one must not hold (each
  // sees its parent go only when every copy of its socket is closed).
  explicit Worker(const std::vector<std::unique_ptr<Worker>>& siblings) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      std::perror("fleet_bench: socketpair");
      std::exit(2);
    }
    pid_ = ::fork();
    if (pid_ < 0) {
      std::perror("fleet_bench: fork");
      std::exit(2);
    }
    if (pid_ == 0) {
      for (const auto& w : siblings) ::close(w->fd_);
      ::close(fds[0]);
      WorkerMain(fds[1]);
    }
    ::close(fds[1]);
    fd_ = fds[0];
    in_ = ::fdopen(fd_, "r");
  }
  // The worker sees its socket close and exits; it is reaped here.
  ~Worker() {
    std::fclose(in_);
    ::waitpid(pid_, nullptr, 0);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  // Sends one command; returns the worker's answer (the run ends if the worker is gone).
  std::string Call(const std::string& command) {
    const std::string line = command + '\n';
    char answer[256];
    if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()) ||
        std::fgets(answer, sizeof answer, in_) == nullptr) {
      std::fprintf(stderr, "fleet_bench: a worker died at \"%s\"\n", command.c_str());
      std::_Exit(2);
    }
    std::string out(answer);
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  FILE* in_ = nullptr;
};

class Bench {
 public:
  // `workers` forked before anything else starts a thread.
  Bench(int nodes, std::vector<std::unique_ptr<Worker>> workers)
      : api_(60000), workers_(std::move(workers)) {
    for (auto& w : workers_) {
      w->Call(Cat("api ", api_.server(), " ", api_.ca_file(), " ", api_.token_file()));
    }
    budget_ = EnvInt("FLEET_BUDGET", 1000);
    Admin("/apf", {{"budget", budget_}, {"retryAfter", 1}, {"listDelayMs", 200}});
    for (int n = 0; n < nodes; ++n) nodes_.push_back({Cat("node-", n), kHcas});
    for (int h : {kHcas - 2, kHcas - 1, kHcas}) devices_[h] = Devices(Pool("x", h));
    slices_per_node_ = static_cast<int>(Pool("x", kHcas).slices.size());
  }

  int failures() const { return failures_; }
  // An admin call to the server; the run ends, saying which, when the server cannot answer.
  json Admin(const std::string& path, const json& body = nullptr) {
    json answer = api_.Admin(path, body);
    if (!answer.is_object()) {
      std::fprintf(stderr, "fleet_bench: the API server did not answer %s\n", path.c_str());
      std::_Exit(2);  // not through the publishers' destructors: their threads still run
    }
    return answer;
  }

  void Cold();
  void Rollout();
  void Wipe();
  void Flap();
  void Overload();
  void Outage();
  void Steady();

  void PrintMemory() {
    double fleet_kib = 0;
    for (auto& w : workers_) fleet_kib += std::stod(w->Call("rss"));
    std::printf(
        "peak memory: the fleet %.0f MiB (%zu publishers, %zu threads, in %zu processes), "
        "the API server %.0f MiB\n",
        fleet_kib / 1024, nodes_.size(), 2 * nodes_.size(), workers_.size(),
        static_cast<double>(PeakRssKib(api_.pid())) / 1024);
  }

 private:
  Worker& WorkerOf(size_t i) { return *workers_[i % workers_.size()]; }
  void Start(size_t i, int hcas) {
    nodes_[i].hcas = hcas;
    WorkerOf(i).Call(Cat("start ", nodes_[i].name, " ", hcas));
  }
  void Stop(size_t i) { WorkerOf(i).Call(Cat("stop ", nodes_[i].name)); }
  // The fleet's time (every publisher's clock and the server's own timers) runs `rate`
  // times as fast from now on.
  void SetRate(int rate) {
    Admin("/time-scale", {{"scale", rate}});
    for (auto& w : workers_) {
      if (w->Call(Cat("rate ", rate)) != "ok") {
        std::fprintf(stderr, "fleet_bench: a worker refused the rate %d\n", rate);
        std::_Exit(2);
      }
    }
  }
  bool Ready(size_t i) { return WorkerOf(i).Call(Cat("ready ", nodes_[i].name)) == "1"; }
  void Publish(size_t i, int hcas) {
    nodes_[i].hcas = hcas;
    WorkerOf(i).Call(Cat("publish ", nodes_[i].name, " ", hcas));
  }
  // Starts the server's per-node counts over; returns the server's time (ms), and keeps it
  // with ours so that a moment of ours converts to the server's clock (ServerMs).
  double Mark() {
    const auto sent = Clock::now();
    mark_at_ = Admin("/mark", json::object())["at"].get<double>();
    mark_local_ = sent + (Clock::now() - sent) / 2;  // the server answered about midway
    return mark_at_;
  }
  double ServerMs() const {
    return mark_at_ + std::chrono::duration<double, std::milli>(Clock::now() - mark_local_).count();
  }
  double Now() { return Admin("/stats")["at"].get<double>(); }
  json NodesNow() { return Admin("/nodes")["nodes"]; }
  // Polls the server (a sampling clock, not synchronisation) until every node's slices
  // carry its current pool's devices and were written after `written_after` (only the
  // nodes in `changed`, when given); returns the server's per-node view then, or null at
  // the timeout.
  json AwaitRight(std::chrono::seconds timeout, double written_after = -1,
                  const std::vector<bool>& changed = {}) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      json view = NodesNow();
      bool right = true;
      for (const Node& n : nodes_) {
        const json& v = view[n.name];
        const size_t i = static_cast<size_t>(&n - nodes_.data());
        const bool must_write = changed.empty() || changed[i];
        if (v.is_null() || v["devices"].get<size_t>() != devices_[n.hcas] ||
            v["slices"].get<int>() != slices_per_node_ ||
            (must_write && v["lastWriteAt"].get<double>() < written_after)) {
          right = false;
          break;
        }
      }
      if (right) return view;
      // Times to right come from the server's own write times, not from this poll: once a
      // second keeps the 5,000-node view (half a megabyte) off the server's one thread.
      std::this_thread::sleep_for(1s);
    }
    return nullptr;
  }
  // The server's per-second counts over [from, to) (ms on its clock), summed by field.
  std::vector<json> Series(double from_ms, double to_ms) {
    json all = Admin("/series")["series"];
    std::vector<json> out;
    const json zero = {{"requests", 0}, {"throttled", 0}, {"refused", 0}, {"list", 0},
                       {"watch", 0},    {"write", 0},     {"probe", 0},   {"get", 0}};
    // Seconds without a request have no entry yet: they count as zero.
    for (size_t i = static_cast<size_t>(from_ms / 1000); static_cast<double>(i) * 1000 < to_ms;
         ++i) {
      out.push_back(i < all.size() ? all[i] : zero);
    }
    return out;
  }
  // What the server counted between two /stats answers: requests served by kind ("list",
  // "watch", "write", "probe", "get") or a top-level counter ("requests", "throttled",
  // "earlyRetries").
  static double Served(const json& before, const json& after, const char* kind) {
    return after["served"][kind].get<double>() - before["served"][kind].get<double>();
  }
  static double Delta(const json& before, const json& after, const char* field) {
    return after[field].get<double>() - before[field].get<double>();
  }
  static long Peak(const std::vector<json>& s, const char* field) {
    long n = 0;
    for (const auto& sec : s) n = std::max(n, sec[field].get<long>());
    return n;
  }
  static std::string PerSecond(const std::vector<json>& s, const char* field) {
    std::ostringstream out;
    for (const auto& sec : s) out << ' ' << sec[field].get<long>();
    return out.str();
  }
  // Requests each node's user agent sent so far.
  std::map<std::string, long> PerNodeRequests() {
    std::map<std::string, long> out;
    const json stats = Admin("/stats");  // kept: a range-for over a temporary's member dangles
    for (const auto& [ua, n] : stats["byUserAgent"].items()) out[ua] = n.get<long>();
    return out;
  }
  void Check(const char* wave, const std::string& what, double value, double budget) {
    const bool ok = value <= budget;
    std::printf("  %-9s %-58s %10.1f  budget %8.1f  %s\n", wave, what.c_str(), value, budget,
                ok ? "ok" : "BROKEN");
    if (!ok) ++failures_;
  }
  void Figure(const char* wave, const std::string& what, const std::string& value) {
    std::printf("  %-9s %-58s %s\n", wave, what.c_str(), value.c_str());
  }
  void TimesToRight(const char* wave, const std::vector<double>& ms, double budget_ms) {
    Figure(
        wave, "time to right, p50 / p99 (ms)",
        Cat(static_cast<long>(Percentile(ms, 50)), " / ", static_cast<long>(Percentile(ms, 99))));
    Check(wave, "time to right, slowest node (ms)", Percentile(ms, 100), budget_ms);
  }

  // Each node's time to right from `since` (server ms) to its last write, from AwaitRight's
  // view (null: some node never got right).
  void RightAfter(const char* wave, const json& right, double since, double budget_ms) {
    if (right.is_null()) {
      Check(wave, "nodes right 120 s after it (missing)", 1, 0);
      return;
    }
    std::vector<double> ms;
    for (const Node& n : nodes_) {
      ms.push_back(std::max(0.0, right[n.name]["lastWriteAt"].get<double>() - since));
    }
    TimesToRight(wave, ms, budget_ms);
  }

  testing::FakeApiServer api_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Node> nodes_;
  std::map<int, size_t> devices_;  // by HCA count
  int slices_per_node_ = 0;
  int budget_ = 0;
  Clock::time_point mark_local_;
  double mark_at_ = 0;
  int failures_ = 0;
};

void Bench::Cold() {
  const double from = Mark();
  const json c0 = Admin("/stats");
  const auto ramp = std::chrono::milliseconds(nodes_.size() * 4);  // 250 nodes a second
  const auto start = Clock::now();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::this_thread::sleep_until(start + ramp * i / nodes_.size());
    Start(i, kHcas);
  }
  const json right = AwaitRight(300s);
  const json c1 = Admin("/stats");
  // When the last node was right, by the server's write times (not when the poll saw it).
  double to = c1["at"].get<double>();
  if (!right.is_null()) {
    to = 0;
    for (const Node& n : nodes_) to = std::max(to, right[n.name]["lastWriteAt"].get<double>());
  }
  const auto s = Series(from, to + 1000);
  const double n = static_cast<double>(nodes_.size());
  std::printf("cold start: %zu nodes over %.1f s, all right after %.1f s\n", nodes_.size(),
              std::chrono::duration<double>(ramp).count(), (to - from) / 1000);
  if (right.is_null()) {
    Check("cold", "nodes right after 300 s (missing)", 1, 0);
    return;
  }
  Figure("cold", "requests/s", PerSecond(s, "requests"));
  Check("cold", "LISTs served per node", Served(c0, c1, "list") / n, 1);
  Check("cold", "WATCHes served per node", Served(c0, c1, "watch") / n, 1);
  Check("cold", "writes per slice", Served(c0, c1, "write") / n / slices_per_node_, 1);
  Check("cold", "node GETs + dry-run probes served per node",
        (Served(c0, c1, "get") + Served(c0, c1, "probe")) / n, 2);
  Figure("cold", "429s (each waited its Retry-After)",
         std::to_string(static_cast<long>(Delta(c0, c1, "throttled"))));
  Check("cold", "requests before their Retry-After", Delta(c0, c1, "earlyRetries"), 0);
}

void Bench::Rollout() {
  const double from = Mark();
  const json c0 = Admin("/stats");
  auto restart = [&](size_t first, size_t count) {
    for (size_t i = first; i < first + count; ++i) Stop(i);
    for (size_t i = first; i < first + count; ++i) Start(i, nodes_[i].hcas);
    // Ready when each has listed and found nothing to write (a DaemonSet's readiness).
    const auto deadline = Clock::now() + 300s;
    for (bool all = false; !all;) {
      if (Clock::now() > deadline) {
        Check("rollout", "restarted nodes not ready after 300 s (missing)", 1, 0);
        return;
      }
      all = true;
      for (size_t i = first; i < first + count && all; ++i) all = Ready(i);
      if (!all) std::this_thread::sleep_for(20ms);
    }
  };
  const auto t0 = Clock::now();
  const size_t one_by_one = std::min<size_t>(20, nodes_.size());
  for (size_t i = 0; i < one_by_one; ++i) restart(i, 1);
  const double per_node_s =
      std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(one_by_one);
  const auto t1 = Clock::now();
  const size_t batch = std::max<size_t>(1, nodes_.size() / 10);
  for (size_t i = 0; i < nodes_.size(); i += batch) restart(i, std::min(batch, nodes_.size() - i));
  const double ten_percent_s = std::chrono::duration<double>(Clock::now() - t1).count();
  const json c1 = Admin("/stats");
  const auto s = Series(from, c1["at"].get<double>() + 1000);
  std::printf(
      "rollout: maxUnavailable 1 over %zu nodes, %.2f s a node; 10 %% over all "
      "%zu nodes, %.1f s\n",
      one_by_one, per_node_s, nodes_.size(), ten_percent_s);
  Figure("rollout", "requests/s", PerSecond(s, "requests"));
  Check("rollout", "writes", Served(c0, c1, "write"), 0);
  Check("rollout", "LISTs served per restarted node",
        Served(c0, c1, "list") / static_cast<double>(one_by_one + nodes_.size()), 1);
  Check("rollout", "requests before their Retry-After", Delta(c0, c1, "earlyRetries"), 0);
}

void Bench::Wipe() {
  Mark();
  const json c0 = Admin("/stats");
  std::vector<std::string> names;
  for (const Node& n : nodes_) names.push_back(n.name);
  // 100 kubelets a second (10 s at 1,000 nodes, 50 s at 5,000).
  const auto spread = std::chrono::milliseconds(std::max<size_t>(10000, nodes_.size() * 10));
  const double from = Admin("/wipe-wave", {{"nodes", names}, {"spreadMs", spread.count()}})["at"];
  std::this_thread::sleep_for(spread);  // the wave's own spread (the server runs it)
  const json right = AwaitRight(120s, from);
  const json c1 = Admin("/stats");
  const auto s = Series(from, c1["at"].get<double>() + 1000);
  std::printf("kubelet wipe wave: %zu nodes' slices wiped over %.0f s\n", nodes_.size(),
              std::chrono::duration<double>(spread).count());
  if (right.is_null()) {
    Check("wipe", "nodes right 120 s after the wave (missing)", 1, 0);
    return;
  }
  std::vector<double> ms;
  for (const Node& n : nodes_) {
    ms.push_back(right[n.name]["lastWriteAt"].get<double>() -
                 right[n.name]["wipedAt"].get<double>());
  }
  Figure("wipe", "requests/s", PerSecond(s, "requests"));
  TimesToRight("wipe", ms, 2000);
  Check("wipe", "writes per slice wiped",
        Served(c0, c1, "write") / static_cast<double>(nodes_.size() * slices_per_node_), 1);
}

void Bench::Flap() {
  const size_t flapping = std::max<size_t>(1, nodes_.size() / 10);
  const double from = Mark();
  const int seconds = 20;
  std::vector<double> went_down(flapping);  // when each node's port first went down (server ms)
  // Ports flap on their own clocks: node i's changes come at i/flapping of the 2 s period,
  // then every 2 s.
  const auto start = Clock::now();
  for (int t = 0; t < seconds; t += 2) {
    for (size_t i = 0; i < flapping; ++i) {
      std::this_thread::sleep_until(start + std::chrono::seconds(t) + 2000ms * i / flapping);
      if (t == 0) went_down[i] = ServerMs();
      Publish(i, t % 4 == 0 ? kHcas - 1 : kHcas);
    }
  }
  std::this_thread::sleep_until(start + std::chrono::seconds(seconds));
  const json view = NodesNow();
  const double to = Now();
  std::vector<double> first_ms;
  double most = 0;
  double others = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const json& v = view[nodes_[i].name];
    if (i < flapping) {
      first_ms.push_back(v["firstWriteAt"].get<double>() < 0
                             ? 1e9
                             : v["firstWriteAt"].get<double>() - went_down[i]);
      most = std::max(most, v["writes"].get<double>());
    } else {
      others += v["writes"].get<double>();
    }
  }
  // Settled: every flapping node ends on its full pool.
  for (size_t i = 0; i < flapping; ++i) Publish(i, kHcas);
  const bool settled = !AwaitRight(60s).is_null();
  const auto s = Series(from, to);
  std::printf("port flaps: %zu nodes, one HCA down and up every 2 s for %d s\n", flapping, seconds);
  Figure("flap", "requests/s", PerSecond(s, "requests"));
  Figure("flap", "first change written, p50 / p99 (ms)",
         Cat(static_cast<long>(Percentile(first_ms, 50)), " / ",
             static_cast<long>(Percentile(first_ms, 99))));
  Check("flap", "first change written, slowest node (ms)", Percentile(first_ms, 100), 1000);
  Check("flap", "writes of the busiest flapping node in 20 s", most, 1 + seconds / 10.0);
  Check("flap", "writes of nodes not flapping", others, 0);
  Check("flap", "nodes not right 60 s after the flapping stopped", settled ? 0 : 1, 0);
}

void Bench::Overload() {
  const int seconds = EnvInt("FLEET_OVERLOAD_S", 60);
  const int cut = std::max(1, budget_ / 10);
  const json c0 = Admin("/stats");
  const double from =
      Admin("/apf", {{"budget", cut}, {"retryAfter", 4}, {"listDelayMs", 2000}})["at"];
  for (size_t i = 0; i < nodes_.size(); ++i) {
    Publish(i, nodes_[i].hcas == kHcas - 2 ? kHcas : kHcas - 2);  // a ConfigMap change
  }
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const json c1 = Admin("/stats");
  const double back =
      Admin("/apf", {{"budget", budget_}, {"retryAfter", 1}, {"listDelayMs", 200}})["at"];
  const json right = AwaitRight(120s, from);
  const double to = Now();
  const auto during = Series(from, back);
  const auto after = Series(back, to + 1000);
  std::printf(
      "overload: budget %d -> %d requests/s for %d s (Retry-After 4 s), every pool "
      "changed\n",
      budget_, cut, seconds);
  Figure("overload", "requests/s during", PerSecond(during, "requests"));
  Figure("overload", "429s/s during", PerSecond(during, "throttled"));
  Figure("overload", "requests/s after", PerSecond(after, "requests"));
  Check("overload", "requests before their Retry-After", Delta(c0, Admin("/stats"), "earlyRetries"),
        0);
  // Each of a node's two clients may come back once per Retry-After: what the 429s invited.
  Check("overload", "requests during, over the budget and the retries invited",
        Delta(c0, c1, "requests"),
        static_cast<double>(cut) * seconds +
            2.0 * static_cast<double>(nodes_.size()) * (seconds / 4.0 + 1));
  RightAfter("overload", right, back, 30000);
}

void Bench::Outage() {
  const int seconds = EnvInt("FLEET_OUTAGE_S", 60);
  const auto before = PerNodeRequests();
  const double from = Admin("/outage", {{"on", true}})["at"];
  std::vector<bool> changed(nodes_.size(), false);
  for (size_t i = 0; i < nodes_.size(); i += 10) {
    changed[i] = true;
    Publish(i, nodes_[i].hcas == kHcas ? kHcas - 2 : kHcas);  // while it is away
  }
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const auto during = PerNodeRequests();
  const double back = Admin("/outage", {{"on", false}})["at"];
  const json right = AwaitRight(120s, from, changed);
  // The fleet is back when every node watches again too (the next wave must not start with
  // the idle nodes' re-opens: at most kIdlePeriod after the return, plus its spread).
  double watching_at = -1;
  for (const auto deadline = Clock::now() + 90s; Clock::now() < deadline;) {
    const json stats = Admin("/stats");
    if (stats["watchesOpen"].get<size_t>() >= nodes_.size()) {
      watching_at = stats["at"].get<double>();
      break;
    }
    std::this_thread::sleep_for(1s);  // a sampling clock, as AwaitRight's
  }
  const double to = Now();
  auto after = Series(back, to + 1000);
  // The second of the return also holds the outage's last requests: every one of those was
  // refused, and none after it, so the refused ones are what to take out.
  if (!after.empty()) {
    after[0]["requests"] = after[0]["requests"].get<long>() - after[0]["refused"].get<long>();
  }
  std::vector<double> per_node;
  for (const Node& n : nodes_) {
    const std::string ua = Cat("fleet/", n.name);
    per_node.push_back(static_cast<double>(during.count(ua) ? during.at(ua) : 0) -
                       static_cast<double>(before.count(ua) ? before.at(ua) : 0));
  }
  std::printf("outage: every request refused for %d s, a tenth of the pools changed meanwhile\n",
              seconds);
  {
    // What three nodes did, as the server saw it (seconds since the outage began): one
    // whose pool changed, one whose did not, and the last changed one to be right.
    const json log = Admin("/requests");  // kept: the loop reads into it
    const double since = from + log["t0"].get<double>();
    size_t last = 0;
    if (!right.is_null()) {
      const auto at = [&](size_t n) { return right[nodes_[n].name]["lastWriteAt"].get<double>(); };
      for (size_t i = 0; i < nodes_.size(); ++i) {
        if (changed[i] && at(i) > at(last)) last = i;
      }
    }
    for (size_t i : {size_t{0}, size_t{1}, last}) {
      if (i >= nodes_.size()) continue;
      const std::string ua = Cat("fleet/", nodes_[i].name);
      std::string seen;
      for (const auto& r : log["requests"]) {
        const double t = r["t"].get<double>();
        if (r["ua"].get<std::string>() != ua || t < since) continue;
        char one[64];
        std::snprintf(one, sizeof one, " %.1fs:%s/%ld", (t - since) / 1000,
                      r["method"].get<std::string>().c_str(), r["code"].get<long>());
        seen += one;
      }
      Figure("outage",
             Cat(nodes_[i].name, changed[i] ? " (changed" : " (unchanged",
                 i == last ? ", the last right)" : ")", "'s requests"),
             seen);
    }
  }
  Figure("outage", "requests/s during", PerSecond(Series(from, back), "requests"));
  Figure("outage", "requests/s after", PerSecond(after, "requests"));
  Figure("outage", "requests per node during, p50", std::to_string(Percentile(per_node, 50)));
  Check("outage", "requests per node during, most", Percentile(per_node, 100), 8);
  Check("outage", "busiest second after the return (requests)",
        static_cast<double>(Peak(after, "requests")), static_cast<double>(nodes_.size()) / 10);
  RightAfter("outage", right, back, 10000);
  Figure("outage", "every node watching again, s after the return (sampled each second)",
         watching_at < 0 ? "not within 90 s" : Cat(static_cast<long>((watching_at - back) / 1000)));
}

void Bench::Steady() {
  // Simulated seconds: the publishers' clocks and the server's own timers (watch lifetimes,
  // bookmarks) run `rate` times as fast for the wave, so that the server's 5-10 minute
  // watch ends happen in it; a real second of it is `rate` of the fleet's.
  const int seconds = EnvInt("FLEET_STEADY_S", 600);
  const int rate = std::max(1, EnvInt("FLEET_STEADY_RATE", 10));
  const double from = Mark();
  const json c0 = Admin("/stats");
  const auto before = PerNodeRequests();
  SetRate(rate);
  std::this_thread::sleep_for(std::chrono::milliseconds(seconds * 1000 / rate));
  const json c1 = Admin("/stats");
  const auto after = PerNodeRequests();
  SetRate(1);
  double busiest = 0;  // one node in a loop would hide in a fleet's average
  for (const auto& [ua, n] : after) {
    busiest = std::max(busiest, static_cast<double>(n - (before.count(ua) ? before.at(ua) : 0)));
  }
  const auto s = Series(from, c1["at"].get<double>());
  std::printf("steady state: %d s of nothing (simulated: %d times real time)\n", seconds, rate);
  Figure("steady", "requests per real second", PerSecond(s, "requests"));
  Check("steady", "writes", Served(c0, c1, "write"), 0);
  Check("steady", "watches opened per node per 5 min",
        Served(c0, c1, "watch") / static_cast<double>(nodes_.size()) * 300 / seconds, 1);
  Check("steady", "requests of the busiest node", busiest, std::ceil(seconds / 300.0));
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each wave's figures as they come (a log)
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 100;
  const char* waves_env = std::getenv("FLEET_WAVES");
  const std::string waves = waves_env != nullptr && *waves_env != '\0'
                                ? waves_env
                                : "cold,rollout,wipe,flap,overload,outage,steady";
  auto want = [&](const std::string& w) {
    return Cat(",", waves, ",").find(Cat(",", w, ",")) != std::string::npos;
  };
  std::signal(SIGPIPE, SIG_IGN);  // a worker gone is said at the next command, as the plugin does
  // A worker's publishers hold 6 descriptors each; the API server, which inherits this
  // process's limit, 2 a node. Raised as far as allowed (the hard limit too, where root may).
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  const rlimit wanted{262144, 262144};
  if (::setrlimit(RLIMIT_NOFILE, &wanted) == 0) {
    files = wanted;
  } else {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  const size_t limit = static_cast<size_t>(files.rlim_cur);
  const size_t per_worker =
      std::min(kNodesPerWorker, limit > 256 ? (limit - 256) / kDescriptorsPerNode : 0);
  if (per_worker == 0 || 2 * static_cast<size_t>(nodes) + 256 > limit) {
    std::fprintf(stderr,
                 "fleet_bench: %d nodes need %zu file descriptors in the API server; the limit "
                 "here is %zu\n",
                 nodes, 2 * static_cast<size_t>(nodes) + 256, limit);
    return 2;
  }
  std::vector<std::unique_ptr<Worker>> workers;
  const size_t count =
      std::max<size_t>(1, (static_cast<size_t>(nodes) + per_worker - 1) / per_worker);
  for (size_t i = 0; i < count; ++i) workers.push_back(std::make_unique<Worker>(workers));
  Bench bench(nodes, std::move(workers));
  std::printf(
      "fleet_bench: %d nodes, %d HCAs a node, one API server (APF budget %d "
      "requests/s)\n",
      nodes, kHcas, EnvInt("FLEET_BUDGET", 1000));
  const auto start = Clock::now();
  bench.Cold();
  if (want("rollout")) bench.Rollout();
  if (want("wipe")) bench.Wipe();
  if (want("flap")) bench.Flap();
  if (want("overload")) bench.Overload();
  if (want("outage")) bench.Outage();
  if (want("steady")) bench.Steady();
  bench.PrintMemory();
  std::printf("fleet_bench: %d nodes, %.0f s, %d budget(s) broken\n", nodes,
              std::chrono::duration<double>(Clock::now() - start).count(), bench.failures());
  return bench.failures() == 0 ? 0 : 1;
}
