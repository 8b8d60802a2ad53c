// The pure readers behind per-container RDMA use (pkg/usage): the rdma controller's files as
// the kernel prints them (kernel/cgroup/rdma.c, rdmacg_resource_read), and the cgroup names
// of the kubelet's two drivers and the runtimes, and its container log links, with the
// kubelet's own test tables (pkg/kubelet/cm/cgroup_manager_linux_test.go,
// pod_container_manager_linux_test.go, pkg/kubelet/kuberuntime/legacy_test.go).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "pkg/report/pods_report.h"
#include "pkg/usage/cgroup_scan.h"
#include "pkg/usage/container_cgroup.h"
#include "pkg/usage/log_links.h"
#include "pkg/usage/pod_resources.h"
#include "pkg/usage/qp_owners.h"
#include "pkg/usage/rdma_cgroup.h"
#include "pkg/usage/usage_view.h"
#include "pkg/usage/verdict.h"
#include "test/support/fake_pod_resources.h"
#include "test/support/temp_dir.h"

namespace rdmadp::usage {
namespace {

using ::testing::HasSubstr;
using Counts = std::map<std::string, RdmaCgroupCounts>;

// ---- rdma.current / rdma.max -------------------------------------------------------------

// What print_rpool_values writes: each pair followed by a space, then the newline.
TEST(RdmaCgroupFile, ReadsWhatTheKernelPrints) {
  struct Case {
    std::string text;
    Counts want;
  };
  const Case cases[] = {
      {"", {}},  // no RDMA device registered
      {"mlx5_0 hca_handle=0 hca_object=0 \n", {{"mlx5_0", {0, 0}}}},
      {"mlx5_0 hca_handle=1 hca_object=23 \nmlx5_1 hca_handle=0 hca_object=0 \n",
       {{"mlx5_0", {1, 23}}, {"mlx5_1", {0, 0}}}},
      {"mlx5_0 hca_handle=max hca_object=max \n", {{"mlx5_0", {kRdmaCgroupMax, kRdmaCgroupMax}}}},
      {"mlx5_0 hca_handle=max hca_object=max \nmlx5_1 hca_handle=2 hca_object=max \n",
       {{"mlx5_0", {kRdmaCgroupMax, kRdmaCgroupMax}}, {"mlx5_1", {2, kRdmaCgroupMax}}}},
      {"rxe0 hca_handle=0 hca_object=0 \n", {{"rxe0", {0, 0}}}},
      {"mlx5_bond_0 hca_handle=3 hca_object=2147483646 \n", {{"mlx5_bond_0", {3, 2147483646}}}},
      // The documentation's examples, without the trailing space.
      {"mlx4_0 hca_handle=2 hca_object=2000\nocrdma1 hca_handle=3 hca_object=max\n",
       {{"mlx4_0", {2, 2000}}, {"ocrdma1", {3, kRdmaCgroupMax}}}},
      // A key a later kernel adds is skipped; no newline at the end reads the same.
      {"mlx5_0 hca_handle=1 hca_object=4 hca_future=9", {{"mlx5_0", {1, 4}}}},
  };
  for (const Case& c : cases) {
    auto got = ParseRdmaCgroupFile(c.text);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

TEST(RdmaCgroupFile, RefusesWhatTheKernelNeverPrintsNamingTheLine) {
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"hca_handle=1 hca_object=2 \n", "line 1: no device name"},
      {"mlx5_0 hca_handle=1 \nmlx5_1 hca_handle \n", "line 2: \"hca_handle\" is not key=value"},
      {"mlx5_0 hca_handle=-1 hca_object=0 \n", "line 1: hca_handle=-1 is not a count"},
      {"mlx5_0 hca_handle=2147483648 \n", "line 1: hca_handle=2147483648 is not a count"},
      {"mlx5_0 hca_object=12x \n", "line 1: hca_object=12x is not a count"},
      {"mlx5_0 hca_handle=1 \nmlx5_0 hca_handle=2 \n", "line 2: device mlx5_0 twice"},
      {std::string(64, 'd') + " hca_handle=1 \n", "line 1: a device name of 64 bytes"},
  };
  for (const Case& c : cases) {
    auto got = ParseRdmaCgroupFile(c.text);
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.error));
  }
}

// Memory is bounded whatever the file holds: at most kMaxRdmaCgroupDevices devices.
TEST(RdmaCgroupFile, AFileOfManyDevicesIsRefusedNotStored) {
  std::string text;
  for (size_t i = 0; i <= kMaxRdmaCgroupDevices; ++i) {
    text += "d" + std::to_string(i) + " hca_handle=0 hca_object=0 \n";
  }
  auto got = ParseRdmaCgroupFile(text);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("line 1025: more than 1024 devices"));
}

// ---- the kubelet's cgroup names ----------------------------------------------------------

struct NameCase {
  std::vector<std::string> name;
  std::string want;
};

// TestCgroupNameToSystemd, TestCgroupNameWithEmptyPartToSystemd.
TEST(KubeletCgroupPath, SystemdAsTheKubeletWritesIt) {
  const std::string uid = "pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d";
  const std::string escaped = "pod_6c1a4e95_6bb6_11e6_bc26_28d2444e470d";
  const NameCase cases[] = {
      {{}, "/"},
      {{"Burstable"}, "/Burstable.slice"},
      {{"Burstable", "pod-123"}, "/Burstable.slice/Burstable-pod_123.slice"},
      {{"BestEffort", uid}, "/BestEffort.slice/BestEffort-" + escaped + ".slice"},
      {{"kubepods"}, "/kubepods.slice"},
      {{"Burstable", ""}, "/Burstable.slice"},
      {{"", "Burstable", "pod-123"}, "/Burstable.slice/Burstable-pod_123.slice"},
      {{"BestEffort", "", uid, ""}, "/BestEffort.slice/BestEffort-" + escaped + ".slice"},
      {{"kubepods", ""}, "/kubepods.slice"},
  };
  for (const NameCase& c : cases) {
    EXPECT_EQ(KubeletCgroupPath(c.name, CgroupDriver::kSystemd), c.want);
  }
}

// TestCgroupNameToSystemdBasename: the last component of the same.
TEST(KubeletCgroupPath, SystemdBasenames) {
  const NameCase cases[] = {
      {{"system"}, "system.slice"},
      {{"system", "Burstable"}, "system-Burstable.slice"},
      {{"Burstable", "pod-123"}, "Burstable-pod_123.slice"},
      {{"test", "a", "b"}, "test-a-b.slice"},
      {{"test", "a", "b", "Burstable"}, "test-a-b-Burstable.slice"},
      {{"Burstable"}, "Burstable.slice"},
      {{"BestEffort", "pod-6c1a4e95-6bb6-11e6-bc26-28d2444e470d"},
       "BestEffort-pod_6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice"},
  };
  for (const NameCase& c : cases) {
    const std::string path = KubeletCgroupPath(c.name, CgroupDriver::kSystemd);
    EXPECT_EQ(path.substr(path.rfind('/') + 1), c.want);
  }
}

