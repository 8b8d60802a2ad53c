// CDI mode against the real consumer: what the plugin writes is loaded by the reference CDI
// library (test/cdi/cdicheck, built against Debian's package, the code containerd, CRI-O and
// podman embed), and every name an Allocate returned — in cdi_devices and in the annotation
// — must resolve and inject into an OCI spec. Edge cases from cdi-consumers.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pkg/dra/prepare/claim_metadata.h"
#include "pkg/text/cat.h"
#include "test/support/fs_wait.h"
#include "test/support/plugin_harness.h"

namespace rdmadp::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

using Checked = RunResult;

// Where the checker sees the host's /dev/infiniband (set by the fixture; "" = the real one).
std::string g_host_infiniband;

// Runs cdicheck; `names` are qualified device names, `annotations` KEY=VALUE pairs. The
// library stats every hostPath and wants a char device, so the checker runs in a private
// mount namespace whose /dev/infiniband holds real device nodes named like the fake node's.
// `oci_spec`: a bundle's config.json to inject into and rewrite (cdicheck -oci-spec).
Checked Check(const std::string& dir, int devices, const std::vector<std::string>& names = {},
              const std::vector<std::string>& annotations = {}, const std::string& oci_spec = "") {
  std::string cmd = Cat(RDMADP_CDICHECK_BINARY, " -dir '", dir, "' -devices ", devices);
  if (!oci_spec.empty()) Append(cmd, " -oci-spec '", oci_spec, "'");
  for (const auto& a : annotations) Append(cmd, " -annotation '", a, "'");
  for (const auto& n : names) Append(cmd, " '", n, "'");
  if (!g_host_infiniband.empty()) {
    cmd = Cat("unshare -m --propagation private sh -c \"mount -t tmpfs tmpfs /dev && ",
              "mkdir /dev/infiniband && mount --bind '", g_host_infiniband,
              "' /dev/infiniband && exec ", cmd, "\"");
  }
  return RunShell(cmd);
}

struct Allocated {
  std::vector<std::string> names;        // cdi_devices
  std::vector<std::string> annotations;  // KEY=VALUE
};

class CdiConsumer : public ::testing::Test {
 protected:
  void SetUp() override {
    h.AddDemoHcas();
    cdi = h.root() + "/cdi";
    std::filesystem::create_directories(cdi);
    // Char device nodes (/dev/null's numbers, harmless) for every fake /dev/infiniband file.
    g_host_infiniband = h.root() + "/host-infiniband";
    std::filesystem::create_directories(g_host_infiniband);
    for (const auto& e : std::filesystem::directory_iterator(h.node().dev_root() + "/infiniband")) {
      const std::string node = g_host_infiniband + "/" + e.path().filename().string();
      ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0) << node;
    }
  }
  void TearDown() override {
    if (HasFailure()) std::cerr << "---- plugin log ----\n" << h.PluginLog();
  }
  void Start(const std::string& config, const std::vector<std::string>& resources,
             const std::vector<std::string>& extra = {}) {
    h.WriteConfig(config);
    ASSERT_TRUE(h.kubelet().Start().ok());
    std::vector<std::string> flags = {"--use-cdi", "--cdi-spec-dir=" + cdi};
    flags.insert(flags.end(), extra.begin(), extra.end());
    h.StartPlugin(flags);
    ASSERT_TRUE(h.kubelet().WaitRegistered(resources, 1, milliseconds(10000)));
  }
  Allocated Allocate(const std::string& resource) {
    Allocated out;
    auto r = h.kubelet().Allocate(resource, {"0"});
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return out;
    for (const auto& d : r->container_responses(0).cdi_devices()) out.names.push_back(d.name());
    for (const auto& [k, v] : r->container_responses(0).annotations()) {
      out.annotations.push_back(k + "=" + v);
    }
    return out;
  }
  size_t SpecFiles() {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(cdi)) n += e.is_regular_file();
    return n;
  }
  // SIGHUP (a rescan), then waits for the resource's `n`-th ListAndWatch message.
  bool RescanUntilMessage(const std::string& resource, size_t n) {
    h.plugin().Signal(SIGHUP);
    return h.kubelet().WaitFor(
        [&](const SimState& s) { return s.resources.at(resource).snapshots.size() >= n; },
        milliseconds(10000));
  }
  // One resource over the two InfiniBand HCAs (ib0, ib1).
  static constexpr char kIbPool[] = R"({"periodicUpdateInterval": 0, "configList": [
      {"resourceName": "pool", "rdmaHcaMax": 3, "selectors": {"ifNames": ["ib0", "ib1"]}}]})";

  PluginHarness h;
  std::string cdi;
};

