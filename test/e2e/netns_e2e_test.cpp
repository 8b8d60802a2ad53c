// Event-driven rescans through real kernel interfaces: a veth link event (RTNLGRP_LINK) and
// a real uevent, inside private network and mount namespaces that this test process
// enters (the plugin it starts inherits them). Skipped, with the reason, where the kernel
// or the sandbox does not allow namespaces.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "pkg/netlink/link_up.h"
#include "pkg/netlink/nl_socket.h"
#include "test/support/fs_wait.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
constexpr char kA[] = "rdma/hca_shared_devices_a";

// Enters the namespaces once for the whole binary; returns "" or why it could not.
const std::string& EnterPrivateNamespaces() {
  static const std::string why = []() -> std::string {
    if (::unshare(CLONE_NEWNET | CLONE_NEWNS) != 0) {
      return std::string("unshare(CLONE_NEWNET|CLONE_NEWNS): ") + std::strerror(errno);
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return std::string("making mounts private: ") + std::strerror(errno);
    }
    netlink::NlSocket sock(nl_socket_alloc());
    nl_connect(sock.get(), NETLINK_ROUTE);
    // "ib0" and "ib1" are also the netdevs of the fake node's first two HCAs (pool a):
    // events on these real links are events on PCI functions' netdevs as far as the plugin
    // can tell. Two pairs, so that toggling one never changes the other's carrier.
    for (const char* name : {"ib0", "ib1"}) {
      const std::string peer = std::string("rdmadp-") + name;
      if (int rc = rtnl_link_veth_add(sock.get(), name, peer.c_str(), getpid()); rc < 0) {
        return std::string("creating a veth pair: ") + nl_geterror(rc);
      }
    }
    return "";
  }();
  return why;
}

class NetnsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EnterPrivateNamespaces().empty()) {
      GTEST_SKIP() << "needs a private network namespace: " << EnterPrivateNamespaces();
    }
    h.AddDemoHcas();
    // Periodic rescans off: only kernel events can make the plugin look again.
    h.WriteConfig(PluginHarness::DemoConfig(/*periodic_update_interval=*/0));
    ASSERT_TRUE(h.kubelet().Start().ok());
    ASSERT_TRUE(netlink::SetLinkUp("lo").ok());  // for the metrics endpoint
    h.StartPlugin({"--metrics-address=127.0.0.1:0", "--log-level=debug"});
    ASSERT_TRUE(h.kubelet().WaitFor(
        [](const SimState& s) {
          auto it = s.resources.find(kA);
          return it != s.resources.end() && !it->second.snapshots.empty();
        },
        milliseconds(10000)));
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "---- plugin log ----\n" << h.PluginLog();
  }
  bool LogShows(const std::string& text) {
    return WaitForFiles(
        h.root(), [&] { return h.PluginLog().find(text) != std::string::npos; },
        milliseconds(2000));
  }
  bool WaitHealth(const std::string& health, milliseconds timeout) {
    return h.kubelet().WaitFor(
        [&](const SimState& s) {
          const auto& snaps = s.resources.at(kA).snapshots;
          return snaps.size() > 1 && snaps.back().devices(0).health() == health;
        },
        timeout);
  }
  // Flips the link's admin state: one RTM_NEWLINK whatever state an earlier test left.
  static bool ToggleLink(const std::string& name) {
    auto up = netlink::IsLinkUp(name);
    return up.ok() && netlink::SetLinkAdminState(name, !*up).ok();
  }
  // GET /metrics from the plugin (its port is in the log).
  std::string Scrape() {
    std::smatch m;
    const std::string log = h.PluginLog();
    if (!std::regex_search(log, m, std::regex("metrics on http://127.0.0.1:([0-9]+)/metrics"))) {
      return "";
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(m[1])));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string answer;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      const std::string req = "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n";
      if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
        char buf[4096];
        for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) answer.append(buf, n);
      }
    }
    ::close(fd);
    return answer;
  }
  // Polls /metrics (50 ms apart, 2 s at most) until `series` reads `value`.
  bool AwaitMetricValue(const std::string& series, int64_t value) {
    const auto deadline = Clock::now() + milliseconds(2000);
    while (MetricValue(Scrape(), series) != value) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return true;
  }
  // The value of the sample named `series` (name and labels) in `metrics`; -1 if absent.
  static int64_t MetricValue(const std::string& metrics, const std::string& series) {
    const std::string key = "\n" + series + " ";
    const size_t at = metrics.find(key);
    return at == std::string::npos ? -1 : std::stoll(metrics.substr(at + key.size()));
  }
  PluginHarness h;
};