// TestCgroupNameToCgroupfs.
TEST(KubeletCgroupPath, Cgroupfs) {
  EXPECT_EQ(KubeletCgroupPath({}, CgroupDriver::kCgroupfs), "/");
  EXPECT_EQ(KubeletCgroupPath({"Burstable"}, CgroupDriver::kCgroupfs), "/Burstable");
}

// TestGetPodContainerName: a pod's cgroup, per QoS class and driver.
TEST(KubeletCgroupPath, PodCgroupsPerQosClassAndDriver) {
  struct Case {
    QosClass qos;
    CgroupDriver driver;
    std::string uid;
    std::string want;
  };
  const Case cases[] = {
      {QosClass::kGuaranteed, CgroupDriver::kCgroupfs, "fake-uid-1", "/kubepods/podfake-uid-1"},
      {QosClass::kBurstable, CgroupDriver::kCgroupfs, "fake-uid-2",
       "/kubepods/burstable/podfake-uid-2"},
      {QosClass::kBestEffort, CgroupDriver::kCgroupfs, "fake-uid-3",
       "/kubepods/besteffort/podfake-uid-3"},
      {QosClass::kGuaranteed, CgroupDriver::kSystemd, "fake-uid-4",
       "/kubepods.slice/kubepods-podfake_uid_4.slice"},
      {QosClass::kBurstable, CgroupDriver::kSystemd, "fake-uid-5",
       "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podfake_uid_5.slice"},
      {QosClass::kBestEffort, CgroupDriver::kSystemd, "fake-uid-6",
       "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podfake_uid_6.slice"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(KubeletCgroupPath(PodCgroupName({"kubepods"}, c.qos, c.uid), c.driver), c.want);
  }
}

// ---- a cgroup's container ----------------------------------------------------------------

constexpr char kUid[] = "6c1a4e95-6bb6-11e6-bc26-28d2444e470d";
const std::string kId(64, 'a');

// Every driver, QoS class and runtime: the container's cgroup is found, and what is below
// it (crun's "container", a systemd inside the container) belongs to it.
TEST(ContainerOfCgroup, EveryDriverQosClassAndRuntime) {
  struct Runtime {
    std::string systemd;  // the container's cgroup under the systemd driver
    std::string cgroupfs;
  };
  const Runtime runtimes[] = {{"cri-containerd-" + kId + ".scope", kId},
                              {"crio-" + kId + ".scope", "crio-" + kId},
                              {"docker-" + kId + ".scope", kId}};
  const QosClass classes[] = {QosClass::kGuaranteed, QosClass::kBurstable, QosClass::kBestEffort};
  for (const std::vector<std::string>& root :
       {std::vector<std::string>{"kubepods"}, std::vector<std::string>{"kubelet", "kubepods"}}) {
    for (QosClass qos : classes) {
      for (const Runtime& rt : runtimes) {
        for (CgroupDriver driver : {CgroupDriver::kSystemd, CgroupDriver::kCgroupfs}) {
          const std::string pod = KubeletCgroupPath(PodCgroupName(root, qos, kUid), driver);
          const std::string own =
              pod + "/" + (driver == CgroupDriver::kSystemd ? rt.systemd : rt.cgroupfs);
          const ContainerCgroup want{.pod_uid = kUid,
                                     .container_id = kId,
                                     .qos = qos,
                                     .driver = driver,
                                     .path = own.substr(1)};
          EXPECT_EQ(ContainerOfCgroup(own), want) << own;
          EXPECT_EQ(ContainerOfCgroup(own + "/container"), want) << own;
          EXPECT_EQ(ContainerOfCgroup(own + "/init.scope"), want) << own;
          EXPECT_EQ(ContainerOfCgroup(pod), std::nullopt) << pod;  // the pod's own cgroup
        }
      }
    }
  }
}

// As a process in a private cgroup namespace reads its /proc/<pid>/cgroup, and on a kind
// node's host (the node is a container itself).
TEST(ContainerOfCgroup, NamespaceRelativeAndNestedPaths) {
  const std::string systemd_pod =
      "kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice";
  const std::string own = systemd_pod + "/cri-containerd-" + kId + ".scope";
  auto got = ContainerOfCgroup("/../../" + own);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->path, own);
  got = ContainerOfCgroup("/system.slice/docker-" + std::string(64, 'b') + ".scope/" + own);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->container_id, kId);
  EXPECT_EQ(got->qos, QosClass::kBurstable);
}

// Not a container's: the kubelet's own, the QoS classes', services, CRI-O's conmon, a
// name that is not a 64-digit ID, a UID the kubelet would not parse (TestIsCgroupPod:
// "pod" + a UID containing "pod").
TEST(ContainerOfCgroup, AnythingElseIsNoContainer) {
  const std::string cgroupfs_pod = std::string("kubepods/burstable/pod") + kUid;
  const std::string systemd_pod =
      "kubepods.slice/kubepods-pod6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice";
  for (const std::string& path : {
           std::string("/"),
           std::string("kubepods"),
           std::string("kubepods/burstable"),
           std::string("kubepods.slice/kubepods-besteffort.slice"),
           std::string("system.slice/containerd.service"),
           std::string("system.slice/kubelet.service"),
           std::string("system"),
           std::string("system/kubelet"),
           cgroupfs_pod + "/crio-conmon-" + kId,
           systemd_pod + "/crio-conmon-" + kId + ".scope",
           cgroupfs_pod + "/" + std::string(63, 'a'),
           cgroupfs_pod + "/" + std::string(64, 'A'),
           systemd_pod + "/cri-containerd-" + kId,  // a systemd pod's container is a scope
           cgroupfs_pod + "/cri-containerd-" + kId + ".scope",
           "kubepods/podthis-uid-contains-reserved-word-pod/" + kId,
           "kubepods/pod/" + kId,
       }) {
    EXPECT_EQ(ContainerOfCgroup(path), std::nullopt) << path;
  }
}

TEST(ContainerOfCgroup, QosClassNamesAreTheApis) {
  EXPECT_EQ(QosClassName(QosClass::kGuaranteed), "Guaranteed");
  EXPECT_EQ(QosClassName(QosClass::kBurstable), "Burstable");
  EXPECT_EQ(QosClassName(QosClass::kBestEffort), "BestEffort");
}

// ---- the verdict -------------------------------------------------------------------------

using std::chrono::minutes;
constexpr auto kGrace = minutes(10);

