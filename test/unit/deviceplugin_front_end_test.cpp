// The device-plugin front end in-process: constructed on a FakeHost (fake time, a kubelet
// root in a temporary directory) against the kubelet simulator over real unix sockets. What
// lives only in the front end is asserted at exact fake times: the auto mode's choice, a
// restart against a republish, a pool marked Unhealthy while its CDI spec cannot be written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "pkg/cdi/cdi_spec.h"
#include "pkg/config/config.h"
#include "pkg/deviceplugin/front_end.h"
#include "pkg/fd/files.h"
#include "pkg/rpc/socket_path.h"
#include "pkg/sysfs/scanner.h"
#include "test/support/fake_host.h"
#include "test/support/fake_node.h"
#include "test/support/fake_pod_resources.h"
#include "test/support/kubelet_sim.h"
#include "test/support/temp_dir.h"

namespace rdmadp::deviceplugin {
namespace {

using namespace std::chrono_literals;
using testing::FakeHost;
using testing::FakeNode;
using testing::KubeletSimulator;
using testing::SimState;

constexpr auto kRealWait = 20s;  // for another thread's answer (a state), never a sleep

config::Config Parse(const std::string& text) {
  auto loaded = config::ParseConfig(text);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return loaded.ok() ? loaded->config : config::Config{};
}

const char* kPool = R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 10,
                                        "selectors": {"vendors": ["15b3"]}}]})";

class DevicePluginInProcess : public ::testing::Test {
 protected:
  explicit DevicePluginInProcess(testing::KubeletEra era = testing::KubeletEra::kV125to136)
      : node_(dir_.path() + "/node"),
        kubelet_(dir_.path() + "/kubelet", era),
        host_(kubelet_root()) {
    node_.Add(FakeNode::ConnectX(0, 0, /*infiniband=*/true));
    node_.Add(FakeNode::ConnectX(1, 0, /*infiniband=*/true));
    ::mkdir(kubelet_root().c_str(), 0755);
    ::mkdir(host_.Dirs().DevicePlugins().c_str(), 0755);
  }
  ~DevicePluginInProcess() override {
    front_end_.reset();
    kubelet_.Stop();
  }

  std::string kubelet_root() const { return dir_.path() + "/kubelet"; }
  std::string SocketIn(const std::string& dir) const {
    return dir + "/" + rpc::SocketFileName("a", host_.InstanceId());
  }
  sysfs::NodeInventory Scan() const {
    return sysfs::Scanner(node_.sysfs_root(), node_.dev_root()).Scan();
  }
  void Start(FrontEndOptions options, const config::Config& config) {
    front_end_ = std::make_unique<DevicePluginFrontEnd>(host_, std::move(options));
    front_end_->Apply(config, Scan(), "start");
  }
  // Runs the loop's posted work until the kubelet simulator shows `pred` (the Register
  // answer and stream events come back from gRPC threads through Post).
  bool RunUntil(const std::function<bool(const SimState&)>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + kRealWait;
    while (!pred(kubelet_.State())) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      host_.scheduler().AwaitPosted(50ms);
    }
    host_.scheduler().RunPosted();
    return true;
  }
  // Runs the loop's posted work until the front end's own view shows `pred`: it learns of a
  // registration when the Register's answer comes back through Post, which can be after
  // the kubelet simulator recorded it (RunUntil's view).
  bool RunUntilCollected(const std::function<bool(const metrics::View&)>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + kRealWait;
    while (!pred(Collect())) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      host_.scheduler().AwaitPosted(50ms);
    }
    return true;
  }
  metrics::View Collect() const {
    metrics::View view;
    front_end_->Collect(view);
    return view;
  }
  static bool Registered(const SimState& s) {
    auto it = s.resources.find("rdma/a");
    return it != s.resources.end() && it->second.registrations >= 1 && it->second.stream_open;
  }
  static int Registrations(const SimState& s) {
    auto it = s.resources.find("rdma/a");
    return it == s.resources.end() ? 0 : it->second.registrations;
  }

  testing::TempDir dir_;
  FakeNode node_;
  KubeletSimulator kubelet_;
  FakeHost host_;
  std::unique_ptr<DevicePluginFrontEnd> front_end_;
};