// How fast is a figure (`[measured]`; target 100 ms), not a bound in CI.
TEST_F(NetnsE2E, LinkEventsReachTheKubelet) {
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  h.node().SetPortState("mlx5_1", 1, "1: DOWN");
  const auto start = Clock::now();
  ASSERT_TRUE(ToggleLink("ib0"));
  ASSERT_TRUE(ToggleLink("ib1"));
  ASSERT_TRUE(WaitHealth("Unhealthy", milliseconds(2000)));
  const auto ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
  std::cout << "[measured] link event -> snapshot at the kubelet: " << ms << " ms\n";
  // The plugin logs the change right after pushing it: wait for the line, do not race it.
  EXPECT_TRUE(LogShows("pool changed (link event ib"));
}

// An event on a PCI function's netdev re-reads that function only (docs/reliability.md; a
// full rescan read all 2,004 functions of a big node per event). Both HCAs of pool
// a go down in sysfs; the event on ib0 re-reads mlx5_0 alone, so the pool stays Healthy
// (mlx5_1 is not looked at) until ib1's own event.
TEST_F(NetnsE2E, AnEventReReadsOnlyItsFunction) {
  const uint64_t initial = MetricValue(Scrape(), "rdma_shared_dp_sysfs_functions_read_total");
  EXPECT_EQ(initial, 5);  // the start's full scan: four ConnectX and one Intel function
  const size_t pushed = h.kubelet().State().resources.at(kA).snapshots.size();
  h.node().SetPortState("mlx5_0", 1, "1: DOWN");
  h.node().SetPortState("mlx5_1", 1, "1: DOWN");
  ASSERT_TRUE(ToggleLink("ib0"));
  ASSERT_TRUE(AwaitMetricValue("rdma_shared_dp_sysfs_functions_read_total", initial + 1));
  const std::string after_ib0 = Scrape();
  EXPECT_EQ(MetricValue(after_ib0, "rdma_shared_dp_sysfs_functions_read_total"), initial + 1);
  EXPECT_EQ(MetricValue(after_ib0, "rdma_shared_dp_rescans_total{trigger=\"link\"}"), 1);
  EXPECT_EQ(h.kubelet().State().resources.at(kA).snapshots.size(), pushed);  // still Healthy

  ASSERT_TRUE(ToggleLink("ib1"));
  ASSERT_TRUE(WaitHealth("Unhealthy", milliseconds(2000)));
  const std::string metrics = Scrape();
  EXPECT_EQ(MetricValue(metrics, "rdma_shared_dp_sysfs_functions_read_total"), initial + 2);
  EXPECT_EQ(MetricValue(metrics, "rdma_shared_dp_rescans_total{trigger=\"link\"}"), 2);
}

// Every link event and net uevent used to cost a full rescan, and CNI creates and deletes
// veth pairs all day (107 % of a core on a 2,004-function node; docs/reliability.md). Links
// and devices without a PCI function behind them now cost nothing: 20 veth pairs created,
// brought up, announced by uevents and deleted make no rescan; one event on a watched
// netdev after them makes exactly one.
TEST_F(NetnsE2E, VirtualLinkChurnCostsNoRescan) {
  const int64_t initial = MetricValue(Scrape(), "rdma_shared_dp_sysfs_functions_read_total");
  const std::string sys = h.root() + "/netns-sys";
  std::filesystem::create_directories(sys);
  const bool sysfs = ::mount("sysfs", sys.c_str(), "sysfs", 0, nullptr) == 0;
  netlink::NlSocket sock(nl_socket_alloc());
  ASSERT_EQ(nl_connect(sock.get(), NETLINK_ROUTE), 0);
  for (int i = 0; i < 20; ++i) {
    const std::string a = "churn" + std::to_string(i), b = a + "p";
    ASSERT_EQ(rtnl_link_veth_add(sock.get(), a.c_str(), b.c_str(), getpid()), 0);
    ASSERT_TRUE(netlink::SetLinkUp(a).ok());
    if (sysfs) std::ofstream(sys + "/class/net/" + a + "/uevent") << "add";  // real uevents
  }
  for (int i = 0; i < 20; ++i) {
    rtnl_link* link = rtnl_link_alloc();
    rtnl_link_set_name(link, ("churn" + std::to_string(i)).c_str());
    ASSERT_EQ(rtnl_link_delete(sock.get(), link), 0);
    rtnl_link_put(link);
  }
  if (sysfs) ::umount2(sys.c_str(), MNT_DETACH);
  // The barrier: one event on a watched netdev, after the churn's; the loop handles events
  // in order, so once its one function is read every churn event was handled (a rescan
  // for one of them would be counted below, or would read more functions and never let
  // the count be exactly one more).
  ASSERT_TRUE(ToggleLink("ib0"));
  ASSERT_TRUE(AwaitMetricValue("rdma_shared_dp_sysfs_functions_read_total", initial + 1));
  const std::string metrics = Scrape();
  EXPECT_THAT(metrics, ::testing::HasSubstr("rdma_shared_dp_rescans_total{trigger=\"link\"} 1\n"));
  EXPECT_THAT(metrics,
              ::testing::HasSubstr("rdma_shared_dp_rescans_total{trigger=\"uevent\"} 0\n"));
}

}  // namespace
}  // namespace rdmadp::testing