TEST(Verdict, QueuePairsOrObjectsAreUseContextsAreNot) {
  struct Case {
    UseSample sample;
    Clock::duration held;
    Judgement want;
  };
  const std::optional<int64_t> none;
  const Case cases[] = {
      // QPs are use at once, grace or not.
      {{.qps = 2, .hca_handles = none, .hca_objects = none},
       minutes(0),
       {Verdict::kUsed, UseSource::kQueuePairs}},
      // No QP: in grace, then unused from the grace on.
      {{.qps = 0, .hca_handles = none, .hca_objects = none},
       minutes(9),
       {Verdict::kInGrace, UseSource::kQueuePairs}},
      {{.qps = 0, .hca_handles = none, .hca_objects = none},
       kGrace,
       {Verdict::kUnused, UseSource::kQueuePairs}},
      // Contexts alone (NCCL opens one on every HCA): unused.
      {{.qps = none, .hca_handles = 4, .hca_objects = 0},
       minutes(30),
       {Verdict::kUnused, UseSource::kCgroupObjects}},
      {{.qps = none, .hca_handles = 4, .hca_objects = 0},
       minutes(1),
       {Verdict::kInGrace, UseSource::kCgroupObjects}},
      {{.qps = none, .hca_handles = 1, .hca_objects = 12},
       minutes(30),
       {Verdict::kUsed, UseSource::kCgroupObjects}},
      // No QP in the dumps, but objects in the cgroup: DevX QPs, which the dumps miss. Use.
      {{.qps = 0, .hca_handles = 1, .hca_objects = 30},
       minutes(30),
       {Verdict::kUsed, UseSource::kCgroupObjects}},
      // Both sources, both empty.
      {{.qps = 0, .hca_handles = 2, .hca_objects = 0},
       minutes(30),
       {Verdict::kUnused, UseSource::kQueuePairs}},
      // No source at all: unknown, at any age.
      {{.qps = none, .hca_handles = none, .hca_objects = none},
       minutes(30),
       {Verdict::kUnknown, UseSource::kNone}},
  };
  for (const Case& c : cases) {
    const Judgement got = Judge(c.sample, c.held, kGrace);
    EXPECT_EQ(got, c.want) << VerdictName(got.verdict) << "/" << UseSourceName(got.source)
                           << " for qps " << c.sample.qps.value_or(-1) << " objects "
                           << c.sample.hca_objects.value_or(-1);
  }
}

// A change is reported once, when it happens: the first verdict, the end of the grace, the
// first QP; a container gone is forgotten, and one that comes back starts a new grace.
TEST(VerdictBook, ReportsEachChangeOnceAndForgetsWhatWent) {
  VerdictBook book;
  const Clock::time_point t0{};
  const UseSample idle{.qps = 0, .hca_handles = 1, .hca_objects = 0};
  const UseSample busy{.qps = 3, .hca_handles = 1, .hca_objects = 40};
  auto keys = [](const std::vector<VerdictBook::Change>& changes) {
    std::vector<std::string> out;
    for (const auto& c : changes)
      out.push_back(c.key + ":" + std::string(VerdictName(c.after.verdict)));
    return out;
  };
  EXPECT_THAT(keys(book.Round(t0, {{"a", idle}, {"b", busy}}, kGrace)),
              ::testing::ElementsAre("a:in grace", "b:used"));
  EXPECT_TRUE(book.Round(t0 + minutes(5), {{"a", idle}, {"b", busy}}, kGrace).empty());
  auto changes = book.Round(t0 + kGrace, {{"a", idle}, {"b", busy}}, kGrace);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].key, "a");
  EXPECT_EQ(changes[0].before, (Judgement{Verdict::kInGrace, UseSource::kQueuePairs}));
  EXPECT_EQ(changes[0].after, (Judgement{Verdict::kUnused, UseSource::kQueuePairs}));
  EXPECT_TRUE(book.Round(t0 + minutes(11), {{"a", idle}, {"b", busy}}, kGrace).empty());
  EXPECT_THAT(keys(book.Round(t0 + minutes(12), {{"a", busy}}, kGrace)),
              ::testing::ElementsAre("a:used"));
  EXPECT_EQ(book.entries().size(), 1u);  // b went
  EXPECT_THAT(keys(book.Round(t0 + minutes(13), {{"a", busy}, {"b", idle}}, kGrace)),
              ::testing::ElementsAre("b:in grace"));
  EXPECT_EQ(book.entries().at("b").since, t0 + minutes(13));
}

// A container already running when first seen (its log link's age) is judged from its
// start: a restart of ours does not give every idle container a new grace.
TEST(VerdictBook, AContainerFirstSeenRunningIsJudgedFromItsStart) {
  VerdictBook book;
  const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1);
  UseSample idle{.qps = std::nullopt, .hca_handles = 1, .hca_objects = 0, .age = minutes(25)};
  auto changes = book.Round(t0, {{"old", idle}}, kGrace);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].after, (Judgement{Verdict::kUnused, UseSource::kCgroupObjects}));
  EXPECT_EQ(book.entries().at("old").since, t0 - minutes(25));
  idle.age = minutes(4);  // a later sample's age never moves the start
  EXPECT_TRUE(book.Round(t0 + minutes(1), {{"old", idle}}, kGrace).empty());
  EXPECT_EQ(book.entries().at("old").since, t0 - minutes(25));
}

// ---- the kubelet's container log links --------------------------------------------------

const std::string kIdA(64, 'a');
const std::string kPodUid = kUid;

// legacy_test.go's TestLogSymLink and TestLegacyLogSymLink, with fixed strings for its
// random ones of the same lengths: the name is cut to 251 bytes and ".log" added.
TEST(KubeletLogLink, NamesAsTheKubeletCutsThem) {
  const std::string pod(128, 'p');
  const std::string container(70, 'c');
  const std::string id(80, 'i');
  const std::string ns(10, 'n');
  EXPECT_EQ(KubeletLogLinkName(pod, ns, container, id),
            (pod + "_" + ns + "_" + container + "-" + id).substr(0, 251) + ".log");
  EXPECT_EQ(KubeletLogLinkName("web-0", "default", "app", kIdA),
            "web-0_default_app-" + kIdA + ".log");
}

TEST(KubeletLogLink, ReadsTheNamesOfALinkAndItsTarget) {
  const std::string target = "/var/log/pods/team-a_trainer-0_" + kPodUid + "/nccl/3.log";
  auto names = ParseKubeletLogLink(KubeletLogLinkName("trainer-0", "team-a", "nccl", kIdA), target);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (ContainerNames{.pod_namespace = "team-a",
                                    .pod = "trainer-0",
                                    .pod_uid = kPodUid,
                                    .container = "nccl",
                                    .container_id = kIdA,
                                    .restart_count = 3}));
  // A static pod's UID is its hash; --pod-logs-dir may be anywhere; a relative target too.
  const std::string hash = "33d556edd3ae8ef21980288cef77ae8b";
  auto static_pod =
      ParseKubeletLogLink(KubeletLogLinkName("etcd-node1", "kube-system", "etcd", kIdA),
                          "../../data/pods/kube-system_etcd-node1_" + hash + "/etcd/0.log");
  ASSERT_TRUE(static_pod.ok()) << static_pod.status();
  EXPECT_EQ(static_pod->pod_uid, hash);
}