TEST_F(CdiConsumer, ShortestLegalNamesLoadAndInject) {
  Start(R"({"configList": [{"resourcePrefix": "ab", "resourceName": "hc", "rdmaHcaMax": 5,
            "selectors": {"vendors": ["15b3"]}}]})",
        {"ab/hc"});
  const Allocated a = Allocate("ab/hc");
  ASSERT_EQ(a.names.size(), 4u);
  EXPECT_EQ(a.names[0], "ab/hc=0000:10:00.0");
  ASSERT_EQ(a.annotations.size(), 1u);
  EXPECT_THAT(a.annotations[0], HasSubstr("cdi.k8s.io/rdmadp_ab_hc="));
  const Checked c = Check(cdi, 4, a.names, a.annotations);
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_THAT(c.output, HasSubstr("ok: 4 device(s) declared, 8 name(s) resolved"));
}

// A one-character vendor or class panics every released CDI library (the checker proves
// it on a hand-written spec); the plugin refuses such a config before writing anything.
TEST_F(CdiConsumer, KindsThatCrashTheLibraryAreRejectedBeforeAnySpecIsWritten) {
  const std::string bad = cdi + "-bad";
  std::filesystem::create_directories(bad);
  std::ofstream(bad + "/x.json") << R"({"cdiVersion": "0.5.0", "kind": "x/hca",
      "devices": [{"name": "d0", "containerEdits": {"deviceNodes": [{"path": "/dev/null"}]}}]})";
  const Checked crash = Check(bad, -1);
  EXPECT_EQ(crash.status, 1);
  EXPECT_THAT(crash.output, HasSubstr("panic inside the CDI library"));

  h.WriteConfig(R"({"configList": [
      {"resourceName": "a", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}},
      {"resourcePrefix": "x", "resourceName": "hca", "rdmaHcaMax": 1,
       "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "1hca", "rdmaHcaMax": 1, "selectors": {"vendors": ["15b3"]}}]})");
  const std::vector<std::string> flags = {"--config-file=" + h.config_path(),
                                          "--sysfs-root=" + h.node().sysfs_root(),
                                          "--dev-root=" + h.node().dev_root(),
                                          "--kubelet-root-dir=" + h.kubelet_root(),
                                          "--cdi-spec-dir=" + cdi,
                                          "--no-link-up"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), flags.begin(), flags.end());
    return RunToExit(args, milliseconds(10000));
  };
  const RunResult validate = with({"validate", "--use-cdi"});
  const RunResult daemon = with({"--use-cdi"});
  for (const RunResult& r : {validate, daemon}) {
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("config: configList[0].resourceName: \"a\" cannot be a CDI "
                                    "class (--use-cdi): must be at least 2 characters"));
    EXPECT_THAT(r.output, HasSubstr("config: configList[1].resourcePrefix: \"x\" cannot be a "
                                    "CDI vendor (--use-cdi)"));
    EXPECT_THAT(r.output, HasSubstr("config: configList[2].resourceName: \"1hca\" cannot be a "
                                    "CDI class (--use-cdi): must start with a letter"));
  }
  EXPECT_EQ(SpecFiles(), 0u);
  EXPECT_EQ(with({"validate"}).status, 0) << "without CDI these names are fine";
}

TEST_F(CdiConsumer, AnEmptyPoolHasNoSpecAndOneThatFillsAndEmptiesFollows) {
  const std::string r = "rdma/pool";
  h.node().RemoveCharDevices("mlx5_0");
  h.node().RemoveCharDevices("mlx5_1");
  Start(kIbPool, {r});
  EXPECT_EQ(SpecFiles(), 0u) << "CDI >= 1.0 rejects a spec without devices";
  EXPECT_EQ(Check(cdi, 0).status, 0);

  h.node().RestoreCharDevices("mlx5_0");
  ASSERT_TRUE(RescanUntilMessage(r, 2));
  const Allocated filled = Allocate(r);
  ASSERT_EQ(filled.names.size(), 1u);
  const Checked c = Check(cdi, 1, filled.names, filled.annotations);
  EXPECT_EQ(c.status, 0) << c.output;

  h.node().RemoveCharDevices("mlx5_0");
  ASSERT_TRUE(RescanUntilMessage(r, 3));
  EXPECT_EQ(SpecFiles(), 0u);
  EXPECT_EQ(Check(cdi, 0).status, 0);
  EXPECT_EQ(h.kubelet().State().resources.at(r).capacity, 0) << "and nothing to allocate";
}

