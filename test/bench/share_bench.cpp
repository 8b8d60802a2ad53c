// 8,000 shares on one node (docs/performance.md, "8,000 shares on a node"): 8 HCAs with
// 1,000 shares each, one resource per NIC as a managed cloud's RDMA plugin publishes them,
// through each front end, on the same fake node, kubelet simulator and fake kube-apiserver
// as the tests:
//  - device plugin (8 resources of rdmaHcaMax 1000): exec -> every resource registered with
//    its first ListAndWatch (1,000 devices each) and the snapshot's size; Allocate p50/p99
//    through the kubelet simulator, one device a call, every resource in turn; and the same
//    8,000 as one deviceModel perHca resource (one list, a container given one NIC), with
//    GetPreferredAllocation's time to pick 1 of a NUMA node's 4,000;
//  - DRA perHca (8 pools of one HCA that takes 1,000 shares through consumable capacity) and
//    slots (8 pools of 1,000 slot devices: ResourceSlices of at most 64 devices with
//    taints): exec -> every slice published (the first snapshot the scheduler has), the
//    writes, the worst writes in any second (the budget: 32 at once, then one a second) and
//    the slices' bytes; Prepare p50/p99 of distinct one-share claims against the same run's
//    bare GET of a claim.
//
//   share_bench    (BENCH_SHARE_ALLOCATES, default 2000; BENCH_SHARE_PREPARES per DRA model,
//                   default 100: their claim status drains at the budget's 1/s;
//                   BENCH_SHARE_DRA=0: the device plugin's rows only)
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "pkg/dra/status/status_writer.h"
#include "pkg/kube/rest_client.h"
#include "pkg/text/cat.h"
#include "test/bench/bench_common.h"
#include "test/support/dra_kubelet.h"
#include "test/support/fake_apiserver.h"
#include "test/support/plugin_harness.h"

using namespace rdmadp;
using namespace rdmadp::bench;
using namespace std::chrono_literals;

namespace {

constexpr int kHcas = 8;
constexpr int kShares = 1000;
constexpr char kDriver[] = "rdma.example.com";

int EnvInt(const char* name, int fallback) {
  const char* n = std::getenv(name);
  return n != nullptr ? std::atoi(n) : fallback;
}

// One entry per NIC: ib<i> alone, 1,000 shares. `frontend`: "" (device plugin) or a DRA
// device model.
std::string Config(const std::string& model, int shares = kShares) {
  std::string entries;
  for (int i = 0; i < kHcas; ++i) {
    Append(entries, i == 0 ? "" : ",\n", R"(    {"resourceName": "nic)", i, R"(", "rdmaHcaMax": )",
           shares, R"(, "selectors": {"ifNames": ["ib)", i, R"("]})",
           model.empty() ? "" : Cat(R"(, "frontend": "dra", "deviceModel": ")", model, "\""), "}");
  }
  return Cat("{\"periodicUpdateInterval\": 0, \"configList\": [\n", entries, "\n]}");
}

void AddHcas(testing::PluginHarness& h) {
  for (int i = 0; i < kHcas; ++i) h.node().Add(testing::FakeNode::ConnectX(i, i / 4, true));
}

// deviceModel perHca: one resource over the 8 NICs, each its own 1,000 devices (8,000 in one
// list, each with its NIC's NUMA node).
std::string PerHcaConfig() {
  return Cat(R"({"periodicUpdateInterval": 0, "configList": [{"resourceName": "nics", )",
             R"("rdmaHcaMax": )", kShares,
             R"(, "deviceModel": "perHca", "selectors": {"vendors": ["15b3"]}}]})");
}

struct DevicePluginFigures {
  double first_ms = 0;  // exec -> every resource registered with its first snapshot
  size_t devices = 0;
  size_t snapshot_bytes = 0;  // the largest first snapshot
  std::vector<double> allocate_us;
  std::vector<double> preferred_us;  // GetPreferredAllocation of 1 among 4,000
};