TEST(KubeletLogLink, WhatDoesNotMatchIsSaidNeverGuessed) {
  const std::string target = "/var/log/pods/ns_pod_" + kPodUid + "/c/0.log";
  const std::string good = KubeletLogLinkName("pod", "ns", "c", kIdA);
  struct Case {
    std::string name, target, want;
  };
  const std::string long_pod(200, 'p');
  const std::string long_target = "/var/log/pods/ns_" + long_pod + "_" + kPodUid + "/cc/0.log";
  const Case cases[] = {
      {good, "/var/log/pods/ns_pod/c/0.log", "is not <ns>_<pod>_<uid>/<container>/<n>.log"},
      {good, "/var/log/pods/ns_pod_" + kPodUid + "_x/c/0.log", "is not <ns>_<pod>_<uid>"},
      {good, "/var/log/pods/ns_pod_" + kPodUid + "/c/zero.log", "is not <ns>_<pod>_<uid>"},
      {good, "/var/log/pods/ns_pod_" + kPodUid + "/c/0.txt", "is not <ns>_<pod>_<uid>"},
      {good, "/var/log/pods/ns_pod_UID/c/0.log", "is not <ns>_<pod>_<uid>"},
      {good, "0.log", "is not <ns>_<pod>_<uid>"},
      {"pod_ns_c-" + kIdA + ".txt", target, "not a .log link"},
      {KubeletLogLinkName("other", "ns", "c", kIdA), target, "does not name the pod and container"},
      {KubeletLogLinkName("pod", "ns", "c", kIdA.substr(0, 12)), target,
       "container ID is not 64 hex digits"},
      {KubeletLogLinkName("pod", "ns", "c", std::string(64, 'A')), target,
       "container ID is not 64 hex digits"},
      // 200 + 1 + 2 + 1 + 2 + 1 + 64 > 251: the ID is cut.
      {KubeletLogLinkName(long_pod, "ns", "cc", kIdA), long_target, "cut to 255 bytes"},
      {KubeletLogLinkName(long_pod, "ns", "cc", kIdA).substr(0, 170) + ".log", long_target,
       "does not name the pod"},
  };
  for (const Case& c : cases) {
    auto got = ParseKubeletLogLink(c.name, c.target);
    ASSERT_FALSE(got.ok()) << c.name << " -> " << c.target;
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.want)) << c.name;
    EXPECT_THAT(std::string(got.status().message()), ::testing::StartsWith(c.name + ": "));
  }
  const std::string very_long_pod(250, 'p');  // cut inside the names
  auto cut_in_names =
      ParseKubeletLogLink(KubeletLogLinkName(very_long_pod, "ns", "c", kIdA),
                          "/var/log/pods/ns_" + very_long_pod + "_" + kPodUid + "/c/0.log");
  ASSERT_FALSE(cut_in_names.ok());
  EXPECT_THAT(std::string(cut_in_names.status().message()), HasSubstr("cut to 255 bytes"));
}

// A directory as the kubelet keeps it: links read by name and text (their targets are not
// mounted, so they dangle), a file a runtime wrote there passed over, a link not understood
// said, the cap said.
TEST(KubeletLogLink, ScansTheLinksOfADirectory) {
  testing::TempDir dir;
  const std::string id_b(64, 'b');
  std::filesystem::create_symlink("/var/log/pods/ns_pod_" + kPodUid + "/c/0.log",
                                  dir.path() + "/" + KubeletLogLinkName("pod", "ns", "c", kIdA));
  std::filesystem::create_symlink("/var/log/pods/ns_pod_" + kPodUid + "/d/1.log",
                                  dir.path() + "/" + KubeletLogLinkName("pod", "ns", "d", id_b));
  std::filesystem::create_symlink("/elsewhere", dir.path() + "/stray.log");
  std::ofstream(dir.path() + "/plain.log") << "a log written in place\n";
  // The link's own time (when the kubelet made it), never its target's.
  const timespec made[2] = {{1700000000, 0}, {1700000000, 0}};
  ASSERT_EQ(
      ::utimensat(AT_FDCWD, (dir.path() + "/" + KubeletLogLinkName("pod", "ns", "c", kIdA)).c_str(),
                  made, AT_SYMLINK_NOFOLLOW),
      0);

  const LogLinkScan scan = ScanKubeletLogLinks(dir.path(), 10);
  ASSERT_EQ(scan.containers.size(), 2u);
  EXPECT_EQ(scan.containers[0].names.container, "c");
  EXPECT_EQ(scan.containers[0].names.container_id, kIdA);
  EXPECT_EQ(scan.containers[1].names.container, "d");
  EXPECT_EQ(scan.containers[1].names.restart_count, 1);
  EXPECT_EQ(scan.containers[0].started,
            std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)));
  ASSERT_EQ(scan.problems.size(), 1u);
  EXPECT_THAT(scan.problems[0], ::testing::StartsWith("stray.log: link target \"/elsewhere\""));

  const LogLinkScan capped = ScanKubeletLogLinks(dir.path(), 1);
  EXPECT_EQ(capped.containers.size(), 1u);
  EXPECT_THAT(capped.problems.back(), HasSubstr("more than 1 links in"));

  const LogLinkScan missing = ScanKubeletLogLinks(dir.path() + "/none", 10);
  EXPECT_TRUE(missing.containers.empty());
  ASSERT_EQ(missing.problems.size(), 1u);
  EXPECT_THAT(missing.problems[0], HasSubstr("No such file or directory"));
}

// ---- which containers hold our devices: the kubelet's pod-resources List ------------------

using testing::FakeContainer;
using testing::FakePod;
using testing::FakePodResources;

class PodResourcesLister : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    auto fake = FakePodResources::Start(socket_, GetParam());
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = std::move(*fake);
  }
  absl::StatusOr<PodResourcesList> List(size_t max = 100) {
    return ListOurAllocations(socket_, std::chrono::seconds(10), ours_, max);
  }
  testing::TempDir dir_;
  const std::string socket_ = dir_.path() + "/kubelet.sock";
  const Ours ours_{.resources = {"rdma/hca_a", "rdma/hca_b"}, .dra_driver = "rdma.example.io"};
  std::unique_ptr<FakePodResources> fake_;
};