TEST_F(CdiConsumer, AfterAShrinkEveryNewAllocationResolves) {
  const std::string r = "rdma/pool";
  Start(kIbPool, {r});
  const Allocated before = Allocate(r);
  ASSERT_EQ(before.names.size(), 2u);
  EXPECT_EQ(Check(cdi, 2, before.names, before.annotations).status, 0);
  h.node().RemoveCharDevices("mlx5_1");
  ASSERT_TRUE(RescanUntilMessage(r, 2));
  const Allocated after = Allocate(r);
  ASSERT_EQ(after.names.size(), 1u);
  const Checked c = Check(cdi, 1, after.names, after.annotations);
  EXPECT_EQ(c.status, 0) << c.output;
  // The removed HCA's name no longer resolves: a checkpointed allocation replayed after an
  // HCA is gone fails at container start (inherent to the device-plugin API; README).
  EXPECT_EQ(Check(cdi, 1, {before.names[1]}).status, 1);
}

TEST_F(CdiConsumer, TwoPoolsSharingHcasDoNotConflict) {
  Start(R"({"configList": [
      {"resourceName": "all", "rdmaHcaMax": 2, "selectors": {"vendors": ["15b3"]}},
      {"resourceName": "ib0only", "rdmaHcaMax": 2, "selectors": {"ifNames": ["ib0"]}}]})",
        {"rdma/all", "rdma/ib0only"});
  const Allocated all = Allocate("rdma/all");
  const Allocated one = Allocate("rdma/ib0only");
  std::vector<std::string> names = all.names;
  names.insert(names.end(), one.names.begin(), one.names.end());
  std::vector<std::string> annotations = all.annotations;
  annotations.insert(annotations.end(), one.annotations.begin(), one.annotations.end());
  const Checked c = Check(cdi, 5, names, annotations);  // one container holding both pools
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_THAT(c.output, HasSubstr("10 name(s) resolved"));
}

// CDI mode carries the pool's env in the spec, and the reference library puts it into the
// container's process environment (docs/pod-env.md). Two hinted pools in one container:
// what the library does with one name set twice is what the README tells users.
std::vector<std::string> EnvLines(const std::string& output) {
  std::vector<std::string> out;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("env: ")) out.push_back(line.substr(5));
  }
  return out;
}

TEST_F(CdiConsumer, ThePoolsEnvReachesTheContainerThroughTheSpec) {
  Start(R"({"configList": [
      {"resourceName": "ib", "rdmaHcaMax": 2, "selectors": {"ifNames": ["ib0", "ib1"]},
       "envHints": ["nccl", "ucx"]},
      {"resourceName": "roce", "rdmaHcaMax": 2, "selectors": {"linkTypes": ["ether"]},
       "envHints": ["ucx"]}]})",
        {"rdma/ib", "rdma/roce"});
  const Allocated ib = Allocate("rdma/ib");
  Checked c = Check(cdi, 4, ib.names);
  ASSERT_EQ(c.status, 0) << c.output;
  std::vector<std::string> env = EnvLines(c.output);
  std::sort(env.begin(), env.end());
  ASSERT_EQ(env.size(), 4u) << c.output;
  EXPECT_EQ(env[0], "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(env[1], "PCIDEVICE_RDMA_IB=0000:10:00.0,0000:11:00.0");
  EXPECT_TRUE(env[2].starts_with("PCIDEVICE_RDMA_IB_INFO={\"0000:10:00.0\": {")) << env[2];
  EXPECT_EQ(env[3], "UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1");

  const Allocated roce = Allocate("rdma/roce");
  std::vector<std::string> both = ib.names;
  both.insert(both.end(), roce.names.begin(), roce.names.end());
  c = Check(cdi, 4, both);
  ASSERT_EQ(c.status, 0) << c.output;
  env = EnvLines(c.output);
  // Each pool's own names arrive; UCX_NET_DEVICES, set by both, is there once, with one
  // pool's value: not the union (docs/pod-env.md).
  EXPECT_EQ(std::count_if(env.begin(), env.end(),
                          [](const std::string& e) { return e.starts_with("UCX_NET_DEVICES="); }),
            1);
  EXPECT_EQ(std::count(env.begin(), env.end(), "PCIDEVICE_RDMA_ROCE=0000:12:00.0,0000:13:00.0"), 1);
  EXPECT_EQ(std::count(env.begin(), env.end(), "PCIDEVICE_RDMA_IB=0000:10:00.0,0000:11:00.0"), 1);
}