// "auto" with plugins_registry present serves for the plugin watcher first and, when no
// GetInfo comes within auto_detect_timeout, registers through kubelet.sock: not a moment
// before the timeout, and at once after it.
TEST_F(DevicePluginInProcess, AutoTriesTheWatcherForItsTimeoutThenUsesKubeletSock) {
  ::mkdir(host_.Dirs().PluginsRegistry().c_str(), 0755);
  ASSERT_TRUE(kubelet_.Start().ok());  // its plugin watcher is off: no GetInfo ever comes
  FrontEndOptions options;
  options.registration_mode = frontend::RegistrationMode::kAuto;
  options.auto_detect_timeout = 5000ms;
  Start(options, Parse(kPool));
  host_.scheduler().RunPosted();
  EXPECT_TRUE(fd::PathExists(SocketIn(host_.Dirs().PluginsRegistry())));
  EXPECT_EQ(Collect().registration_mode, "auto (deciding)");

  host_.scheduler().Advance(4999ms);
  EXPECT_EQ(Collect().registration_mode, "auto (deciding)");
  EXPECT_EQ(kubelet_.State().resources.count("rdma/a"), 0u);  // no Register yet

  host_.scheduler().Advance(1ms);
  EXPECT_EQ(Collect().registration_mode, "kubelet");
  ASSERT_TRUE(RunUntil(Registered));
  EXPECT_FALSE(fd::PathExists(SocketIn(host_.Dirs().PluginsRegistry())));
  EXPECT_TRUE(fd::PathExists(SocketIn(host_.Dirs().DevicePlugins())));
  EXPECT_EQ(Registrations(kubelet_.State()), 1);
}

// Without plugins_registry the watcher is ruled out: "auto" registers through kubelet.sock
// at once, with no alarm left to decide anything later.
TEST_F(DevicePluginInProcess, AutoWithoutPluginsRegistryUsesKubeletSockAtOnce) {
  ASSERT_TRUE(kubelet_.Start().ok());
  FrontEndOptions options;
  options.registration_mode = frontend::RegistrationMode::kAuto;
  Start(options, Parse(kPool));
  EXPECT_EQ(Collect().registration_mode, "kubelet");
  ASSERT_TRUE(RunUntil(Registered));
  EXPECT_EQ(Registrations(kubelet_.State()), 1);
}

// What the kubelet sees of a resource unchanged (envHints only): a new snapshot on the same
// server and registration. What it sees changed (rdmaHcaMax): a new server, registered anew.
TEST_F(DevicePluginInProcess, AHintChangeRepublishesAndASlotChangeRestarts) {
  ASSERT_TRUE(kubelet_.Start().ok());
  Start({}, Parse(kPool));
  ASSERT_TRUE(RunUntil(Registered));
  ASSERT_TRUE(RunUntilCollected(
      [](const metrics::View& v) { return v.resources.at(0).registrations == 1; }));
  front_end_->Apply(Parse(R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 10,
                                              "envHints": ["nccl"],
                                              "selectors": {"vendors": ["15b3"]}}]})"),
                    Scan(), "reload");
  host_.scheduler().RunPosted();
  EXPECT_EQ(Registrations(kubelet_.State()), 1);
  EXPECT_EQ(Collect().resources.at(0).registrations, 1u);

  front_end_->Apply(Parse(R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 20,
                                              "envHints": ["nccl"],
                                              "selectors": {"vendors": ["15b3"]}}]})"),
                    Scan(), "reload");
  ASSERT_TRUE(RunUntil([](const SimState& s) { return Registrations(s) == 2; }));
  EXPECT_EQ(Collect().resources.at(0).slots, 20);  // rdmaHcaMax: the pool's shared slots
}

const char* kPerHcaPool = R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 2,
                                             "deviceModel": "perHca",
                                             "selectors": {"vendors": ["15b3"]}}]})";

std::vector<std::string> ListedIds(const v1beta1::ListAndWatchResponse& list,
                                   std::string_view health = "") {
  std::vector<std::string> out;
  for (const auto& d : list.devices()) {
    if (health.empty() || d.health() == health) out.push_back(d.id());
  }
  return out;
}