// The containers holding our resources, in the kubelet's order (sidecars first), each with
// only our resources' devices; others, ordinary init containers, other drivers' claims left
// out; a finished pod's before 1.34 (every pod the kubelet knows), DRA devices from 1.34.
TEST_P(PodResourcesLister, KeepsTheContainersThatHoldOurDevices) {
  const bool v134 = GetParam() >= 34;
  fake_->SetPods({
      FakePod{.name = "trainer-0",
              .pod_namespace = "team-a",
              .uid = kPodUid,
              .containers = {FakeContainer("setup", {{"rdma/hca_a", {"1"}}}).Init(),
                             FakeContainer("proxy", {{"rdma/hca_b", {"7"}}}).Sidecar(),
                             FakeContainer("nccl",
                                           {{"nvidia.com/gpu", {"GPU-1"}}, {"rdma/hca_a", {"3"}}}),
                             FakeContainer("idle")},
              .finished = false},
      FakePod{.name = "done",
              .pod_namespace = "team-a",
              .uid = "u2",
              .containers = {FakeContainer("c", {{"rdma/hca_a", {"4"}}})},
              .finished = true},
      FakePod{.name = "claims",
              .pod_namespace = "team-b",
              .uid = "u3",
              .containers = {FakeContainer(
                  "c", {},
                  {{"team-b", "rdma", "rdma.example.io", "node1-rdma_a", "mlx5-0"},
                   {"team-b", "gpu", "gpu.example.com", "node1", "gpu-0"}})}},
  });
  auto list = List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->problems.empty());
  std::vector<ContainerAllocations> want = {
      {.pod_namespace = "team-a",
       .pod = "trainer-0",
       .container = "proxy",
       .device_ids = {{"rdma/hca_b", {"7"}}},
       .dra_devices = {}},
      {.pod_namespace = "team-a",
       .pod = "trainer-0",
       .container = "nccl",
       .device_ids = {{"rdma/hca_a", {"3"}}},
       .dra_devices = {}},
  };
  if (!v134) {
    want.push_back({.pod_namespace = "team-a",
                    .pod = "done",
                    .container = "c",
                    .device_ids = {{"rdma/hca_a", {"4"}}},
                    .dra_devices = {}});
  } else {
    want.push_back({.pod_namespace = "team-b",
                    .pod = "claims",
                    .container = "c",
                    .device_ids = {},
                    .dra_devices = {{"team-b", "rdma", "node1-rdma_a", "mlx5-0"}}});
  }
  EXPECT_EQ(list->containers, want);
  EXPECT_EQ(fake_->calls(), 1);
}

TEST_P(PodResourcesLister, PastTheCapIsLeftOutAndSaid) {
  std::vector<FakePod> pods;
  for (int i = 0; i < 3; ++i) {
    pods.push_back({.name = "p" + std::to_string(i),
                    .pod_namespace = "ns",
                    .uid = std::to_string(i),
                    .containers = {FakeContainer("c", {{"rdma/hca_a", {"1"}}})},
                    .finished = false});
  }
  fake_->SetPods(std::move(pods));
  auto list = List(2);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->containers.size(), 2u);
  EXPECT_THAT(list->problems,
              ::testing::ElementsAre("more than 2 containers hold our devices; 1 left out"));
}

// An answer past the cap is refused whole, never stored. The cap is the kubelet client's
// own 16 MiB; proven here with 64 KiB, since serializing 17 MiB under ThreadSanitizer outlasts
// any deadline (CI, 2026-12-07: "Deadline Exceeded" instead of the cap).
TEST_P(PodResourcesLister, AnAnswerPastTheCapIsAnError) {
  EXPECT_EQ(kMaxPodResourcesBytes, 16 * 1024 * 1024);
  fake_->SetPods(
      {{.name = "huge",
        .pod_namespace = "ns",
        .uid = "u",
        .containers = {FakeContainer("c", {{"rdma/hca_a", {std::string(65 << 10, 'x')}}})},
        .finished = false}});
  auto capped = ListOurAllocations(socket_, std::chrono::seconds(60), ours_, 100, 64 << 10);
  ASSERT_FALSE(capped.ok());
  EXPECT_THAT(std::string(capped.status().message()), HasSubstr("code 8"));  // RESOURCE_EXHAUSTED
  auto within = ListOurAllocations(socket_, std::chrono::seconds(60), ours_, 100, 1 << 20);
  ASSERT_TRUE(within.ok()) << within.status();
  EXPECT_EQ(within->containers.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Kubelet, PodResourcesLister, ::testing::Values(33, 34),
                         [](const auto& param_info) {
                           return "v1_" + std::to_string(param_info.param);
                         });

TEST(PodResourcesListing, NoKubeletIsAnErrorNamingTheSocket) {
  testing::TempDir dir;
  auto list = ListOurAllocations(dir.path() + "/kubelet.sock", std::chrono::seconds(2),
                                 Ours{.resources = {"rdma/hca_a"}, .dra_driver = ""}, 10);
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(std::string(list.status().message()),
              ::testing::StartsWith("pod-resources List on " + dir.path() + "/kubelet.sock: "));
}

// ---- the join: who holds our devices, which container that is, what it holds ---------------

class Join : public ::testing::Test {
 protected:
  using SysTime = std::chrono::system_clock::time_point;
  static std::string Id(char c) { return std::string(64, c); }
  static ContainerAllocations Held(std::string pod, std::string container,
                                   std::string resource = "rdma/hca_a") {
    return {.pod_namespace = "ns",
            .pod = std::move(pod),
            .container = std::move(container),
            .device_ids = {{std::move(resource), {"1"}}},
            .dra_devices = {}};
  }
  void Link(const std::string& pod, const std::string& container, char id, SysTime started,
            const std::string& uid = "uid-1") {
    links_.containers.push_back({{.pod_namespace = "ns",
                                  .pod = pod,
                                  .pod_uid = uid,
                                  .container = container,
                                  .container_id = Id(id),
                                  .restart_count = 0},
                                 started});
  }
  void Cgroup(char id, std::optional<std::map<std::string, RdmaCgroupCounts>> counts,
              const std::string& uid = "uid-1") {
    ContainerRdma c;
    c.container = {.pod_uid = uid,
                   .container_id = Id(id),
                   .qos = QosClass::kBurstable,
                   .driver = CgroupDriver::kSystemd,
                   .path = "kubepods.slice/x/" + Id(id)};
    c.counts = std::move(counts);
    if (!c.counts) c.problem = "no rdma.current";
    cgroups_.containers.push_back(std::move(c));
  }
  UsageView Run() { return JoinUsage(held_, links_, cgroups_, hcas_, now_); }

  const SysTime now_ = SysTime(std::chrono::hours(500000));
  PodResourcesList held_;
  LogLinkScan links_;
  CgroupScan cgroups_;
  OurHcas hcas_{
      .by_resource = {{"rdma/hca_a", {"mlx5_0", "mlx5_1"}}, {"rdma/hca_b", {"mlx5_2"}}},
      .by_dra_pool = {{"node1/rdma-c",
                       {{"hca-0000-3b-00-0", {"mlx5_3"}}, {"hca-0000-3b-00-1", {"mlx5_4"}}}}},
      .resource_of_pool = {}};
};

TEST_F(Join, EachContainerGetsItsIdStartAndItsHcasCounts) {
  held_.containers = {Held("trainer", "nccl"), Held("trainer", "idle", "rdma/hca_b")};
  Link("trainer", "nccl", 'a', now_ - minutes(30));
  Link("trainer", "idle", 'b', now_ - minutes(3));
  Cgroup('a', std::map<std::string, RdmaCgroupCounts>{
                  {"mlx5_0", {1, 40}}, {"mlx5_1", {1, 2}}, {"mlx5_2", {5, 5}}});
  Cgroup('b', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {0, 0}}, {"mlx5_2", {1, 0}}});
  const UsageView view = Run();
  ASSERT_EQ(view.containers.size(), 2u);
  const ContainerUse& nccl = view.containers[0];
  EXPECT_EQ(nccl.hcas, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  EXPECT_EQ(nccl.names->container_id, Id('a'));
  EXPECT_EQ(nccl.sample.hca_handles, 2);  // mlx5_2 is not its own
  EXPECT_EQ(nccl.sample.hca_objects, 42);
  EXPECT_EQ(nccl.sample.qps, std::nullopt);
  EXPECT_EQ(nccl.sample.age, minutes(30));
  EXPECT_EQ(nccl.missing, "");
  EXPECT_EQ(UseKey(nccl), "uid-1/nccl");
  const ContainerUse& idle = view.containers[1];
  EXPECT_EQ(idle.counts, (std::map<std::string, RdmaCgroupCounts>{{"mlx5_2", {1, 0}}}));
  EXPECT_EQ(idle.sample.hca_objects, 0);
  EXPECT_TRUE(view.foreign.empty());
  EXPECT_TRUE(view.problems.empty());
}