// The container's environment as the kubelet and containerd build it before the CDI edits
// are applied, with the image's defaults in `defaults`:
//  - the kubelet puts the device plugins' Allocate variables first and the container's own
//    after them (pkg/kubelet/kubelet_pods.go GenerateRunContainerOptions: the Envs of
//    containerManager.GetResources, then makeEnvironmentVariables' appended);
//  - containerd's CRI passes that list to oci.WithEnv, whose replaceOrAppendEnvValues
//    (containerd oci/spec_opts.go) replaces a name the defaults have, appends any other, each
//    time it comes (a name twice in the list is appended twice), and unsets a name written
//    without '='.
// Then the runtime applies the CDI edits (which replace a name: the CDI library's
// ContainerEdits.Apply) and runc keeps the last of a name (libcontainer's environment setup).
std::vector<std::string> KubeletContainerdEnv(const std::vector<std::string>& defaults,
                                              const std::map<std::string, std::string>& plugin,
                                              const std::vector<std::string>& pod) {
  std::vector<std::string> overrides;
  for (const auto& [k, v] : plugin) overrides.push_back(k + "=" + v);
  overrides.insert(overrides.end(), pod.begin(), pod.end());
  std::map<std::string, size_t> cache;  // the defaults' names only, as upstream keeps it
  std::vector<std::string> results = defaults;
  for (size_t i = 0; i < defaults.size(); ++i)
    cache[defaults[i].substr(0, defaults[i].find('='))] = i;
  for (const auto& value : overrides) {
    const auto eq = value.find('=');
    const std::string key = value.substr(0, eq);
    if (eq == std::string::npos) {
      if (cache.contains(key)) results[cache[key]] = "";
      continue;
    }
    if (cache.contains(key)) {
      results[cache[key]] = value;
    } else {
      results.push_back(value);
    }
  }
  std::erase(results, "");
  return results;
}