// perHca (issue 56): the kubelet is offered GetPreferredAllocation and each HCA's devices with
// its own health; a container gets the HCA of its ID only; a port going down takes its HCA's
// devices, not the pool's; an HCA that leaves takes only its own.
TEST_F(DevicePluginInProcess, PerHcaServesEachHcaOnItsOwn) {
  ASSERT_TRUE(kubelet_.Start().ok());
  Start({}, Parse(kPerHcaPool));
  ASSERT_TRUE(RunUntil(
      [](const SimState& s) { return Registered(s) && s.resources.at("rdma/a").capacity == 4; }));
  SimState state = kubelet_.State();
  const testing::SimResource& res = state.resources.at("rdma/a");
  ASSERT_TRUE(res.has_options);
  EXPECT_TRUE(res.options.get_preferred_allocation_available());
  EXPECT_EQ(res.capacity, 4);
  EXPECT_EQ(res.allocatable, 4);
  EXPECT_THAT(ListedIds(res.snapshots.back()),
              ::testing::ElementsAre("0000:10:00.0-0", "0000:10:00.0-1", "0000:11:00.0-0",
                                     "0000:11:00.0-1"));

  auto answer = kubelet_.Allocate("rdma/a", {"0000:11:00.0-1"});
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_EQ(answer->container_responses_size(), 1);
  const auto& c = answer->container_responses(0);
  std::vector<std::string> paths;
  for (const auto& d : c.devices()) paths.push_back(d.host_path());
  EXPECT_THAT(paths, ::testing::ElementsAre("/dev/infiniband/issm1", "/dev/infiniband/umad1",
                                            "/dev/infiniband/uverbs1", "/dev/infiniband/rdma_cm"));
  EXPECT_EQ(c.envs().at("PCIDEVICE_RDMA_A"), "0000:11:00.0");
  EXPECT_FALSE(kubelet_.Allocate("rdma/a", {"1"}).ok());  // a slots ID is not one of ours

  node_.SetPortState("mlx5_1", 1, "1: DOWN");
  front_end_->Apply(Parse(kPerHcaPool), Scan(), "rescan");
  ASSERT_TRUE(
      RunUntil([](const SimState& s) { return s.resources.at("rdma/a").allocatable == 2; }));
  state = kubelet_.State();
  EXPECT_THAT(ListedIds(state.resources.at("rdma/a").snapshots.back(), "Unhealthy"),
              ::testing::ElementsAre("0000:11:00.0-0", "0000:11:00.0-1"));
  EXPECT_EQ(Collect().resources.at(0).healthy_slots, 2);

  node_.Remove("0000:10:00.0");
  front_end_->Apply(Parse(kPerHcaPool), Scan(), "rescan");
  ASSERT_TRUE(RunUntil([](const SimState& s) { return s.resources.at("rdma/a").capacity == 2; }));
  state = kubelet_.State();
  EXPECT_THAT(ListedIds(state.resources.at("rdma/a").snapshots.back()),
              ::testing::ElementsAre("0000:11:00.0-0", "0000:11:00.0-1"));
  EXPECT_EQ(state.resources.at("rdma/a").allocatable, 0);
  EXPECT_EQ(Registrations(state), 1);  // all of it on one registration
}