// A restarted container: the running one (its cgroup exists) is taken, not the newest link.
TEST_F(Join, ARestartedContainerIsTheOneRunning) {
  held_.containers = {Held("p", "c")};
  Link("p", "c", 'a', now_ - minutes(10));
  Link("p", "c", 'b', now_ - minutes(1));  // made, its container already gone
  Cgroup('a', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 9}}, {"mlx5_1", {0, 0}}});
  const UsageView view = Run();
  ASSERT_EQ(view.containers.size(), 1u);
  EXPECT_EQ(view.containers[0].names->container_id, Id('a'));
  EXPECT_EQ(view.containers[0].sample.hca_objects, 9);
}

// Each missing source is said, and the sample stays empty: the verdict is unknown.
TEST_F(Join, AMissingSourceIsSaidNeverGuessed) {
  held_.containers = {Held("nolink", "c"),  Held("exited", "c"),
                      Held("moved", "c"),   Held("nordma", "c"),
                      Held("partial", "c"), Held("elsewhere", "c", "rdma/not-on-this-node")};
  Link("exited", "c", 'e', now_);
  Link("moved", "c", 'm', now_, "uid-new");
  Cgroup('m', std::map<std::string, RdmaCgroupCounts>{}, "uid-old");
  Link("nordma", "c", 'n', now_);
  Cgroup('n', std::nullopt);
  Link("partial", "c", 'p', now_);
  Cgroup('p', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 0}}});
  Link("elsewhere", "c", 'x', now_);
  Cgroup('x', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {0, 0}}});
  const UsageView view = Run();
  ASSERT_EQ(view.containers.size(), 6u);
  EXPECT_THAT(view.containers[0].missing, HasSubstr("no kubelet log link"));
  EXPECT_EQ(view.containers[1].missing, "no cgroup for container eeeeeeeeeeee (not running)");
  EXPECT_EQ(view.containers[2].missing,
            "container mmmmmmmmmmmm: its cgroup's pod UID uid-old is not its log link's uid-new");
  EXPECT_EQ(view.containers[3].missing, "no rdma.current");
  // Half its HCAs read is no verdict: the other may hold the QPs.
  EXPECT_EQ(view.containers[4].missing, "rdma.current does not list mlx5_1");
  EXPECT_EQ(view.containers[5].missing,
            "its allocations give it no HCA of this node (a pool on another node?)");
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(view.containers[i].sample.hca_objects, std::nullopt) << i;
    EXPECT_EQ(view.containers[i].sample.hca_handles, std::nullopt) << i;
    EXPECT_EQ(Judge(view.containers[i].sample, kGrace, kGrace).verdict, Verdict::kUnknown);
  }
}

// With QPs by owner: QPs on its own HCAs are use; none there (a QP on another HCA is not
// its) with objects beside is still use (a DevX QP); none at all is unused, from the QPs.
TEST_F(Join, QpsByOwnerJudgeOnTheContainersOwnHcas) {
  held_.containers = {Held("qp", "c"), Held("devx", "c"), Held("idle", "c")};
  const std::map<std::string, RdmaCgroupCounts> contexts{{"mlx5_0", {1, 0}}, {"mlx5_1", {1, 0}}};
  Link("qp", "c", 'a', now_);
  Cgroup('a', contexts);
  Link("devx", "c", 'b', now_);
  Cgroup('b', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 9}}, {"mlx5_1", {1, 0}}});
  Link("idle", "c", 'c', now_);
  Cgroup('c', contexts);
  QpOwners qps;
  qps.by_container[Id('a')] = {{"mlx5_1", 4}};
  qps.by_container[Id('c')] = {{"mlx5_2", 3}};  // not one of its HCAs
  const UsageView view = JoinUsage(held_, links_, cgroups_, hcas_, now_, &qps);
  ASSERT_EQ(view.containers.size(), 3u);
  EXPECT_EQ(view.containers[0].sample.qps, 4);
  EXPECT_EQ(Judge(view.containers[0].sample, kGrace, kGrace),
            (Judgement{Verdict::kUsed, UseSource::kQueuePairs}));
  EXPECT_EQ(view.containers[1].sample.qps, 0);
  EXPECT_EQ(Judge(view.containers[1].sample, kGrace, kGrace),
            (Judgement{Verdict::kUsed, UseSource::kCgroupObjects}));
  EXPECT_EQ(view.containers[2].sample.qps, 0);
  EXPECT_EQ(Judge(view.containers[2].sample, kGrace, kGrace),
            (Judgement{Verdict::kUnused, UseSource::kQueuePairs}));
}

// DRA devices: a per-HCA device gives its HCA; a pool or slot device every HCA of its pool.
TEST_F(Join, DraDevicesGiveTheirHcas) {
  ContainerAllocations per_hca{
      .pod_namespace = "ns",
      .pod = "p",
      .container = "c",
      .device_ids = {},
      .dra_devices = {{"ns", "claim", "node1/rdma-c", "hca-0000-3b-00-1"}}};
  EXPECT_EQ(hcas_.Of(per_hca), (std::vector<std::string>{"mlx5_4"}));
  per_hca.dra_devices[0].device = "slot-7";
  EXPECT_EQ(hcas_.Of(per_hca), (std::vector<std::string>{"mlx5_3", "mlx5_4"}));
  hcas_.resource_of_pool["node1/rdma-c"] = "rdma/c";
  per_hca.device_ids["rdma/hca_b"] = {"4"};
  EXPECT_EQ(hcas_.ResourcesOf(per_hca), (std::vector<std::string>{"rdma/c", "rdma/hca_b"}));
  per_hca.device_ids.clear();
  per_hca.dra_devices[0].pool = "node2/rdma-c";  // not this node's
  EXPECT_TRUE(hcas_.Of(per_hca).empty());
  EXPECT_TRUE(hcas_.ResourcesOf(per_hca).empty());
}