// The RoCE class and GID index never replace a value the pod sets itself (docs/pod-env.md,
// "The RoCE class and GID"): they are in the Allocate answer only, never in the CDI spec; a
// container built as the kubelet and containerd build it (above), injected by the reference
// CDI library and run by runc, reads the pod's own NCCL_IB_TC and UCX_IB_GID_INDEX and the
// plugin's other two. A spec that carried NCCL_IB_TC would have replaced the pod's: the
// library, shown on a spec of its own.
TEST_F(CdiConsumer, TheRoceClassAndGidNeverReplaceThePodsOwnValues) {
  FakeFunction roce = FakeNode::ConnectX(4, 1, /*infiniband=*/false);
  roce.ipv4_gid = "c0a8:0104";
  roce.traffic_class = 106;
  h.node().Add(roce);
  for (const auto& e : std::filesystem::directory_iterator(h.node().dev_root() + "/infiniband")) {
    const std::string node = g_host_infiniband + "/" + e.path().filename().string();
    if (std::filesystem::exists(node)) continue;
    ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0) << node;
  }
  Start(R"({"configList": [{"resourceName": "roce", "rdmaHcaMax": 2,
      "selectors": {"ifNames": ["enp20s0f0np0"]}, "envHints": ["nccl", "ucx"],
      "trafficClass": "auto", "gidIndex": "auto"}]})",
        {"rdma/roce"});
  auto r = h.kubelet().Allocate("rdma/roce", {"0"});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& answer = r->container_responses(0);
  const std::map<std::string, std::string> envs(answer.envs().begin(), answer.envs().end());
  EXPECT_EQ(envs.at("NCCL_IB_TC"), "106");
  EXPECT_EQ(envs.at("UCX_IB_TRAFFIC_CLASS"), "106");
  EXPECT_EQ(envs.at("NCCL_IB_GID_INDEX"), "3");
  EXPECT_EQ(envs.at("UCX_IB_GID_INDEX"), "3");
  std::vector<std::string> names;
  for (const auto& d : answer.cdi_devices()) names.push_back(d.name());
  Checked c = Check(cdi, 1, names);
  ASSERT_EQ(c.status, 0) << c.output;
  for (const auto& line : EnvLines(c.output)) {
    EXPECT_FALSE(line.starts_with("NCCL_IB_TC=") || line.starts_with("NCCL_IB_GID_INDEX=") ||
                 line.starts_with("UCX_IB_"))
        << "in the CDI spec: " << line;
  }

  const std::string bundle = h.root() + "/bundle-roce";
  std::filesystem::create_directories(bundle + "/rootfs");
  std::filesystem::copy_file(RDMADP_MEMLOCK_PROBE, bundle + "/rootfs/probe");
  c = RunShell(Cat("runc spec --bundle '", bundle, "'"));
  ASSERT_EQ(c.status, 0) << c.output;
  const std::string config_path = bundle + "/config.json";
  auto config = nlohmann::json::parse(ReadFileOrEmpty(config_path));
  config["process"]["terminal"] = false;
  config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
  config["process"]["args"] = {
      "/probe",          "--env", "NCCL_IB_TC", "NCCL_IB_GID_INDEX", "UCX_IB_TRAFFIC_CLASS",
      "UCX_IB_GID_INDEX"};
  config["process"]["capabilities"] = {{"bounding", nlohmann::json::array()},
                                       {"effective", nlohmann::json::array()},
                                       {"permitted", nlohmann::json::array()}};
  config["process"]["env"] =
      KubeletContainerdEnv(config["process"]["env"].get<std::vector<std::string>>(), envs,
                           {"NCCL_IB_TC=24", "UCX_IB_GID_INDEX=1"});
  std::ofstream(config_path) << config.dump(2);
  c = Check(cdi, 1, names, {}, config_path);
  ASSERT_EQ(c.status, 0) << c.output;
  const std::string id = Cat("rdmadp-roce-", ::getpid());
  c = RunShell(Cat("runc run --bundle '", bundle, "' ", id));
  RunShell(Cat("runc delete --force ", id));
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_THAT(c.output, HasSubstr("getenv NCCL_IB_TC=24\n"));
  EXPECT_THAT(c.output, HasSubstr("getenv NCCL_IB_GID_INDEX=3\n"));
  EXPECT_THAT(c.output, HasSubstr("getenv UCX_IB_TRAFFIC_CLASS=106\n"));
  EXPECT_THAT(c.output, HasSubstr("getenv UCX_IB_GID_INDEX=1\n"));
  EXPECT_EQ(std::count(c.output.begin(), c.output.end(), '\n'), 8)
      << "one of each name: " << c.output;

  // Why not the spec: a spec's variable comes after the container's own (the library
  // replaces it, or, as Debian's build of it here does, appends it) and runc keeps the last.
  const std::string own = h.root() + "/cdi-own";
  std::filesystem::create_directories(own);
  std::ofstream(own + "/probe.json") << R"({"cdiVersion": "0.5.0", "kind": "example.com/probe",
      "devices": [{"name": "tc", "containerEdits": {"env": ["NCCL_IB_TC=106"]}}]})";
  config["process"]["args"] = {"/probe", "--env", "NCCL_IB_TC"};
  config["process"]["env"] = KubeletContainerdEnv({"PATH=/bin"}, {}, {"NCCL_IB_TC=24"});
  std::ofstream(config_path) << config.dump(2);
  c = Check(own, 1, {"example.com/probe=tc"}, {}, config_path);
  ASSERT_EQ(c.status, 0) << c.output;
  c = RunShell(Cat("runc run --bundle '", bundle, "' ", id));
  RunShell(Cat("runc delete --force ", id));
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_THAT(c.output, HasSubstr("getenv NCCL_IB_TC=106\n"));
}

TEST_F(CdiConsumer, TwoInstancesOfARollingUpdateKeepTheSpecsLoadable) {
  Start(R"({"configList": [{"resourceName": "pool", "rdmaHcaMax": 2,
            "selectors": {"vendors": ["15b3"]}}]})",
        {"rdma/pool"});
  PluginProcess second(PluginBinary(), h.PluginArgs({"--use-cdi", "--cdi-spec-dir=" + cdi}),
                       h.root() + "/second.log");
  ASSERT_TRUE(h.kubelet().WaitRegistered({"rdma/pool"}, 2, milliseconds(10000)));
  EXPECT_EQ(SpecFiles(), 1u) << "no temp file left behind";
  h.plugin().Signal(SIGTERM);
  ASSERT_EQ(h.plugin().WaitExit(milliseconds(5000)), 0);
  EXPECT_EQ(SpecFiles(), 1u) << "the survivor still serves the resource";
  ASSERT_TRUE(h.kubelet().WaitFor(
      [](const SimState& s) {
        const auto& r = s.resources.at("rdma/pool");
        return r.stream_open && r.allocatable == r.capacity;
      },
      milliseconds(10000)));
  const Allocated a = Allocate("rdma/pool");
  const Checked c = Check(cdi, 4, a.names, a.annotations);
  EXPECT_EQ(c.status, 0) << c.output;
  second.Signal(SIGTERM);
  EXPECT_EQ(second.WaitExit(milliseconds(5000)), 0);
  EXPECT_EQ(SpecFiles(), 0u);
}

