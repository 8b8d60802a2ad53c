// Start, recovery and change-propagation times of the real binary against the kubelet
// simulator, and the cost of big pools. Baselines in the same run: the bare exec of the
// binary (`--version`) for start, the periodic path for event-driven changes.
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <sys/mount.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "pkg/deviceplugin/resource_server.h"
#include "pkg/netlink/link_up.h"
#include "pkg/netlink/nl_socket.h"
#include "test/bench/bench_common.h"
#include "test/support/plugin_harness.h"

using namespace rdmadp;
using namespace rdmadp::bench;
using std::chrono::milliseconds;

namespace {

std::string FourResources(int interval, int slots_a = 1000) {
  return "{\"periodicUpdateInterval\": " + std::to_string(interval) + R"(, "configList": [
    {"resourceName": "hca_a", "rdmaHcaMax": )" +
         std::to_string(slots_a) +
         R"(, "selectors": {"linkTypes": ["infiniband"]}},
    {"resourceName": "hca_b", "rdmaHcaMax": 500, "selectors": {"linkTypes": ["ether"]}},
    {"resourceName": "hca_all", "rdmaHcaMax": 63, "selectors": {"vendors": ["15b3"]}},
    {"resourceName": "hca_numa0", "rdmaHcaMax": 100, "selectors": {"ifNames": ["ib0", "ib1"]}}
  ]})";
}

const std::vector<std::string> kNames = {"rdma/hca_a", "rdma/hca_b", "rdma/hca_all",
                                         "rdma/hca_numa0"};

bool AllRegistered(testing::KubeletSimulator& k, int times, milliseconds timeout) {
  return k.WaitRegistered(kNames, times, timeout);
}

size_t Snapshots(testing::KubeletSimulator& k, const std::string& name) {
  auto s = k.State();
  auto it = s.resources.find(name);
  return it == s.resources.end() ? 0 : it->second.snapshots.size();
}

bool WaitSnapshots(testing::KubeletSimulator& k, const std::string& name, size_t n,
                   milliseconds timeout) {
  return k.WaitFor(
      [&](const testing::SimState& s) {
        auto it = s.resources.find(name);
        return it != s.resources.end() && it->second.snapshots.size() >= n;
      },
      timeout);
}

void StartAndRecovery() {
  // exec -> all 4 registered and listed, against exec -> `--version` exits.
  std::vector<double> start_ms, exec_ms;
  for (int i = 0; i < 10; ++i) {
    auto t = Clock::now();
    testing::RunToExit({"--version"}, milliseconds(5000));
    exec_ms.push_back(MsSince(t));
    testing::PluginHarness h;
    h.AddDemoHcas();
    h.WriteConfig(FourResources(0));
    if (!h.kubelet().Start().ok()) return;
    t = Clock::now();
    h.StartPlugin({"--log-level=warning"});
    if (!AllRegistered(h.kubelet(), 1, milliseconds(10000))) return;
    start_ms.push_back(MsSince(t));
  }
  Row("start", "exec -> 4 resources registered, median", Median(start_ms), "ms",
      Fmt(Median(exec_ms)) + " ms exec+exit", "<= 100 ms", Verdict(Median(start_ms) <= 100));
  Row("start", "exec -> 4 resources registered, max", Percentile(start_ms, 100), "ms", "info",
      "info", "info");

  testing::PluginHarness h;
  h.AddDemoHcas();
  h.WriteConfig(FourResources(0));
  if (!h.kubelet().Start().ok()) return;
  h.StartPlugin({"--log-level=warning"});
  if (!AllRegistered(h.kubelet(), 1, milliseconds(10000))) return;
  std::vector<double> restart_ms;
  for (int round = 2; round <= 21; ++round) {
    if (!h.kubelet().Restart().ok()) return;
    const auto t = Clock::now();  // the new kubelet listens from here
    if (!AllRegistered(h.kubelet(), round, milliseconds(5000))) return;
    restart_ms.push_back(MsSince(t));
  }
  Row("recovery", "kubelet restart -> re-registered, median", Median(restart_ms), "ms",
      "5000 ms Go plugin poll", "<= 250 ms", Verdict(Median(restart_ms) <= 250));
  Row("recovery", "kubelet restart -> re-registered, max", Percentile(restart_ms, 100), "ms",
      "5000 ms Go plugin poll", "<= 250 ms", Verdict(Percentile(restart_ms, 100) <= 250));

  // SIGHUP with hca_a's rdmaHcaMax changed: that resource restarts and re-registers.
  std::vector<double> hup_ms;
  for (int i = 0; i < 10; ++i) {
    const int before = h.kubelet().State().resources["rdma/hca_a"].registrations;
    h.WriteConfig(FourResources(0, 1000 + i + 1));
    const auto t = Clock::now();
    h.plugin().Signal(SIGHUP);
    const bool ok = h.kubelet().WaitFor(
        [&](const testing::SimState& s) {
          const auto& r = s.resources.at("rdma/hca_a");
          return r.registrations > before && r.capacity == 1000 + i + 1;
        },
        milliseconds(5000));
    if (!ok) return;
    hup_ms.push_back(MsSince(t));
  }
  Row("recovery", "SIGHUP -> changed resource re-registered, median", Median(hup_ms), "ms",
      "Go plugin: no reload", "<= 250 ms", Verdict(Median(hup_ms) <= 250));
}