// A container holding RDMA objects on our HCAs without our devices is a foreign user;
// objects on other HCAs only, or none, are not.
TEST_F(Join, ForeignUsersOnOurHcasAreShown) {
  held_.containers = {Held("ours", "c")};
  Link("ours", "c", 'a', now_);
  Cgroup('a', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 1}}});
  Link("other", "gpu-job", 'f', now_, "uid-f");
  Cgroup('f', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 0}}, {"mlx5_9", {1, 3}}},
         "uid-f");
  Cgroup('g', std::map<std::string, RdmaCgroupCounts>{{"mlx5_9", {1, 3}}, {"mlx5_0", {0, 0}}},
         "uid-g");
  Cgroup('h', std::map<std::string, RdmaCgroupCounts>{{"mlx5_4", {0, 2}}}, "uid-h");
  const UsageView view = Run();
  ASSERT_EQ(view.foreign.size(), 2u);
  EXPECT_EQ(view.foreign[0].names->pod, "other");
  EXPECT_EQ(view.foreign[0].counts, (std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 0}}}));
  EXPECT_EQ(view.foreign[1].cgroup.container_id, Id('h'));
  EXPECT_EQ(view.foreign[1].names, std::nullopt);
  EXPECT_EQ(view.foreign_withheld, 0u);
}

// Not foreign: a sidecar of a pod holding our devices; and, while a holder has no link, an
// unnamed container (it may be that holder): counted as withheld, never called foreign.
TEST_F(Join, AHoldersPodAndAnUnlinkedHolderAreNeverForeign) {
  held_.containers = {Held("ours", "c"), Held("starting", "c")};
  Link("ours", "c", 'a', now_);
  Cgroup('a', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 1}}});
  Cgroup('s', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 0}}});  // uid-1: a sidecar
  Cgroup('u', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 0}}}, "uid-9");
  const UsageView view = Run();
  EXPECT_TRUE(view.foreign.empty());
  EXPECT_EQ(view.foreign_withheld, 1u);
}

// Foreign by their QPs, where the kernel's dumps were read: a container owning QPs on our
// HCAs without our devices, named or not, with its cgroup's objects or without (no rdma
// controller in its cgroup); QPs on other HCAs, a holder's sidecar and an unnamed one while a
// holder has no link are not; the host's own processes' QPs on our HCAs are their own line.
TEST_F(Join, ForeignUsersByTheirQueuePairs) {
  held_.containers = {Held("ours", "c"), Held("starting", "c")};
  Link("ours", "c", 'a', now_);
  Cgroup('a', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 1}}});
  Link("other", "mpi", 'f', now_, "uid-f");
  Cgroup('f', std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 4}}}, "uid-f");
  Link("nocontroller", "mpi", 'e', now_, "uid-e");
  Cgroup('e', std::nullopt, "uid-e");
  Cgroup('s', std::nullopt);           // uid-1: the holder's sidecar
  Cgroup('u', std::nullopt, "uid-9");  // unnamed, while "starting" has no link
  Cgroup('w', std::nullopt, "uid-w");
  QpOwners qps;
  qps.by_container[Id('f')] = {{"mlx5_0", 2}};
  qps.by_container[Id('e')] = {{"mlx5_1", 3}, {"mlx5_9", 1}};
  qps.by_container[Id('s')] = {{"mlx5_0", 1}};
  qps.by_container[Id('u')] = {{"mlx5_0", 1}};
  qps.by_container[Id('w')] = {{"mlx5_9", 5}};  // not our HCA
  qps.outside_by_device = {{"mlx5_2", 6}, {"mlx5_9", 2}};
  const UsageView view = JoinUsage(held_, links_, cgroups_, hcas_, now_, &qps);
  ASSERT_EQ(view.foreign.size(), 2u);
  EXPECT_EQ(view.foreign[0].names->pod, "other");
  EXPECT_EQ(view.foreign[0].counts, (std::map<std::string, RdmaCgroupCounts>{{"mlx5_0", {1, 4}}}));
  EXPECT_EQ(view.foreign[0].qps, (std::map<std::string, int64_t>{{"mlx5_0", 2}}));
  EXPECT_EQ(view.foreign[1].names->pod, "nocontroller");
  EXPECT_TRUE(view.foreign[1].counts.empty());
  EXPECT_EQ(view.foreign[1].qps, (std::map<std::string, int64_t>{{"mlx5_1", 3}}));
  EXPECT_EQ(view.foreign_withheld, 1u);
  EXPECT_EQ(view.host_qps, (std::map<std::string, int64_t>{{"mlx5_2", 6}}));
  // Without the dumps, only what the cgroups show.
  EXPECT_EQ(Run().foreign.size(), 1u);
  EXPECT_TRUE(Run().host_qps.empty());

  // `pods` says both, in its table and its JSON.
  const std::vector<Judgement> judgements(view.containers.size());
  const report::PodsReport r{.view = view,
                             .judgements = judgements,
                             .grace = std::chrono::seconds(600),
                             .list_error = "",
                             .qps_read = true};
  const std::string table = report::PodsTable(r);
  EXPECT_THAT(table, HasSubstr("  ns/other/mpi: mlx5_0 contexts=1 objects=4 mlx5_0 qps=2\n"));
  EXPECT_THAT(table, HasSubstr("  ns/nocontroller/mpi: mlx5_1 qps=3\n"));
  EXPECT_THAT(table, HasSubstr("QPs on this plugin's HCAs of processes in no container (the "
                               "host's): mlx5_2 qps=6\n"));
  const auto json = nlohmann::json::parse(report::PodsJson(r));
  EXPECT_EQ(json.at("foreign").at(1).at("qps"), (nlohmann::json{{"mlx5_1", 3}}));
  EXPECT_EQ(json.at("hostQps"), (nlohmann::json{{"mlx5_2", 6}}));
}

// ---- queue pairs by owner -------------------------------------------------------------------

