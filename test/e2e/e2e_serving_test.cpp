// Serving: registration, ListAndWatch snapshots, Allocate, selectors and config forms.
#include <sstream>

#include "test/e2e/e2e_fixture.h"

namespace rdmadp::testing {
namespace {

TEST_F(E2E, RegistersEveryResourceWithTheKubelet) {
  const auto start = Clock::now();
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  std::cout << "[measured] exec -> both resources registered and listed: " << MsSince(start)
            << " ms\n";
  for (const char* name : {kA, kB}) {
    SimResource r = Resource(name);
    EXPECT_EQ(r.registrations, 1) << name;
    EXPECT_EQ(std::filesystem::path(r.endpoint).parent_path(), h.kubelet().device_plugin_dir());
    EXPECT_THAT(r.endpoint, HasSubstr(std::string(name).substr(5) + "-"));
    EXPECT_TRUE(r.has_options);
    EXPECT_FALSE(r.options.pre_start_required());
    EXPECT_FALSE(r.options.get_preferred_allocation_available());
  }
  EXPECT_TRUE(h.kubelet().State().rejected.empty());
}

TEST_F(E2E, SnapshotsCarryIdsHealthAndTopology) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  SimResource a = Resource(kA);
  EXPECT_EQ(a.capacity, 1000);
  EXPECT_EQ(a.allocatable, 1000);
  const auto& list = a.snapshots.front();
  ASSERT_EQ(list.devices_size(), 1000);
  for (int i = 0; i < list.devices_size(); ++i) {
    ASSERT_EQ(list.devices(i).id(), std::to_string(i));
    ASSERT_EQ(list.devices(i).health(), "Healthy");
    ASSERT_EQ(list.devices(i).topology().nodes_size(), 1);
    ASSERT_EQ(list.devices(i).topology().nodes(0).id(), 0);
  }
  SimResource b = Resource(kB);
  EXPECT_EQ(b.capacity, 500);
  EXPECT_EQ(b.snapshots.front().devices(0).topology().nodes(0).id(), 1);
}

// The Go plugin attaches no topology; with it, the Topology Manager's single-numa-node
// policy can refuse pods the Go plugin got admitted. --no-topology is the knob that restores
// that (README.md, "Differences from the Go plugin").
TEST_F(E2E, NoTopologyAdvertisesSlotsWithoutNumaNodes) {
  StartAll(PluginHarness::DemoConfig(), {"--no-topology"});
  ASSERT_TRUE(WaitRegistered(kA));
  const SimResource a = Resource(kA);
  EXPECT_EQ(a.capacity, 1000);
  const auto& list = a.snapshots.front();
  ASSERT_EQ(list.devices_size(), 1000);
  for (const auto& d : list.devices()) ASSERT_FALSE(d.has_topology()) << d.id();
}

TEST_F(E2E, AllocateHandsOutEveryCharDeviceOfThePool) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  auto a = h.kubelet().Allocate(kA, {"0"});
  ASSERT_TRUE(a.ok()) << a.status();
  std::vector<std::string> paths;
  for (const auto& spec : a->container_responses(0).devices()) {
    EXPECT_EQ(spec.container_path(), spec.host_path());
    EXPECT_EQ(spec.permissions(), "rwm");
    paths.push_back(spec.host_path());
  }
  EXPECT_THAT(paths, ElementsAre("/dev/infiniband/issm0", "/dev/infiniband/umad0",
                                 "/dev/infiniband/uverbs0", "/dev/infiniband/issm1",
                                 "/dev/infiniband/umad1", "/dev/infiniband/uverbs1",
                                 "/dev/infiniband/rdma_cm"));
  auto b = h.kubelet().Allocate(kB, {"499"});
  ASSERT_TRUE(b.ok()) << b.status();
  paths.clear();
  for (const auto& spec : b->container_responses(0).devices()) paths.push_back(spec.host_path());
  EXPECT_THAT(paths, ElementsAre("/dev/infiniband/umad2", "/dev/infiniband/uverbs2",
                                 "/dev/infiniband/umad3", "/dev/infiniband/uverbs3",
                                 "/dev/infiniband/rdma_cm"));
  auto unknown = h.kubelet().Allocate(kB, {"500"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("unknown device ID \"500\""));
}

// glibc's per-thread malloc arenas each reserve 64 MiB of address space (the unused part is
// mapped PROT_NONE) and keep their own free pages; the plugin uses one arena (main.cpp), so
// concurrent Allocates on gRPC's threads leave no such reservation. glibc's allocator only:
// the sanitizers bring their own.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
int ArenaReservations(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  int reservations = 0;
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &start, &end, perms) != 3) continue;
    const bool anonymous =
        line.find('/') == std::string::npos && line.find('[') == std::string::npos;
    if (anonymous && std::string(perms) == "---p" && end - start >= (1ul << 20)) ++reservations;
  }
  return reservations;
}