// Switching an entry's deviceModel is refused while the kubelet's checkpoint holds IDs of
// the resource (they would change meaning), naming the field; with none held, it restarts
// the server, registered anew with GetPreferredAllocation.
TEST_F(DevicePluginInProcess, AModelSwitchIsRefusedWhileTheKubeletHoldsTheResourcesIds) {
  ASSERT_TRUE(kubelet_.Start().ok());
  Start({}, Parse(kPool));
  ASSERT_TRUE(RunUntil(Registered));
  const std::string checkpoint = host_.Dirs().DevicePlugins() + "/kubelet_internal_checkpoint";
  // The kubelet's own format (1.20+: DeviceIDs per NUMA node).
  std::ofstream(checkpoint) << R"({"Data": {"PodDeviceEntries": [
      {"PodUID": "6c7a", "ContainerName": "c", "ResourceName": "rdma/a",
       "DeviceIDs": {"0": ["3", "7"]}, "AllocResp": "CgA="},
      {"PodUID": "9d01", "ContainerName": "c", "ResourceName": "rdma/b",
       "DeviceIDs": {"-1": ["0"]}, "AllocResp": "CgA="}],
      "RegisteredDevices": {"rdma/a": ["0", "1"]}}, "Checksum": 1234})";
  const config::Config per_hca = Parse(kPerHcaPool);
  EXPECT_THAT(
      front_end_->Problems(per_hca, {4}),
      ::testing::ElementsAre(
          "config: configList[4].deviceModel: switching rdma/a from \"slots\" to "
          "\"perHca\" is refused while the kubelet's checkpoint holds 2 of its device IDs for "
          "1 pod(s) (" +
          checkpoint +
          "): they would change meaning; the running version keeps serving. Delete those pods "
          "(or drain the node), then reload; a finished pod's IDs stay there until the kubelet "
          "next allocates a device, and mounting its pod-resources directory "
          "(images/components/usage) lets the plugin count only running pods"));
  EXPECT_THAT(front_end_->Problems(Parse(kPool), {0}), ::testing::IsEmpty());  // no switch

  // With the pod-resources API (1.34: active pods only), the containers holding them count.
  ::mkdir((kubelet_root() + "/pod-resources").c_str(), 0755);
  auto pod_resources =
      testing::FakePodResources::Start(kubelet_root() + "/pod-resources/kubelet.sock", 34);
  ASSERT_TRUE(pod_resources.ok()) << pod_resources.status();
  (*pod_resources)
      ->SetPods({{"worker-0",
                  "ml",
                  "6c7a",
                  {testing::FakeContainer("c", {{"rdma/a", {"3", "7"}}})},
                  false}});
  EXPECT_THAT(front_end_->Problems(per_hca, {0}),
              ::testing::ElementsAre(
                  "config: configList[0].deviceModel: switching rdma/a from \"slots\" to "
                  "\"perHca\" is refused while containers hold its devices (ml/worker-0/c): they "
                  "would change meaning; the running version keeps serving. Delete those pods "
                  "(or drain the node), then reload"));
  // The pod ended; the kubelet has not written its checkpoint since: the switch may go.
  (*pod_resources)->SetPods({});
  EXPECT_THAT(front_end_->Problems(per_hca, {0}), ::testing::IsEmpty());
  EXPECT_EQ((*pod_resources)->calls(), 2);
  pod_resources->reset();

  std::ofstream(checkpoint) << "{";  // torn: what it holds is not known
  EXPECT_THAT(front_end_->Problems(per_hca, {0}),
              ::testing::ElementsAre(
                  "config: configList[0].deviceModel: switching rdma/a from \"slots\" to "
                  "\"perHca\" is refused: which of its devices the kubelet holds is not known (" +
                  checkpoint + " is not a JSON object); the running version keeps serving"));

  std::ofstream(checkpoint) << R"({"Data": {"PodDeviceEntries": null}, "Checksum": 1})";
  EXPECT_THAT(front_end_->Problems(per_hca, {0}), ::testing::IsEmpty());
  front_end_->Apply(per_hca, Scan(), "reload");
  ASSERT_TRUE(RunUntil([](const SimState& s) {
    return Registrations(s) == 2 && s.resources.at("rdma/a").capacity == 4;
  }));
  const SimState state = kubelet_.State();
  EXPECT_TRUE(state.resources.at("rdma/a").options.get_preferred_allocation_available());
  EXPECT_EQ(state.resources.at("rdma/a").capacity, 4);
}