// The device plugin with `shares` per NIC (one resource each), or with PerHcaConfig() when
// `per_hca`: its figures, or nullopt when it did not serve.
std::optional<DevicePluginFigures> DevicePlugin(int shares, bool per_hca = false) {
  testing::PluginHarness h;
  AddHcas(h);
  h.WriteConfig(per_hca ? PerHcaConfig() : Config("", shares));
  if (!h.kubelet().Start().ok()) return std::nullopt;
  std::vector<std::string> resources;
  for (int i = 0; i < kHcas; ++i) resources.push_back(Cat("rdma/nic", i));
  if (per_hca) resources = {"rdma/nics"};
  DevicePluginFigures f;
  const auto start = Clock::now();
  h.StartPlugin({});
  if (!h.kubelet().WaitRegistered(resources, 1, 60s)) {
    std::fprintf(stderr, "the device plugin did not register:\n%s", h.PluginLog().c_str());
    return std::nullopt;
  }
  f.first_ms = MsSince(start);
  std::vector<std::vector<std::string>> ids(resources.size());
  h.kubelet().WaitFor(
      [&](const testing::SimState& s) {
        for (size_t i = 0; i < resources.size(); ++i) {
          const auto& snap = s.resources.at(resources[i]).snapshots.front();
          f.snapshot_bytes = std::max(f.snapshot_bytes, snap.ByteSizeLong());
          f.devices += static_cast<size_t>(snap.devices_size());
          for (const auto& d : snap.devices()) ids[i].push_back(d.id());
        }
        return true;
      },
      1s);
  const int calls = EnvInt("BENCH_SHARE_ALLOCATES", 2000);
  for (int c = 0; c < calls; ++c) {
    // One device a call, every NIC in turn (perHca: its IDs are NIC by NIC in the list).
    const size_t r = per_hca ? 0 : static_cast<size_t>(c % kHcas);
    const size_t share = static_cast<size_t>(c / kHcas) % kShares;
    const std::string& id = per_hca ? ids[0][static_cast<size_t>(c % kHcas) * kShares + share]
                                    : ids[r][share % ids[r].size()];
    const auto t = Clock::now();
    auto a = h.kubelet().Allocate(resources[r], {id});
    f.allocate_us.push_back(MsSince(t) * 1000);
    if (!a.ok()) {
      std::fprintf(stderr, "Allocate failed: %s\n", std::string(a.status().message()).c_str());
      return std::nullopt;
    }
  }
  // What a kubelet asks under single-numa-node: one of NUMA node 0's 4,000 devices (NICs 0-3,
  // 0000:10:00.0 ..). The slots run asks its first resource the same: it answers at once with
  // nothing preferred, so its time is the transport's, the same run's baseline.
  std::vector<std::string> node0;
  for (int nic = 0; nic < 4; ++nic) {
    for (int share = 0; share < kShares; ++share) {
      char id[32];
      std::snprintf(id, sizeof id, "0000:%02x:00.0-%d", 0x10 + nic, share);
      node0.push_back(id);
    }
  }
  for (int c = 0; c < calls / 10; ++c) {
    const auto t = Clock::now();
    auto p = h.kubelet().GetPreferredAllocation(resources[0], node0, {}, 1);
    f.preferred_us.push_back(MsSince(t) * 1000);
    if (!p.ok() || p->container_responses(0).deviceids_size() != (per_hca ? 1 : 0)) {
      std::fprintf(stderr, "GetPreferredAllocation failed\n");
      return std::nullopt;
    }
  }
  return f;
}