TEST_F(E2E, ConcurrentAllocatesShareOneMallocArena) {
  StartAll();
  ASSERT_TRUE(WaitRegistered(kA));
  const std::string endpoint = Resource(kA).endpoint;
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&] {
      auto stub = v1beta1::DevicePlugin::NewStub(
          grpc::CreateChannel("unix://" + endpoint, grpc::InsecureChannelCredentials()));
      for (int i = 0; i < 50; ++i) {
        v1beta1::AllocateRequest req;
        req.add_container_requests()->add_devices_ids("0");
        v1beta1::AllocateResponse resp;
        grpc::ClientContext ctx;
        if (stub->Allocate(&ctx, req, &resp).ok()) ++ok;
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(ok.load(), 400);
  EXPECT_EQ(ArenaReservations(h.plugin().pid()), 0);
  // The check sees arenas: this test process's own gRPC client threads made some.
  EXPECT_GT(ArenaReservations(::getpid()), 0);
}
#endif

// Sets (or with nullptr unsets) a variable of this process for the plugins it starts, and
// puts the old value back at the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value == nullptr ? ::unsetenv(name) : ::setenv(name, value, 1);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// gRPC's HTTP/2 bandwidth probe arms a timer after a connection's first data (100 ms, then
// longer ones); such timers leave gRPC 1.51's timer thread waking several times a second, for
// as long as the process lives, where it would wake once (grpc_runtime.h). The plugin turns
// the probe off on its servers and on its kubelet client. gRPC's own trace of the estimator
// shows it: the kubelet simulator, in this process with gRPC's defaults, probes on its
// connections; the plugin, traced the same way, on none of its own.
std::atomic<int> g_probe_lines{0};
void CountProbeLines(gpr_log_func_args* args) {
  if (std::strstr(args->message, "bdp[") != nullptr) ++g_probe_lines;
}

TEST_F(E2E, ConnectionsDoNotProbeBandwidth) {
  g_probe_lines = 0;
  grpc_tracer_set_enabled("bdp_estimator", 1);
  gpr_set_log_verbosity(GPR_LOG_SEVERITY_INFO);
  gpr_set_log_function(CountProbeLines);
  {
    ScopedEnv trace("GRPC_TRACE", "bdp_estimator");
    ScopedEnv verbosity("GRPC_VERBOSITY", "INFO");
    StartAll();
  }
  const bool registered = WaitRegistered(kA) && WaitRegistered(kB);
  // Each request's data is read, and a probe would be logged, before the call is answered.
  int allocated = 0;
  for (int i = 0; registered && i < 10; ++i) {
    for (const char* r : {kA, kB}) allocated += h.kubelet().Allocate(r, {"0"}).ok() ? 1 : 0;
  }
  grpc_tracer_set_enabled("bdp_estimator", 0);
  gpr_set_log_function(nullptr);
  gpr_set_log_verbosity(GPR_LOG_SEVERITY_ERROR);
  ASSERT_TRUE(registered);
  ASSERT_EQ(allocated, 20);
  EXPECT_GT(g_probe_lines.load(), 0) << "this gRPC does not trace its bandwidth probe";
  // The plugin's own gRPC logs at INFO into its log (a line of gRPC's format, "<file>.cc:<n>]"),
  // so no "bdp[" line there means its estimator traced nothing, not that its lines were lost.
  const std::string log = h.PluginLog();
  EXPECT_THAT(log, ::testing::ContainsRegex("\\.cc:[0-9]+\\]"));
  EXPECT_THAT(log, Not(HasSubstr("bdp[")));
}

TEST_F(E2E, SelectorsAndDeprecatedDevicesPickTheRightHcas) {
  StartAll(R"({"configList": [
    {"resourceName": "by_ifname", "rdmaHcaMax": 3, "devices": ["ib1"]},
    {"resourceName": "by_device_and_driver", "rdmaHcaMax": 3,
     "selectors": {"deviceIDs": ["0x1017"], "drivers": ["mlx5_core"], "ifNames": ["enp19s0f0np0", "ib0"]}},
    {"resourceName": "intel_nic_has_no_rdma", "rdmaHcaMax": 3, "selectors": {"vendors": ["8086"]}}
  ]})");
  for (const char* r :
       {"rdma/by_ifname", "rdma/by_device_and_driver", "rdma/intel_nic_has_no_rdma"}) {
    ASSERT_TRUE(WaitRegistered(r)) << r;
  }
  auto paths = [&](const std::string& r) {
    std::vector<std::string> out;
    auto resp = h.kubelet().Allocate(r, {"0"});
    if (resp.ok()) {
      for (const auto& s : resp->container_responses(0).devices()) out.push_back(s.host_path());
    }
    return out;
  };
  EXPECT_THAT(paths("rdma/by_ifname"),
              ElementsAre("/dev/infiniband/issm1", "/dev/infiniband/umad1",
                          "/dev/infiniband/uverbs1", "/dev/infiniband/rdma_cm"));
  EXPECT_THAT(
      paths("rdma/by_device_and_driver"),
      ElementsAre("/dev/infiniband/issm0", "/dev/infiniband/umad0", "/dev/infiniband/uverbs0",
                  "/dev/infiniband/umad3", "/dev/infiniband/uverbs3", "/dev/infiniband/rdma_cm"));
  EXPECT_EQ(Resource("rdma/intel_nic_has_no_rdma").capacity, 0);
}