void PeriodicChange() {
  testing::PluginHarness h;
  h.AddDemoHcas();
  h.WriteConfig(FourResources(1));
  if (!h.kubelet().Start().ok()) return;
  h.StartPlugin({"--log-level=warning"});
  if (!AllRegistered(h.kubelet(), 1, milliseconds(10000))) return;
  std::mt19937 rng(42);
  std::vector<double> delay;
  for (int i = 0; i < 8; ++i) {
    // A change at a random moment of the 1 s period.
    std::this_thread::sleep_for(milliseconds(rng() % 1000));  // placement, not synchronisation
    const size_t n = Snapshots(h.kubelet(), "rdma/hca_numa0");
    const auto t = Clock::now();
    h.node().SetPortState("mlx5_0", 1, i % 2 == 0 ? "1: DOWN" : "4: ACTIVE");
    h.node().SetPortState("mlx5_1", 1, i % 2 == 0 ? "1: DOWN" : "4: ACTIVE");
    if (!WaitSnapshots(h.kubelet(), "rdma/hca_numa0", n + 1, milliseconds(3000))) return;
    delay.push_back(MsSince(t));
  }
  Row("change -> kubelet", "periodic (1 s interval), max", Percentile(delay, 100), "ms",
      "60000 ms Go plugin default interval", "<= 1050 ms", Verdict(Percentile(delay, 100) <= 1050));
  Row("change -> kubelet", "periodic (1 s interval), median", Median(delay), "ms", "info", "info",
      "info");
}

