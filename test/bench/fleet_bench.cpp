// A fleet against one API server (issue 31 item 7): N nodes' slice publishers (the
// plugin's own SlicePublisher, one per simulated node, each with its own connections) and
// one fake kube-apiserver. The server goes into an outage (every request answered 503,
// watches cut), every node's pool changes meanwhile, and the server comes back. Printed:
// requests per second the fleet sends during the outage (without jitter, 100 nodes retried
// in the same half second at +1, +3, +7, +15 s), and after the return the requests per
// second and the time until every node's slices are right again.
//
//   fleet_bench [NODES=100] [OUTAGE_SECONDS=30]     (scripts/harden.sh fleet runs it)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "pkg/dra/resource_slices.h"
#include "pkg/dra/slice_publisher.h"
#include "pkg/text/cat.h"
#include "test/support/fake_apiserver.h"
#include "test/support/hca_fixture.h"

using namespace rdmadp;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

dra::WantedPool Pool(const std::string& node, int hcas) {
  pool::PoolModel p;
  p.resource.resource_name = "a";
  p.resource.rdma_hca_max = 8;
  for (int i = 0; i < hcas; ++i) {
    p.hcas.push_back(testing::ConnectXHca(Cat("0000:", 10 + i, ":00.0"), 0));
  }
  dra::SliceContext ctx;
  ctx.driver = "rdma.example.com";
  ctx.node_name = node;
  return {dra::PoolName(ctx, p.resource), dra::RenderResourceSlices(p, ctx)};
}

// Requests the server counted, sampled once a second for `seconds`: per-second deltas.
std::vector<int> Rates(testing::FakeApiServer& api, int seconds) {
  std::vector<int> out;
  int last = api.Stats()["requests"].get<int>();
  for (int i = 0; i < seconds; ++i) {
    std::this_thread::sleep_for(1s);  // a sampling clock, not synchronisation
    const int now = api.Stats()["requests"].get<int>();
    out.push_back(now - last);
    last = now;
  }
  return out;
}

void Print(const char* what, const std::vector<int>& rates) {
  const int max = rates.empty() ? 0 : *std::max_element(rates.begin(), rates.end());
  double sum = 0;
  for (int r : rates) sum += r;
  std::printf("%-34s max %5d req/s, mean %7.1f req/s   per second:", what, max,
              rates.empty() ? 0.0 : sum / static_cast<double>(rates.size()));
  for (int r : rates) std::printf(" %d", r);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 100;
  const int outage = argc > 2 ? std::atoi(argv[2]) : 30;
  testing::FakeApiServer api;
  std::vector<std::unique_ptr<dra::SlicePublisher>> fleet;
  for (int n = 0; n < nodes; ++n) {
    dra::PublisherOptions o;
    o.api = {api.server(), api.ca_file(), api.token_file(), "fleet-bench"};
    o.driver = "rdma.example.com";
    o.node_name = Cat("node-", n);
    auto p = dra::SlicePublisher::Start(o);
    if (!p.ok()) {
      std::fprintf(stderr, "publisher %d: %s\n", n, std::string(p.status().message()).c_str());
      return 1;
    }
    (*p)->Publish({Pool(o.node_name, 2)});
    fleet.push_back(std::move(*p));
  }
  if (!api.Await(Cat("stats.creates === ", nodes), 120s)["ok"].get<bool>()) {
    std::fprintf(stderr, "the fleet did not publish\n");
    return 1;
  }
  std::printf("fleet_bench: %d nodes, one fake API server, outage %d s\n", nodes, outage);
  Print("idle (published, watching)", Rates(api, 5));
  api.Admin("/outage", {{"on", true}});
  for (int n = 0; n < nodes; ++n) fleet[n]->Publish({Pool(Cat("node-", n), 3)});  // a change
  Print("outage (every request 503)", Rates(api, outage));
  const int updates_before = api.Stats()["updates"].get<int>();
  const auto back = Clock::now();
  api.Admin("/outage", {{"on", false}});
  const auto done = api.Await(Cat("stats.updates === ", updates_before + nodes), 120s);
  const double recovery_s = std::chrono::duration<double>(Clock::now() - back).count();
  std::printf("%-34s %.1f s until all %d nodes' slices were right (%s)\n", "recovery", recovery_s,
              nodes, done["ok"].get<bool>() ? "all" : "NOT all");
  Print("after recovery", Rates(api, 5));
  std::printf("%-34s %d writes for %d real changes\n", "writes", api.Stats()["writes"].get<int>(),
              2 * nodes);
  return done["ok"].get<bool>() ? 0 : 1;
}