// 8 x 1,000 against 8 x 1 in the same run, through the kubelet simulator's own client.
bool DevicePlugins() {
  const auto one = DevicePlugin(1);
  const auto full = DevicePlugin(kShares);
  if (!one || !full) return false;
  const std::string base = "8 x 1 share, same run: ";
  Row("8000 shares", "device plugin: exec -> 8 resources registered, first ListAndWatch each",
      full->first_ms, "ms", Cat(base, Fmt(one->first_ms), " ms"), "info", "info");
  Row("8000 shares", "device plugin: devices advertised", static_cast<double>(full->devices), "",
      "", "8000", Verdict(full->devices == kHcas * kShares));
  Row("8000 shares", "device plugin: ListAndWatch snapshot of one resource",
      full->snapshot_bytes / 1024.0, "KiB", "4096 KiB kubelet limit", "< 4096",
      Verdict(full->snapshot_bytes < 4096 * 1024));
  Row("8000 shares", "device plugin: Allocate p50", Median(full->allocate_us), "us",
      Cat(base, Fmt(Median(one->allocate_us), 0), " us"), "info", "info");
  Row("8000 shares", "device plugin: Allocate p99", Percentile(full->allocate_us, 99), "us",
      Cat(base, Fmt(Percentile(one->allocate_us, 99), 0), " us"), "info", "info");
  // deviceModel perHca: one resource, 8 x 1,000 devices, a container given one NIC.
  const auto per_hca = DevicePlugin(kShares, true);
  if (!per_hca) return false;
  const std::string slots = "slots (8 resources x 1,000), same run: ";
  Row("8000 shares", "device plugin perHca: exec -> registered, first ListAndWatch",
      per_hca->first_ms, "ms", Cat(slots, Fmt(full->first_ms), " ms"), "info", "info");
  Row("8000 shares", "device plugin perHca: devices advertised",
      static_cast<double>(per_hca->devices), "", "", "8000",
      Verdict(per_hca->devices == kHcas * kShares));
  Row("8000 shares", "device plugin perHca: ListAndWatch snapshot (all 8,000)",
      per_hca->snapshot_bytes / 1024.0, "KiB", "4096 KiB kubelet limit", "< 4096",
      Verdict(per_hca->snapshot_bytes < 4096 * 1024));
  Row("8000 shares", "device plugin perHca: Allocate p50", Median(per_hca->allocate_us), "us",
      Cat(slots, Fmt(Median(full->allocate_us), 0), " us"), "info", "info");
  Row("8000 shares", "device plugin perHca: Allocate p99", Percentile(per_hca->allocate_us, 99),
      "us", Cat(slots, Fmt(Percentile(full->allocate_us, 99), 0), " us"), "info", "info");
  const std::string bare = "slots' answer without preference (the transport), same run: ";
  Row("8000 shares", "device plugin perHca: GetPreferredAllocation p50 (1 of 4,000)",
      Median(per_hca->preferred_us), "us", Cat(bare, Fmt(Median(full->preferred_us), 0), " us"),
      "info", "info");
  Row("8000 shares", "device plugin perHca: GetPreferredAllocation p99 (1 of 4,000)",
      Percentile(per_hca->preferred_us, 99), "us",
      Cat(bare, Fmt(Percentile(full->preferred_us, 99), 0), " us"), "info", "info");
  return true;
}