// "Why is this HCA (not) in my pool?" answered by --log-level=debug (any case).
TEST_F(E2E, DebugLogExplainsEveryFunctionAndSelectorDecision) {
  h.node().RemoveCharDevices("mlx5_3");
  StartAll(PluginHarness::DemoConfig(), {"--log-level=DEBUG"});
  ASSERT_TRUE(WaitRegistered(kA));
  const std::string log = h.PluginLog();
  EXPECT_THAT(log, HasSubstr("found 0000:10:00.0 vendor 15b3 device 1017 driver mlx5_core netdev "
                             "ib0 link infiniband NUMA 0, RDMA: mlx5_0, char devices ["));
  EXPECT_THAT(log, HasSubstr("found 0000:05:00.0 vendor 8086 device 1521 driver igb netdev eno1"));
  EXPECT_THAT(log, HasSubstr("rdma/hca_shared_devices_a: in the pool"));
  EXPECT_THAT(log, HasSubstr("rdma/hca_shared_devices_b: not in the pool, selectors.linkTypes "
                             "[ether] does not include \"infiniband\""));
  EXPECT_THAT(log, HasSubstr("not in the pool, matches the selectors but is not RDMA-capable: "
                             "no uverbs char device"));
}

TEST_F(E2E, EmptyPoolRegistersAndAdvertisesZero) {
  StartAll(R"({"configList": [{"resourceName": "nothing", "rdmaHcaMax": 100,
                               "selectors": {"vendors": ["abcd"]}}]})",
           {kMetricsFlag});
  ASSERT_TRUE(WaitRegistered("rdma/nothing"));
  SimResource r = Resource("rdma/nothing");
  EXPECT_EQ(r.capacity, 0);
  EXPECT_EQ(r.allocatable, 0);
  // The simulator has the registration before the plugin has the Register RPC's answer,
  // and the plugin sets the metric only on the answer: wait for the state, not a moment.
  EXPECT_EQ(h.AwaitMetric(Series("rdma_shared_dp_registered", "rdma/nothing"), 1), 1);
  EXPECT_EQ(h.Metric(Series("rdma_shared_dp_hcas", "rdma/nothing")), 0);
}