void EventChange() {
  if (::unshare(CLONE_NEWNET | CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    Row("change -> kubelet", "link event (skipped: no private netns)", 0, "ms", "-", "-", "info");
    return;
  }
  netlink::NlSocket sock(nl_socket_alloc());
  nl_connect(sock.get(), NETLINK_ROUTE);
  rtnl_link_veth_add(sock.get(), "rdmadpb0", "rdmadpb1", getpid());
  testing::PluginHarness h;
  h.AddDemoHcas();
  h.WriteConfig(FourResources(0));  // no periodic rescans: only events
  if (!h.kubelet().Start().ok()) return;
  h.StartPlugin({"--log-level=warning"});
  if (!AllRegistered(h.kubelet(), 1, milliseconds(10000))) return;
  const std::string sys = h.root() + "/netns-sys";
  std::filesystem::create_directories(sys);
  const bool have_sysfs = ::mount("sysfs", sys.c_str(), "sysfs", 0, nullptr) == 0;
  if (std::getenv("BENCH_DEBUG")) {
    std::fprintf(stderr, "sysfs mounted: %d, uevent file exists: %d\n", have_sysfs,
                 static_cast<int>(std::filesystem::exists(sys + "/class/net/rdmadpb1/uevent")));
  }
  std::vector<double> link_ms, uevent_ms;
  for (int i = 0; i < 20; ++i) {
    const bool uevent = i % 2 == 1 && have_sysfs;
    const size_t n = Snapshots(h.kubelet(), "rdma/hca_numa0");
    if (i % 2 == 1 && !have_sysfs) continue;
    // Every sample changes the pool (so a rescan has something to push), then fires one
    // kernel event: a link toggle on even samples, a uevent on odd ones.
    const char* state = i % 2 == 0 ? "1: DOWN" : "4: ACTIVE";
    h.node().SetPortState("mlx5_0", 1, state);
    h.node().SetPortState("mlx5_1", 1, state);
    const auto t = Clock::now();
    if (uevent) {
      std::ofstream(sys + "/class/net/rdmadpb1/uevent") << "add";
    } else {
      // Toggle the link state: each toggle is one RTM_NEWLINK.
      if (!netlink::SetLinkAdminState("rdmadpb0", i % 4 == 0).ok()) return;
    }
    if (!WaitSnapshots(h.kubelet(), "rdma/hca_numa0", n + 1, milliseconds(3000))) {
      if (!uevent) link_ms.push_back(3000);
      continue;
    }
    (uevent ? uevent_ms : link_ms).push_back(MsSince(t));
  }
  if (have_sysfs) ::umount2(sys.c_str(), MNT_DETACH);
  Row("change -> kubelet", "link event (RTNLGRP_LINK), median", Median(link_ms), "ms",
      "1000 ms periodic (1 s)", "<= 100 ms", Verdict(Median(link_ms) <= 100));
  Row("change -> kubelet", "link event (RTNLGRP_LINK), max", Percentile(link_ms, 100), "ms", "info",
      "<= 100 ms", Verdict(Percentile(link_ms, 100) <= 100));
  if (!uevent_ms.empty()) {
    Row("change -> kubelet", "kernel uevent, median", Median(uevent_ms), "ms",
        "1000 ms periodic (1 s)", "<= 100 ms", Verdict(Median(uevent_ms) <= 100));
  }
}

void BigPools() {
  sysfs::NodeInventory inv;
  for (int i = 0; i < 4; ++i) {
    sysfs::PciFunction fn;
    fn.address = "0000:1" + std::to_string(i) + ":00.0";
    fn.rdma_capable = true;
    fn.numa_node = i % 2;
    fn.rdma_devices = {{"mlx5_" + std::to_string(i), {{1, sysfs::PortState::kActive}}}};
    fn.char_devices = {"umad" + std::to_string(i), "uverbs" + std::to_string(i)};
    inv.functions.push_back(fn);
  }
  for (int64_t slots : {10000, 100000}) {
    config::ResourceConfig rc;
    rc.resource_name = "big";
    rc.rdma_hca_max = slots;
    auto t = Clock::now();
    auto snap = pool::PoolSnapshot::Build(rc, inv);
    const double build_ms = MsSince(t);
    testing::TempDir tmp;
    deviceplugin::ResourceServerOptions opts;
    opts.socket_path = tmp.path() + "/big.sock";
    auto srv = deviceplugin::ResourceServer::Start(opts, snap);
    if (!srv.ok()) return;
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(4 * 1024 * 1024);  // the kubelet's limit
    auto ch = grpc::CreateCustomChannel("unix://" + opts.socket_path,
                                        grpc::InsecureChannelCredentials(), args);
    ch->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(5));
    auto stub = v1beta1::DevicePlugin::NewStub(ch);
    grpc::ClientContext ctx;
    t = Clock::now();
    auto reader = stub->ListAndWatch(&ctx, v1beta1::Empty());
    v1beta1::ListAndWatchResponse msg;
    const bool got = reader->Read(&msg);
    const double first_ms = MsSince(t);
    ctx.TryCancel();
    const std::string tag = "big pool " + std::to_string(slots);
    const double bytes = static_cast<double>(snap->ListResponse().ByteSizeLong());
    Row(tag, "build snapshot", build_ms, "ms", "info", "info", "info");
    Row(tag, "first ListAndWatch received (4 MiB limit)", first_ms, "ms", "info", "info",
        got && msg.devices_size() == slots ? "ok" : "MISSED");
    Row(tag, "message size", bytes / 1024, "KiB", "4096 KiB kubelet limit", "< 4096 KiB",
        Verdict(bytes < 4 * 1024 * 1024));
  }
}

// Peak RSS of the real plugin at the largest configs validate accepts (kMaxTotalSlots in
// all), registered with the kubelet simulator: the DaemonSet's memory limit comes from it.
void PeakRssAtTheLimit() {
  constexpr double kLimitMib = 128;  // images/base/daemonset.yaml
  for (int resources : {1, 2}) {
    testing::PluginHarness h;
    h.AddDemoHcas();
    std::string config = R"({"periodicUpdateInterval": 0, "configList": [)";
    std::vector<std::string> names;
    for (int i = 0; i < resources; ++i) {
      config += (i ? "," : "") + std::string(R"({"resourceName": "big)") + std::to_string(i) +
                R"(", "rdmaHcaMax": 100000, "selectors": {"vendors": ["15b3"]}})";
      names.push_back("rdma/big" + std::to_string(i));
    }
    h.WriteConfig(config + "]}");
    if (!h.kubelet().Start().ok()) return;
    h.StartPlugin();
    const bool ok = h.kubelet().WaitRegistered(names, 1, milliseconds(30000));
    for (int i = 0; i < 20 && ok; ++i) {
      (void)h.kubelet().Allocate(names[0], {std::to_string(i * 4999)});
    }
    const double mib = static_cast<double>(PeakRssKib(h.plugin().pid())) / 1024;
    Row("memory", std::to_string(resources) + " x 100,000 slots: peak RSS", mib, "MiB",
        "validate accepts at most 200,000 slots in all", "< 128 MiB limit",
        Verdict(ok && mib < kLimitMib));
  }
}

}  // namespace

int main() {
  PeakRssAtTheLimit();
  StartAndRecovery();
  PeriodicChange();
  BigPools();
  EventChange();  // last: it moves this process into private namespaces
  return 0;
}