// A model switched while the plugin was down: the kubelet's checkpoint still holds IDs of the
// other model, said once and kept as a ready note until the kubelet holds none.
TEST_F(DevicePluginInProcess, IdsOfTheOtherModelHeldAtStartAreANoteUntilGone) {
  ASSERT_TRUE(kubelet_.Start().ok());
  const std::string checkpoint = host_.Dirs().DevicePlugins() + "/kubelet_internal_checkpoint";
  std::ofstream(checkpoint) << R"({"Data": {"PodDeviceEntries": [
      {"PodUID": "6c7a", "ContainerName": "c", "ResourceName": "rdma/a",
       "DeviceIDs": {"-1": ["3", "0000:10:00.0-1"]}}]}, "Checksum": 1})";
  Start({}, Parse(kPerHcaPool));
  EXPECT_THAT(Collect().resources.at(0).notes,
              ::testing::ElementsAre(
                  "rdma/a: the kubelet's checkpoint holds 1 device ID(s) of the \"slots\" model, "
                  "given before deviceModel became \"perHca\" across a restart: those pods keep "
                  "the whole pool while new pods get their IDs' HCAs only "
                  "(docs/per-hca-devices.md, \"Switching an existing entry between models\")"));
  std::ofstream(checkpoint) << R"({"Data": {"PodDeviceEntries": []}, "Checksum": 1})";
  front_end_->Apply(Parse(kPerHcaPool), Scan(), "rescan");
  EXPECT_THAT(Collect().resources.at(0).notes, ::testing::IsEmpty());
}

// A CDI spec that cannot be written keeps the resource served with every slot Unhealthy and
// the problem reported once (class cdi); the next Apply that writes it makes them healthy.
TEST_F(DevicePluginInProcess, AnUnwritableCdiSpecMarksEverySlotUnhealthyUntilWritten) {
  ASSERT_TRUE(kubelet_.Start().ok());
  const std::string cdi_dir = dir_.path() + "/cdi";
  std::ofstream(cdi_dir) << "a file where the directory should be";
  FrontEndOptions options;
  options.use_cdi = true;
  options.cdi_spec_dir = cdi_dir;
  Start(options, Parse(kPool));
  // What the kubelet is sent: every slot, none allocatable.
  ASSERT_TRUE(RunUntil(
      [](const SimState& s) { return Registered(s) && s.resources.at("rdma/a").capacity == 10; }));
  EXPECT_EQ(kubelet_.State().resources.at("rdma/a").allocatable, 0);
  EXPECT_EQ(Registrations(kubelet_.State()), 1);
  metrics::ResourceView r = Collect().resources.at(0);
  EXPECT_EQ(r.slots, 10);
  EXPECT_EQ(r.healthy_slots, 0);
  EXPECT_THAT(r.problem, ::testing::HasSubstr("its CDI spec could not be written"));
  ASSERT_EQ(host_.problems().size(), 1u);
  EXPECT_EQ(host_.problems()[0].error_class, "cdi");

  front_end_->Apply(Parse(kPool), Scan(), "rescan");  // unchanged, still unwritable
  EXPECT_EQ(host_.problems().size(), 1u);             // said once, not at every rescan

  ASSERT_EQ(::unlink(cdi_dir.c_str()), 0);
  ASSERT_EQ(::mkdir(cdi_dir.c_str(), 0755), 0);
  front_end_->Apply(Parse(kPool), Scan(), "rescan");
  ASSERT_TRUE(
      RunUntil([](const SimState& s) { return s.resources.at("rdma/a").allocatable == 10; }));
  r = Collect().resources.at(0);
  EXPECT_EQ(Registrations(kubelet_.State()), 1);  // republished, not registered again
  EXPECT_EQ(r.healthy_slots, 10);
  EXPECT_EQ(r.problem, "");
  EXPECT_TRUE(fd::PathExists(cdi_dir + "/" + cdi::SpecFileName(Parse(kPool).resources.at(0))));
}

// A v1.24 kubelet answers Register before it dials us back.
class DevicePluginOnV124 : public DevicePluginInProcess {
 protected:
  DevicePluginOnV124() : DevicePluginInProcess(testing::KubeletEra::kV124) {}

  // Runs the probes of a dead kubelet.sock that are due at once (after a lost stream, and
  // once more after the first finds no listener; "at once" is the timer's 1 ms floor) and
  // waits for their answers (meanwhile the answer's 15 s watchdog is the next alarm); true
  // when the safety net's next look is 500 ms away, as the policy says.
  bool SettleOnTheSafetyNet() {
    testing::ManualScheduler& loop = host_.scheduler();
    for (int step = 0; step < 10; ++step) {
      if (loop.NextAlarm() == loop.Now() + 500ms) return true;
      if (loop.NextAlarm() == loop.Now() + 1ms) {
        loop.Advance(1ms);
      } else if (!loop.AwaitPosted(kRealWait)) {
        return false;
      }
    }
    return false;
  }
};