// /proc/<pid>/cgroup as the kernel writes it (cgroup-v2.rst, "Processes"): the v2 line
// "0::<path>" on a v2 or hybrid host, none on a v1-only one; a cgroup namespace's view.
TEST(QpOwners, TheUnifiedLineOfAProcCgroupFile) {
  EXPECT_EQ(UnifiedCgroupOf("0::/kubepods.slice/x.scope\n"), "/kubepods.slice/x.scope");
  EXPECT_EQ(UnifiedCgroupOf("4:memory:/a\n1:cpu:/\n0::/system.slice/containerd.service\n"),
            "/system.slice/containerd.service");
  EXPECT_EQ(UnifiedCgroupOf("0::/../../kubepods/besteffort/pod1/" + std::string(64, 'a') + "\n"),
            "/../../kubepods/besteffort/pod1/" + std::string(64, 'a'));
  EXPECT_EQ(UnifiedCgroupOf("4:memory:/a\n1:cpu:/\n"), std::nullopt);
  EXPECT_EQ(UnifiedCgroupOf(""), std::nullopt);
  EXPECT_EQ(UnifiedCgroupOf("0::relative\n"), std::nullopt);
  // This process's own file reads, whatever the host (this machine is hybrid).
  std::ifstream self("/proc/self/cgroup");
  const std::string text((std::istreambuf_iterator<char>(self)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(UnifiedCgroupOf(text).has_value()) << text;
  EXPECT_TRUE(UnifiedCgroupOf(text)->starts_with("/"));
}

// Each QP counted for the container its owner runs in, per device; a kernel QP, a host
// process's and a gone one's apart; each PID's cgroup read once.
TEST(QpOwners, QpsAreCountedForTheirOwnersContainer) {
  const std::string a =
      "/kubepods.slice/kubepods-pod1.slice/cri-containerd-" + std::string(64, 'a') + ".scope";
  const std::string b = "/kubepods/burstable/pod2/" + std::string(64, 'b');
  std::map<uint32_t, int> asked;
  const CgroupOfPid cgroup_of = [&](uint32_t pid) -> std::optional<std::string> {
    ++asked[pid];
    if (pid == 10 || pid == 11) return a;
    if (pid == 20) return b;
    if (pid == 30) return "/system.slice/sshd.service";
    return std::nullopt;  // gone
  };
  const QpOwners owners = CountQpOwners({{"mlx5_0", 10, false},
                                         {"mlx5_0", 10, false},
                                         {"mlx5_1", 11, false},
                                         {"mlx5_0", 20, false},
                                         {"mlx5_0", std::nullopt, true},
                                         {"mlx5_0", 30, false},
                                         {"mlx5_0", 99, false}},
                                        cgroup_of);
  EXPECT_EQ(owners.by_container, (std::map<std::string, std::map<std::string, int64_t>>{
                                     {std::string(64, 'a'), {{"mlx5_0", 2}, {"mlx5_1", 1}}},
                                     {std::string(64, 'b'), {{"mlx5_0", 1}}}}));
  EXPECT_EQ(owners.kernel, 1u);
  EXPECT_EQ(owners.outside_by_device, (std::map<std::string, int64_t>{{"mlx5_0", 2}}));
  EXPECT_EQ(owners.unseen, 0u);
  EXPECT_TRUE(owners.complete());
  EXPECT_EQ(asked, (std::map<uint32_t, int>{{10, 1}, {11, 1}, {20, 1}, {30, 1}, {99, 1}}));
  // A user QP without its owner's PID: this reader is not in the host PID namespace.
  EXPECT_FALSE(CountQpOwners({{"mlx5_0", std::nullopt, false}}, cgroup_of).complete());
}

// ---- the containers' cgroups on a host tree ------------------------------------------------

class CgroupTree : public ::testing::Test {
 protected:
  std::string Dir(const std::string& rel) {
    const std::string path = dir_.path() + "/" + rel;
    std::filesystem::create_directories(path);
    return path;
  }
  void File(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(
        std::filesystem::path(dir_.path() + "/" + rel).parent_path());
    std::ofstream(dir_.path() + "/" + rel) << text;
  }
  testing::TempDir dir_;
};

// A host with both kinds of pods' cgroups beside services: each container found once (not
// what is below it), its rdma.current read, a missing or malformed one said per container.
TEST_F(CgroupTree, FindsEveryContainerAndReadsItsCounts) {
  const std::string burstable =
      "kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod6c1a4e95_6bb6_11e6_bc26_28d2444e470d.slice";
  const std::string guaranteed =
      "kubepods.slice/kubepods-pod11111111_2222_3333_4444_555555555555.slice";
  const std::string a = burstable + "/cri-containerd-" + std::string(64, 'a') + ".scope";
  const std::string b = guaranteed + "/cri-containerd-" + std::string(64, 'b') + ".scope";
  const std::string c = burstable + "/cri-containerd-" + std::string(64, 'c') + ".scope";
  File(a + "/rdma.current",
       "mlx5_0 hca_handle=1 hca_object=0 \nmlx5_1 hca_handle=1 hca_object=7 \n");
  Dir(a + "/container");  // crun's child: the container's, not another
  Dir(b);                 // no rdma controller down to it
  File(c + "/rdma.current", "mlx5_0 hca_handle \n");
  Dir(burstable + "/crio-conmon-" + std::string(64, 'd') + ".scope");
  Dir("system.slice/containerd.service");
  File("kubepods.slice/rdma.current", "mlx5_0 hca_handle=9 hca_object=99 \n");

  const CgroupScan scan = ScanContainerCgroups(dir_.path(), 100);
  EXPECT_TRUE(scan.problems.empty()) << scan.problems.front();
  ASSERT_EQ(scan.containers.size(), 3u);
  EXPECT_EQ(scan.containers[0].container.path, a);
  ASSERT_TRUE(scan.containers[0].counts.has_value());
  EXPECT_EQ(scan.containers[0].counts->at("mlx5_1"), (RdmaCgroupCounts{1, 7}));
  EXPECT_EQ(scan.containers[1].container.path, c);
  EXPECT_THAT(scan.containers[1].problem, HasSubstr("line 1: \"hca_handle\" is not key=value"));
  EXPECT_EQ(scan.containers[2].container.path, b);
  EXPECT_EQ(scan.containers[2].container.qos, QosClass::kGuaranteed);
  EXPECT_FALSE(scan.containers[2].counts.has_value());
  EXPECT_THAT(scan.containers[2].problem, HasSubstr("no rdma.current"));
}

// Bounded: past max_containers the rest is left out, and said.
TEST_F(CgroupTree, ContainersPastTheCapAreLeftOutAndSaid) {
  for (char id : {'a', 'b', 'c'}) {
    Dir(std::string("kubepods/besteffort/pod") + id + "/" + std::string(64, id));
  }
  const CgroupScan scan = ScanContainerCgroups(dir_.path(), 2);
  EXPECT_EQ(scan.containers.size(), 2u);
  ASSERT_EQ(scan.problems.size(), 1u);
  EXPECT_EQ(scan.problems[0], "more than 2 containers' cgroups; the rest left out");
}

}  // namespace
}  // namespace rdmadp::usage