// The DRA front end's per-HCA specs: every CDI ID a Prepare can return resolves in the
// reference library and injects the HCA's char devices, with rdma_cm once.
TEST_F(CdiConsumer, DraHcaSpecsResolve) {
  h.WriteConfig(R"({"periodicUpdateInterval": 0, "configList": [
      {"resourceName": "ib", "rdmaHcaMax": 3, "frontend": "dra",
       "selectors": {"ifNames": ["ib0", "ib1"]}}]})");
  ASSERT_TRUE(h.kubelet().Start().ok());
  // No API server here: the specs are written before anything is published.
  h.StartPlugin({"--node-name=n1", "--cdi-spec-dir=" + cdi, "--metrics-address=127.0.0.1:0"});
  ASSERT_TRUE(WaitForFiles(
      cdi, [&] { return SpecFiles() == 2; }, milliseconds(10000)));
  const std::vector<std::string> ids = {"rdma.k8s-rdma-shared-dp.io/hca=hca-0000-10-00-0",
                                        "rdma.k8s-rdma-shared-dp.io/hca=hca-0000-11-00-0"};
  const Checked c = Check(cdi, 2, ids);
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_THAT(c.output, HasSubstr("ok: 2 device(s) declared, 2 name(s) resolved"));
  // No API server to publish to: counted, and shown as unreachable.
  EXPECT_EQ(h.Metric("rdma_shared_dp_errors_by_class_total{class=\"dra\"}"), 1);
  EXPECT_EQ(h.Metric("rdma_shared_dp_dra_api_reachable{driver=\"rdma.k8s-rdma-shared-dp.io\"}"), 0);
}

// A DRA claim's metadata spec, as Prepare writes it (docs/dra.md, "Prepare"), loads in the
// reference library and injects the read-only bind mount at the KEP-5304 path and the
// claim's env.
TEST_F(CdiConsumer, DraClaimMetadataSpecsInjectTheMountAndTheEnv) {
  const dra::MetadataDirs dirs{"rdma.example.com", h.root() + "/plugin", cdi};
  std::filesystem::create_directories(dirs.data_dir);
  dra::DraDevice hca;
  hca.pool = "n1/ib";
  hca.name = "hca-0000-10-00-0";
  sysfs::PciFunction fn;
  fn.address = "0000:10:00.0";
  fn.rdma_devices = {{"mlx5_0", {{1, sysfs::PortState::kActive}}}};
  hca.functions = std::make_shared<const std::vector<sysfs::PciFunction>>(1, fn);
  hca.hints = {config::EnvHint::kUcx};
  dra::PreparedDevice prepared;
  prepared.request_names = {"rdma"};
  prepared.request_ref = "rdma";
  prepared.published = &hca;
  prepared.pool = hca.pool;
  prepared.device = hca.name;
  std::vector<dra::PreparedDevice> devices = {prepared};
  const dra::ClaimRef claim{"team-a", "train", "5f1c2d3e-0000-4000-8000-000000000001", std::nullopt,
                            false};
  ASSERT_TRUE(dra::WriteClaimMetadata(dirs, claim, devices).ok());
  ASSERT_EQ(devices[0].cdi_ids.size(), 1u);
  const Checked c = Check(cdi, 1, devices[0].cdi_ids);
  ASSERT_EQ(c.status, 0) << c.output;
  EXPECT_THAT(
      c.output,
      HasSubstr(Cat("mount: /var/run/kubernetes.io/dra-device-attributes/"
                    "resourceclaims/train/rdma/rdma.example.com-metadata.json <- ",
                    dirs.data_dir,
                    "/dra-device-metadata/5f1c2d3e-0000-4000-8000-000000000001/rdma/metadata.json "
                    "ro,bind\n")));
  std::vector<std::string> env = EnvLines(c.output);
  std::sort(env.begin(), env.end());
  ASSERT_EQ(env.size(), 3u) << c.output;
  EXPECT_EQ(env[0], "PCIDEVICE__TRAIN__RDMA=0000:10:00.0");
  EXPECT_TRUE(env[1].starts_with("PCIDEVICE__TRAIN__RDMA_INFO={")) << env[1];
  EXPECT_EQ(env[2], "UCX_NET_DEVICES=mlx5_0:1");
}