bool Dra(const std::string& model) {
  testing::FakeApiServer api;
  testing::DraKubelet dra([&](const std::string& driver) { api.WipeNodeSlices("n1", driver); });
  testing::PluginHarness h;
  AddHcas(h);
  h.WriteConfig(Config(model));
  const std::string cdi = h.root() + "/cdi";
  std::filesystem::create_directories(cdi);
  h.kubelet().EnableWatcher();
  h.kubelet().SetHandler("DRAPlugin", &dra);
  if (!h.kubelet().Start().ok()) return false;
  std::vector<std::string> flags = api.PluginFlags();
  for (const auto& f : {Cat("--dra-driver-name=", kDriver), std::string("--node-name=n1"),
                        "--cdi-spec-dir=" + cdi, std::string("--metrics-address=127.0.0.1:0")}) {
    flags.push_back(f);
  }
  const auto start = Clock::now();
  h.StartPlugin(flags);
  const std::string in_sync = Cat("rdma_shared_dp_dra_slices_in_sync{driver=\"", kDriver, "\"}");
  if (h.AwaitMetric(in_sync, 1, 300s) != 1) {
    std::fprintf(stderr, "%s: the slices were not published:\n%s", model.c_str(),
                 h.PluginLog().c_str());
    return false;
  }
  const double published = MsSince(start);
  const nlohmann::json stats = api.Stats();
  const nlohmann::json slices = api.Slices();
  size_t devices = 0;
  for (const auto& s : slices) devices += s["spec"]["devices"].size();
  const std::string what = Cat("DRA ", model, ": ");
  Row("8000 shares", Cat(what, "exec -> every slice published"), published, "ms",
      Cat(slices.size(), " slices, ", devices, " devices"), "info", "info");
  Row("8000 shares", Cat(what, "slices' bytes"), slices.dump().size() / 1024.0, "KiB", "", "info",
      "info");
  Row("8000 shares", Cat(what, "API writes for the first publish"), stats["writes"].get<double>(),
      "writes", "one per slice", Cat(slices.size()),
      Verdict(stats["writes"].get<size_t>() == slices.size()));
  Row("8000 shares", Cat(what, "worst API writes in any second"),
      stats["maxWritesPerSecond"].get<double>(), "writes/s", "the budget: 32 at once, then 1/s",
      "<= 32", Verdict(stats["maxWritesPerSecond"].get<int>() <= 32));
  if (!dra.WaitFor([](const auto& s) { return s.registrations == 1; }, 20s)) return false;

  // Distinct one-share claims, each prepared once as a node's pods are.
  auto client = kube::RestClient::Create({api.server(), api.ca_file(), api.token_file(), "bench"});
  if (!client.ok()) return false;
  std::vector<double> get_us, prepare_us;
  const int calls = EnvInt("BENCH_SHARE_PREPARES", 100);
  for (int c = 0; c < calls; ++c) {
    const int nic = c % kHcas;
    nlohmann::json result = {{"request", "rdma"},
                             {"driver", kDriver},
                             {"pool", Cat("n1/nic", nic)},
                             {"device", model == "slots" ? Cat("slot-", c / kHcas)
                                                         : Cat("hca-0000-", 10 + nic, "-00-0")}};
    if (model != "slots") {
      char share[40];
      std::snprintf(share, sizeof(share), "00000000-0000-0000-0000-%012d", c);
      result["shareID"] = share;
    }
    nlohmann::json claim = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceClaim"},
        {"metadata", {{"name", Cat("pod-", c)}, {"namespace", "ml"}}},
        {"spec",
         {{"devices",
           {{"requests", nlohmann::json::array(
                             {{{"name", "rdma"}, {"exactly", {{"deviceClassName", "nic"}}}}})}}}}},
        {"status",
         {{"allocation", {{"devices", {{"results", nlohmann::json::array({result})}}}}}}}};
    claim = api.Admin("/claims", claim);
    if (!claim.contains("metadata")) {
      std::fprintf(stderr, "claim refused: %s\n", claim.dump().c_str());
      return false;
    }
    testing::drav1::Claim k;
    k.set_namespace_("ml");
    k.set_name(Cat("pod-", c));
    k.set_uid(claim["metadata"]["uid"].get<std::string>());
    auto t = Clock::now();
    auto r = (*client)->Call("GET",
                             Cat("/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/pod-", c));
    get_us.push_back(MsSince(t) * 1000);
    t = Clock::now();
    auto p = dra.Prepare(kDriver, {k});
    prepare_us.push_back(MsSince(t) * 1000);
    if (!r.ok() || !p.ok() || !p->claims().begin()->second.error().empty()) {
      std::fprintf(stderr, "prepare failed: %s\n",
                   p.ok() ? p->claims().begin()->second.error().c_str() : "transport");
      return false;
    }
  }
  Row("8000 shares", Cat(what, "Prepare p50"), Median(prepare_us), "us",
      Cat("bare GET ", Fmt(Median(get_us), 0), " us"), "info", "info");
  Row("8000 shares", Cat(what, "Prepare p99"), Percentile(prepare_us, 99), "us",
      Cat("bare GET ", Fmt(Percentile(get_us, 99), 0), " us"), "info", "info");
  // Their status.devices, within the write budget the slices share.
  const std::string pending =
      Cat("rdma_shared_dp_dra_claim_status_pending{driver=\"", kDriver, "\"}");
  const auto prepared = Clock::now();
  if (h.AwaitMetric(pending, 0, 600s) != 0) return false;
  const auto written = api.Stats()["claimStatusWrites"].get<int>();
  Row("8000 shares",
      Cat(what, "claim status of ", calls, " claims prepared back to back: all written"),
      MsSince(prepared) / 1000.0, "s", Cat(written, " writes"),
      Cat("~", std::max(0, calls - dra::kStatusBudgetReserve),
          " s after the slices' writes (16 at once, then 1/s)"),
      Verdict(written == calls));
  return true;
}

}  // namespace

int main() {
  if (!DevicePlugins()) return 1;
  if (EnvInt("BENCH_SHARE_DRA", 1) == 0) return 0;  // the device plugin's rows only
  for (const char* model : {"perHca", "slots"}) {
    if (!Dra(model)) return 1;
  }
  return 0;
}