TEST_F(E2E, YamlConfigAndCustomPrefix) {
  StartAll(
      "periodicUpdateInterval: 0\n"
      "configList:\n"
      "  - resourceName: ib_pool\n"
      "    resourcePrefix: example.com\n"
      "    rdmaHcaMax: 63\n"
      "    selectors:\n"
      "      vendors: [15B3]\n"
      "      linkTypes: [infiniband]\n");
  ASSERT_TRUE(WaitRegistered("example.com/ib_pool"));
  EXPECT_EQ(Resource("example.com/ib_pool").capacity, 63);
}

// With `ulimit -n 32` and 8 resources none registered, and the reason was only in gRPC's
// own log. The plugin raises its soft limit to the hard one at start (docs/reliability.md).
TEST_F(E2E, ALowSoftFdLimitIsRaisedAndEveryResourceRegisters) {
  std::string config = R"({"periodicUpdateInterval": 0, "configList": [)";
  for (int i = 0; i < 8; ++i) {
    config += (i ? "," : "") + std::string(R"({"resourceName": "hca_)") + std::to_string(i) +
              R"(", "selectors": {"vendors": ["15b3"]}})";
  }
  config += "]}";
  h.WriteConfig(config);
  ASSERT_TRUE(h.kubelet().Start().ok());
  std::vector<std::string> args = {"--nofile=32:4096", PluginBinary()};
  for (auto& a : h.PluginArgs()) args.push_back(a);
  PluginProcess plugin("/usr/bin/prlimit", args, h.log_path());
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) names.push_back("rdma/hca_" + std::to_string(i));
  EXPECT_TRUE(h.kubelet().WaitRegistered(names, 1, milliseconds(10000))) << h.PluginLog();
  plugin.Signal(SIGTERM);
  EXPECT_EQ(plugin.WaitExit(milliseconds(5000)), 0);
}

}  // namespace
// A log pipeline filters by resource and event, not by parsing messages
// (docs/observability.md).
TEST_F(E2E, JsonLogLinesCarryTheResourceAndTheEvent) {
  StartAll(PluginHarness::DemoConfig(), {"--log-format=json"});
  ASSERT_TRUE(WaitRegistered(kA));
  ASSERT_TRUE(WaitRegistered(kB));
  ASSERT_TRUE(LogShows("registered with the kubelet"));
  std::map<std::string, int> registered;  // resource -> lines
  std::istringstream lines(h.PluginLog());
  for (std::string line; std::getline(lines, line);) {
    YAML::Node obj = YAML::Load(line);  // JSON is YAML
    ASSERT_TRUE(obj.IsMap()) << line;
    if (obj["msg"].as<std::string>().find(": registered with the kubelet") == std::string::npos) {
      continue;
    }
    ASSERT_TRUE(obj["resource"] && obj["event"]) << line;
    EXPECT_EQ(obj["event"].as<std::string>(), "registration");
    ++registered[obj["resource"].as<std::string>()];
  }
  EXPECT_EQ(registered, (std::map<std::string, int>{{kA, 1}, {kB, 1}}));
}

}  // namespace rdmadp::testing