// A pool with "memlock" raises RLIMIT_MEMLOCK in a non-root container with
// no capabilities, through a createRuntime hook the CDI spec names: the plugin installs the
// hook at --memlock-hook-path, the reference CDI library injects the allocated devices (and
// the hook) into a bundle's OCI spec as a runtime does, and runc runs the container under
// `prlimit --memlock=65536:8388608` (this sandbox's hard limit is 8 MiB: no
// CAP_SYS_RESOURCE) as uid 1000. Inside, /proc/self/limits shows 8 MiB and a 4 MiB mlock
// works; after a reload without "memlock" the spec has no hook, and the same container
// shows 64 KiB and the mlock fails. A spec that sets RLIMIT_MEMLOCK itself (applied by runc
// after the hook) is refused by the hook, naming it, instead of starting without the limit
// (docs/memlock.md, "How it is tested").
class CdiMemlock : public CdiConsumer {
 protected:
  // The container's `Max locked memory` soft and hard limits and the probe's mlock line.
  struct Seen {
    std::string soft, hard, mlock;
    int status = -1;
    std::string output;
  };
  Seen RunContainer(const std::string& id, bool spec_sets_memlock = false) {
    Seen seen;
    const Allocated a = Allocate("rdma/ib");
    const std::string bundle = Cat(h.root(), "/bundle-", id);
    std::filesystem::create_directories(bundle + "/rootfs");
    std::filesystem::copy_file(RDMADP_MEMLOCK_PROBE, bundle + "/rootfs/probe");
    Checked c = RunShell(Cat("runc spec --bundle '", bundle, "'"));
    EXPECT_EQ(c.status, 0) << c.output;
    const std::string config_path = bundle + "/config.json";
    auto config = nlohmann::json::parse(ReadFileOrEmpty(config_path));
    config["process"]["terminal"] = false;
    config["process"]["user"] = {{"uid", 1000}, {"gid", 1000}};
    config["process"]["args"] = {"/probe", "4194304"};
    config["process"]["capabilities"] = {{"bounding", nlohmann::json::array()},
                                         {"effective", nlohmann::json::array()},
                                         {"permitted", nlohmann::json::array()}};
    if (spec_sets_memlock) {
      config["process"]["rlimits"].push_back(
          {{"type", "RLIMIT_MEMLOCK"}, {"soft", 65536}, {"hard", 65536}});
    }
    std::ofstream(config_path) << config.dump(2);
    c = Check(cdi, 2, a.names, {}, config_path);
    EXPECT_EQ(c.status, 0) << c.output;
    c = RunShell(Cat("prlimit --memlock=65536:8388608 runc run --bundle '", bundle,
                     "' rdmadp-memlock-", id, "-", ::getpid()));
    RunShell(Cat("runc delete --force rdmadp-memlock-", id, "-", ::getpid()));
    seen.status = c.status;
    seen.output = c.output;
    std::istringstream lines(c.output);
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("Max locked memory")) {
        std::istringstream words(line.substr(17));
        words >> seen.soft >> seen.hard;
      }
      if (line.starts_with("mlock ")) seen.mlock = line;
    }
    return seen;
  }
  static constexpr char kWith[] = R"({"configList": [{"resourceName": "ib", "rdmaHcaMax": 2,
      "selectors": {"linkTypes": ["infiniband"]}, "memlock": "8Mi"}]})";
  static constexpr char kWithout[] = R"({"configList": [{"resourceName": "ib", "rdmaHcaMax": 2,
      "selectors": {"linkTypes": ["infiniband"]}}]})";
};