// A v1.24 kubelet takes the options from the Register request, never asking for them: they
// are what our socket answers, so a perHca pool offers GetPreferredAllocation there too.
TEST_F(DevicePluginOnV124, TheRegisterRequestCarriesTheOptionsOurSocketAnswers) {
  ASSERT_TRUE(kubelet_.Start().ok());
  Start({}, Parse(kPerHcaPool));
  ASSERT_TRUE(RunUntil(Registered));
  const SimState state = kubelet_.State();
  ASSERT_TRUE(state.resources.at("rdma/a").has_options);
  EXPECT_TRUE(state.resources.at("rdma/a").options.get_preferred_allocation_available());
  EXPECT_FALSE(state.resources.at("rdma/a").options.pre_start_required());
}

// A restart is seen in the order it happened, whichever of its ready sources the loop takes
// first. The new kubelet removed our socket and created kubelet.sock before it could answer
// anything, so a Register it answers finds those events queued: they reach the front end
// before the answer (Host::CatchUpKubeletWatch). Seen after it, a v1.24 kubelet's answer
// ("no stream yet": it dials us afterwards) followed by our socket's removal read as a
// second loss and sent a second Register (CI at 46c77d4, lifecycle_e2e_test's dead-socket
// restart). Here the loop reads the kernel's queue after the answer, as it did there.
TEST_F(DevicePluginOnV124, ARestartsDirectoryEventsReachTheFrontEndBeforeItsAnswer) {
  ASSERT_TRUE(kubelet_.Start().ok());
  Start({}, Parse(kPool));
  ASSERT_TRUE(RunUntil(Registered));
  ASSERT_TRUE(RunUntilCollected([](const metrics::View& v) {
    return v.resources.at(0).registered && v.resources.at(0).open_streams == 1;
  }));
  kubelet_.Kill();  // its stream ends; kubelet.sock stays, dead
  ASSERT_TRUE(
      RunUntilCollected([](const metrics::View& v) { return !v.resources.at(0).registered; }));
  ASSERT_TRUE(SettleOnTheSafetyNet());

  // The new kubelet: its cleanup removes our socket, then it serves a new kubelet.sock. The
  // kernel queues both events; the loop has not read them yet.
  const std::string own = SocketIn(host_.Dirs().DevicePlugins());
  ASSERT_TRUE(kubelet_.Start().ok());
  ASSERT_FALSE(fd::PathExists(own));
  using Kind = frontend::KubeletEvent::Kind;
  host_.QueueKubeletEvent(front_end_.get(),
                          {Kind::kFileDeleted, host_.Dirs().DevicePlugins(), fd::BaseName(own)});
  host_.QueueKubeletEvent(front_end_.get(), {Kind::kKubeletSocketCreated, {}, {}});
  // The safety net's probe finds the new kubelet listening and registers; its answer is
  // handled before the loop reads the queue.
  host_.scheduler().Advance(std::chrono::duration_cast<std::chrono::milliseconds>(
      *host_.scheduler().NextAlarm() - host_.scheduler().Now()));
  ASSERT_TRUE(kubelet_.WaitFor(  // the loop runs nothing meanwhile
      [](const SimState& s) { return s.resources.at("rdma/a").register_calls == 2; }, kRealWait));
  ASSERT_TRUE(host_.scheduler().AwaitPosted(kRealWait));  // the answer
  host_.CatchUpKubeletWatch();                            // the loop reads the queue

  ASSERT_TRUE(RunUntil([](const SimState& s) { return s.resources.at("rdma/a").stream_open; }));
  ASSERT_TRUE(RunUntilCollected([](const metrics::View& v) {
    return v.resources.at(0).registered && v.resources.at(0).open_streams == 1;
  }));
  EXPECT_TRUE(fd::PathExists(own));  // served again
  const SimState state = kubelet_.State();
  EXPECT_EQ(state.resources.at("rdma/a").register_calls, 2);  // one per kubelet
  EXPECT_EQ(state.resources.at("rdma/a").registrations, 2);
  EXPECT_EQ(Collect().resources.at(0).registrations, 2u);
}

}  // namespace
}  // namespace rdmadp::deviceplugin