TEST_F(CdiMemlock, ReachesANonRootContainerInRuncAndGoesWithTheOption) {
  const std::string hook = h.root() + "/host-bin/rdmadp-memlock-hook";
  std::filesystem::create_directories(h.root() + "/host-bin");
  Start(kWith, {"rdma/ib"}, {"--memlock-hook-path=" + hook});
  EXPECT_EQ(ReadFileOrEmpty(hook), ReadFileOrEmpty(RDMADP_MEMLOCK_HOOK)) << "installed as built";
  const std::string spec_file = cdi + "/k8s-rdma-shared-dp_rdma_ib.json";
  EXPECT_THAT(ReadFileOrEmpty(spec_file),
              HasSubstr(Cat("\"hookName\": \"createRuntime\", \"path\": \"", hook,
                            "\", \"args\": [\"rdmadp-memlock-hook\", \"8388608\"]")));
  const Seen with = RunContainer("with");
  EXPECT_EQ(with.status, 0) << with.output;
  EXPECT_EQ(with.soft, "8388608") << with.output;
  EXPECT_EQ(with.hard, "8388608") << with.output;
  EXPECT_EQ(with.mlock, "mlock 4194304: ok") << with.output;

  // A reload without the option rewrites the spec without the hook (same pool, same HCAs).
  h.WriteConfig(kWithout);
  h.plugin().Signal(SIGHUP);
  ASSERT_TRUE(WaitForFiles(
      cdi, [&] { return ReadFileOrEmpty(spec_file).find("hooks") == std::string::npos; },
      milliseconds(10000)));
  const Seen without = RunContainer("without");
  EXPECT_EQ(without.status, 0) << without.output;
  EXPECT_EQ(without.soft, "65536") << without.output;
  EXPECT_TRUE(without.mlock.starts_with("mlock 4194304: FAILED")) << without.output;
}

TEST_F(CdiMemlock, ASpecThatSetsItsOwnLimitIsRefusedByTheHookNamingIt) {
  const std::string hook = h.root() + "/host-bin/rdmadp-memlock-hook";
  std::filesystem::create_directories(h.root() + "/host-bin");
  Start(kWith, {"rdma/ib"}, {"--memlock-hook-path=" + hook});
  const Seen seen = RunContainer("spec-rlimit", /*spec_sets_memlock=*/true);
  EXPECT_NE(seen.status, 0) << seen.output;
  EXPECT_THAT(seen.output,
              HasSubstr("rdmadp-memlock-hook: the container's OCI spec sets RLIMIT_MEMLOCK to "
                        "65536 bytes, which the runtime applies after this hook, below the "
                        "pool's 8388608 bytes"));
  EXPECT_EQ(seen.mlock, "") << "the container never ran";
}

// Without the hook's directory (the DaemonSet without images/components/memlock) the pool is
// served all the same and its spec names no hook.
// It says so where an operator looks: /readyz is 503 with the reason, and
// rdma_shared_dp_memlock_applied is 0 (issue 52: it used to be one start-up line, /readyz 200
// and every counter 0).
TEST_F(CdiMemlock, WithoutItsDirectoryThePoolServesWithoutTheHookAndSaysSo) {
  const std::string hook = h.root() + "/not-mounted/rdmadp-memlock-hook";
  Start(kWith, {"rdma/ib"}, {"--memlock-hook-path=" + hook, "--metrics-address=127.0.0.1:0"});
  EXPECT_FALSE(std::filesystem::exists(hook));
  EXPECT_EQ(ReadFileOrEmpty(cdi + "/k8s-rdma-shared-dp_rdma_ib.json").find("hooks"),
            std::string::npos);
  const Checked c = Check(cdi, 2, Allocate("rdma/ib").names);
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(h.Metric("rdma_shared_dp_memlock_applied{resource=\"rdma/ib\"}"), 0);
  EXPECT_EQ(h.MetricsHttp("/readyz"),
            std::make_pair(503, std::string("rdma/ib: memlock is configured and not applied: the "
                                            "hook is not installed (the start-up log says why: "
                                            "--memlock-hook-path, images/components/memlock)\n")));
}

// Installed, then deleted on the host: the spec still names it, so every container of the
// pool would fail at creation. /readyz and the metric say so at once (H5 of the hardening
// round at 050f44e: the missing hook was never noticed).
TEST_F(CdiMemlock, AHookDeletedAfterStartShowsAtOnce) {
  const std::string hook = h.root() + "/host-bin/rdmadp-memlock-hook";
  std::filesystem::create_directories(h.root() + "/host-bin");
  Start(kWith, {"rdma/ib"}, {"--memlock-hook-path=" + hook, "--metrics-address=127.0.0.1:0"});
  EXPECT_EQ(h.Metric("rdma_shared_dp_memlock_applied{resource=\"rdma/ib\"}"), 1);
  std::filesystem::remove(hook);
  EXPECT_EQ(h.Metric("rdma_shared_dp_memlock_applied{resource=\"rdma/ib\"}"), 0);
  const auto [status, body] = h.MetricsHttp("/readyz");
  EXPECT_EQ(status, 503);
  EXPECT_EQ(body, Cat("rdma/ib: memlock is configured and not applied: the hook ", hook,
                      " is gone (No such file or directory): restart the plugin's pod to "
                      "install it again\n"));
}

}  // namespace
}  // namespace rdmadp::testing
