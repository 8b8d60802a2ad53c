// What a container given a DRA claim learns (docs/dra.md, "Prepare"). The metadata document is
// checked field by field against the upstream types it must decode as
// (k8s.io/dynamic-resource-allocation api/metadata/v1alpha1/types.go: DeviceMetadata,
// DeviceMetadataRequest, Device; attribute values as k8s.io/api resource/v1 DeviceAttribute),
// the paths against kubeletplugin/metadata.go and api/metadata/helpers.go.
#include "pkg/dra/prepare/claim_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "pkg/config/k8s_names.h"
#include "pkg/pool/pod_env.h"
#include "pkg/text/cat.h"
#include "test/support/hca_fixture.h"
#include "test/support/temp_dir.h"

namespace rdmadp::dra {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// Two HCAs of a hinted pool, one of an unhinted one, as BuildDraView publishes them.
struct PublishedSpecs {
  DraDevice a, b, c;
  PublishedSpecs() {
    for (auto* d : {&a, &b, &c}) d->pool = "n1/ib";
    a.name = "hca-0000-10-00-0";
    b.name = "hca-0000-11-00-0";
    c.name = "hca-0000-12-00-0";
    c.pool = "n1/roce";
    const char* addresses[] = {"0000:10:00.0", "0000:11:00.0", "0000:12:00.0"};
    DraDevice* devices[] = {&a, &b, &c};
    for (int i = 0; i < 3; ++i) {
      auto hca = testing::ConnectXHca(addresses[i], 0);
      hca.function.rdma_devices = {
          {Cat("mlx5_", i), {{1, sysfs::PortState::kActive, sysfs::GidTable::kHasGid}}}};
      devices[i]->functions =
          std::make_shared<const std::vector<sysfs::PciFunction>>(1, hca.function);
      devices[i]->attributes = {{"resource.kubernetes.io/pciBusID", {{"string", addresses[i]}}},
                                {"resourceName", {{"string", "rdma/ib"}}}};
    }
    a.hints = b.hints = {config::EnvHint::kNccl, config::EnvHint::kUcx};
    a.resource = b.resource = "rdma/ib";
    c.resource = "rdma/roce";
  }
};

PreparedDevice Prepared(const DraDevice& d, std::string request_ref) {
  PreparedDevice p;
  p.request_ref = request_ref;
  p.request_names = {request_ref.substr(0, request_ref.find('/'))};
  p.published = &d;
  p.pool = d.pool;
  p.device = d.name;
  p.cdi_ids = {Cat("rdma.example.com/hca=", d.name)};
  return p;
}

ClaimRef Ref(std::optional<std::string> pod_claim_name = std::nullopt) {
  return {"team-a", "job-1-hcas-x7k2p", "0b6c2e1a-5d6f-4a7b-8c9d-0e1f2a3b4c5d", pod_claim_name};
}

// Every key of `object` is one `allowed` names.
void ExpectOnlyKeys(const json& object, std::vector<std::string> allowed,
                    const std::string& where) {
  ASSERT_TRUE(object.is_object()) << where;
  for (const auto& [key, value] : object.items()) {
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), key), allowed.end())
        << where << " has a field the upstream type lacks: " << key;
  }
}

TEST(ClaimMetadata, TheFileHasTheUpstreamShape) {
  PublishedSpecs pub;
  const std::vector<PreparedDevice> devices = {Prepared(pub.a, "rdma/ib"),
                                               Prepared(pub.b, "rdma/ib")};
  const std::string text = MetadataFile(Ref("hcas"), "rdma.example.com", "rdma/ib", devices);
  ASSERT_TRUE(text.ends_with("}\n"));
  const json doc = json::parse(text);  // one object: the stream of one version
  ExpectOnlyKeys(doc, {"kind", "apiVersion", "metadata", "podClaimName", "requests"},
                 "DeviceMetadata");
  EXPECT_EQ(doc["apiVersion"], "metadata.resource.k8s.io/v1alpha1");
  EXPECT_EQ(doc["kind"], "DeviceMetadata");
  EXPECT_EQ(doc["metadata"], json({{"name", "job-1-hcas-x7k2p"},
                                   {"namespace", "team-a"},
                                   {"uid", "0b6c2e1a-5d6f-4a7b-8c9d-0e1f2a3b4c5d"},
                                   {"generation", 1}}));
  EXPECT_EQ(doc["podClaimName"], "hcas");
  ASSERT_EQ(doc["requests"].size(), 1u);
  const json& request = doc["requests"][0];
  ExpectOnlyKeys(request, {"name", "devices"}, "DeviceMetadataRequest");
  EXPECT_EQ(request["name"], "rdma/ib") << "the subrequest is kept, as the upstream helper does";
  ASSERT_EQ(request["devices"].size(), 2u);
  for (const auto& d : request["devices"]) {
    ExpectOnlyKeys(d, {"driver", "pool", "name", "attributes", "networkData"}, "Device");
    EXPECT_EQ(d["driver"], "rdma.example.com");
    EXPECT_EQ(d["pool"], "n1/ib");
    for (const auto& [name, value] : d["attributes"].items()) {
      ASSERT_EQ(value.size(), 1u) << name << ": a DeviceAttribute holds exactly one value";
      const std::string kind = value.begin().key();
      EXPECT_TRUE(kind == "int" || kind == "bool" || kind == "string" || kind == "version") << name;
    }
  }
  EXPECT_EQ(request["devices"][1]["name"], "hca-0000-11-00-0");
  EXPECT_EQ(request["devices"][1]["attributes"]["resource.kubernetes.io/pciBusID"]["string"],
            "0000:11:00.0");
  // A claim the pod names directly has no podClaimName.
  EXPECT_FALSE(json::parse(MetadataFile(Ref(), "d", "rdma", devices)).contains("podClaimName"));
}

TEST(ClaimMetadata, ContainerPathsFollowTheUpstreamLayout) {
  EXPECT_EQ(MetadataContainerPath(Ref(), "rdma.example.com", "rdma"),
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/job-1-hcas-x7k2p/rdma/"
            "rdma.example.com-metadata.json");
  EXPECT_EQ(MetadataContainerPath(Ref("hcas"), "rdma.example.com", "rdma"),
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/hcas/rdma/"
            "rdma.example.com-metadata.json");
}

TEST(ClaimMetadata, EnvIsPerRequestAndTheHintsAreTheClaimsUnion) {
  PublishedSpecs pub;
  const std::vector<PreparedDevice> claim = {Prepared(pub.a, "ib"), Prepared(pub.b, "ib"),
                                             Prepared(pub.c, "roce")};
  const std::vector<PreparedDevice> ib(claim.begin(), claim.begin() + 2);
  const std::vector<PreparedDevice> roce(claim.begin() + 2, claim.end());
  const auto ib_env = RequestEnv(Ref("hcas"), "ib", ib, claim);
  const auto roce_env = RequestEnv(Ref("hcas"), "roce", roce, claim);
  std::vector<std::string> names;
  for (const auto& [k, v] : ib_env) names.push_back(k);
  EXPECT_THAT(names, UnorderedElementsAre("PCIDEVICE__HCAS__IB", "PCIDEVICE__HCAS__IB_INFO",
                                          "NCCL_IB_HCA", "UCX_NET_DEVICES"));
  EXPECT_EQ(ib_env.at("PCIDEVICE__HCAS__IB"), "0000:10:00.0,0000:11:00.0");
  EXPECT_EQ(json::parse(ib_env.at("PCIDEVICE__HCAS__IB_INFO")).size(), 2u);
  EXPECT_EQ(roce_env.at("PCIDEVICE__HCAS__ROCE"), "0000:12:00.0");
  // The hints name every hinted device of the claim (c's entry has none), and both
  // requests' edits carry the same value: nothing for the runtime to choose between.
  EXPECT_EQ(ib_env.at("NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(roce_env.at("NCCL_IB_HCA"), ib_env.at("NCCL_IB_HCA"));
  EXPECT_EQ(roce_env.at("UCX_NET_DEVICES"), "mlx5_0:1,mlx5_1:1");
  // Two shares of one HCA (a slot model): the HCA once.
  const std::vector<PreparedDevice> twice = {Prepared(pub.a, "ib"), Prepared(pub.a, "ib")};
  EXPECT_EQ(RequestEnv(Ref(), "ib", twice, twice).at("PCIDEVICE__JOB_1_HCAS_X7K2P__IB"),
            "0000:10:00.0");
}

// The RoCE class and GID index reach a DRA container in _INFO only (docs/pod-env.md, "The RoCE
// class and GID"): as a variable a CDI edit would replace the pod's own value, so none is set.
TEST(ClaimMetadata, TheRoceClassAndGidAreInInfoNeverAVariable) {
  PublishedSpecs pub;
  auto fn = (*pub.c.functions)[0];
  fn.rdma_devices[0].ports[0].traffic_class = 106;
  fn.rdma_devices[0].ports[0].roce_v2_ipv4_gid = 3;
  pub.c.functions = std::make_shared<const std::vector<sysfs::PciFunction>>(1, fn);
  pub.c.hints = {config::EnvHint::kNccl, config::EnvHint::kUcx};
  const std::vector<PreparedDevice> claim = {Prepared(pub.c, "roce")};
  const auto env = RequestEnv(Ref("hcas"), "roce", claim, claim);
  for (const char* name :
       {"NCCL_IB_TC", "NCCL_IB_GID_INDEX", "UCX_IB_TRAFFIC_CLASS", "UCX_IB_GID_INDEX"}) {
    EXPECT_EQ(env.count(name), 0u) << name;
  }
  const json port =
      json::parse(env.at("PCIDEVICE__HCAS__ROCE_INFO")).at("0000:12:00.0").at("ports").at(0);
  EXPECT_EQ(port.at("trafficClass"), 106);
  EXPECT_EQ(port.at("roceV2GidIndex"), 3);
}

// Over the limit a process can take, _INFO is left out and the caller is told in one line
// naming the claim (H10 at 050f44e: the device plugin warned, a DRA Prepare said nothing).
TEST(ClaimMetadata, InfoLeftOutIsSaidNamingTheClaim) {
  DraDevice big;
  big.pool = "n1/ib";
  big.name = "all";
  std::vector<sysfs::PciFunction> functions;
  for (int i = 0; i < 2048; ++i) {  // the fixture's HCAs are small: enough of them
    char address[16];
    std::snprintf(address, sizeof address, "0000:%02x:%02x.%x", i / 256, i / 8 % 32, i % 8);
    functions.push_back(testing::ConnectXHca(address, 0).function);
  }
  big.functions = std::make_shared<const std::vector<sysfs::PciFunction>>(functions);
  const std::vector<PreparedDevice> devices = {Prepared(big, "ib")};
  std::string said = "stale";
  auto env = RequestEnv(Ref("hcas"), "ib", devices, devices, &said);
  EXPECT_EQ(env.count("PCIDEVICE__HCAS__IB_INFO"), 0u);
  EXPECT_EQ(env.count("PCIDEVICE__HCAS__IB"), 1u);
  EXPECT_THAT(said, ::testing::StartsWith(
                        "ResourceClaim team-a/\"job-1-hcas-x7k2p\" request \"ib\": "
                        "PCIDEVICE__HCAS__IB_INFO is left out of the containers' environment: its "
                        "JSON for 2048 HCA(s) is "));
  PublishedSpecs pub;
  const std::vector<PreparedDevice> one = {Prepared(pub.a, "ib")};
  env = RequestEnv(Ref("hcas"), "ib", one, one, &said);
  EXPECT_EQ(said, "") << "cleared when it fits";
  EXPECT_EQ(env.count("PCIDEVICE__HCAS__IB_INFO"), 1u);
}

// A claim kube-scheduler made for an extended resource (annotated so) names each request's
// variables after the entry, as the device plugin does; a hand-made class selecting two
// entries' devices into one request keeps the claim's names (docs/pod-env.md, "DRA").
TEST(ClaimMetadata, AnExtendedResourceClaimIsNamedAsTheDevicePluginNamesIt) {
  json claim = {{"metadata",
                 {{"namespace", "ml"},
                  {"name", "worker-0-extended-resources-x2kq9"},
                  {"uid", "u-1"},
                  {"annotations", {{"resource.kubernetes.io/extended-resource-claim", "true"}}}}}};
  auto ref = ReadClaimRef(claim);
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_TRUE(ref->extended_resource);
  PublishedSpecs pub;
  const std::vector<PreparedDevice> ib = {Prepared(pub.a, "container-0-request-2"),
                                          Prepared(pub.b, "container-0-request-2")};
  const auto env = RequestEnv(*ref, "container-0-request-2", ib, ib);
  std::vector<std::string> names;
  for (const auto& [k, v] : env) names.push_back(k);
  EXPECT_THAT(names, UnorderedElementsAre("PCIDEVICE_RDMA_IB", "PCIDEVICE_RDMA_IB_INFO",
                                          "NCCL_IB_HCA", "UCX_NET_DEVICES"));
  EXPECT_EQ(env.at("PCIDEVICE_RDMA_IB"), "0000:10:00.0,0000:11:00.0");
  // Two containers, two pools (rdma/ib hinted, rdma/roce not): each container's hints are
  // its own request's, as each container's Allocate would give them.
  const std::vector<PreparedDevice> pod = {Prepared(pub.a, "container-0-request-0"),
                                           Prepared(pub.c, "container-1-request-0")};
  const std::vector<PreparedDevice> c0(pod.begin(), pod.begin() + 1);
  const std::vector<PreparedDevice> c1(pod.begin() + 1, pod.end());
  EXPECT_EQ(RequestEnv(*ref, "container-0-request-0", c0, pod).at("NCCL_IB_HCA"), "=mlx5_0:1");
  const auto roce = RequestEnv(*ref, "container-1-request-0", c1, pod);
  EXPECT_EQ(roce.count("NCCL_IB_HCA"), 0u) << "rdma/roce asks for no hints";
  EXPECT_EQ(roce.at("PCIDEVICE_RDMA_ROCE"), "0000:12:00.0");
  const std::vector<PreparedDevice> mixed = {Prepared(pub.a, "r"), Prepared(pub.c, "r")};
  EXPECT_EQ(
      RequestEnv(*ref, "r", mixed, mixed).count("PCIDEVICE__WORKER_0_EXTENDED_RESOURCES_X2KQ9__R"),
      1u);
  // Any other value, or none, is an ordinary claim.
  claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] = "yes";
  EXPECT_FALSE(ReadClaimRef(claim)->extended_resource);
  claim["metadata"].erase("annotations");
  EXPECT_FALSE(ReadClaimRef(claim)->extended_resource);
}

TEST(ClaimMetadata, NamesThatCouldNotBePathsAreRefusedNamingTheField) {
  json claim = {{"metadata",
                 {{"namespace", "team-a"},
                  {"name", "c"},
                  {"uid", "u-1"},
                  {"annotations", {{"resource.kubernetes.io/pod-claim-name", "hcas"}}}}}};
  auto ok = ReadClaimRef(claim);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->pod_claim_name, "hcas");
  claim["metadata"]["uid"] = "../../etc";
  EXPECT_EQ(ReadClaimRef(claim).status().message(),
            "ResourceClaim metadata.uid: invalid character '.'");
  claim["metadata"]["uid"] = "u-1";
  claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] = "../x";
  EXPECT_THAT(std::string(ReadClaimRef(claim).status().message()),
              ::testing::StartsWith("ResourceClaim metadata.annotations[resource.kubernetes.io/"
                                    "pod-claim-name]: "));
  claim["metadata"]["namespace"] = 7;  // not even a string: read as ""
  EXPECT_THAT(std::string(ReadClaimRef(claim).status().message()),
              ::testing::StartsWith("ResourceClaim metadata.namespace: "));
}

// Real files: written per request, the metadata CDI ID on the first device of each
// request, removed by Unprepare's call with nothing of another claim touched.
TEST(ClaimMetadata, WrittenPerRequestAndRemovedExactly) {
  testing::TempDir tmp;
  const MetadataDirs dirs{"rdma.example.com", tmp.path() + "/plugin", tmp.path() + "/cdi"};
  std::filesystem::create_directories(dirs.data_dir);
  std::filesystem::create_directories(dirs.cdi_dir);
  PublishedSpecs pub;
  std::vector<PreparedDevice> devices = {Prepared(pub.a, "ib"), Prepared(pub.b, "ib"),
                                         Prepared(pub.c, "roce")};
  const ClaimRef ref = Ref();
  ASSERT_TRUE(WriteClaimMetadata(dirs, ref, devices).ok());
  const std::string md = dirs.data_dir + "/dra-device-metadata/" + ref.uid;
  EXPECT_TRUE(std::filesystem::exists(md + "/ib/metadata.json"));
  EXPECT_TRUE(std::filesystem::exists(md + "/roce/metadata.json"));
  const std::string spec_name = Cat("rdma.example.com_metadata_", ref.uid, "_ib.json");
  std::ifstream in(dirs.cdi_dir + "/" + spec_name);
  const json spec = json::parse(in);
  EXPECT_EQ(spec["kind"], "rdma.example.com/metadata");
  const json& dev = spec["devices"][0];
  EXPECT_EQ(dev["name"], Cat(ref.uid, "_ib"));
  EXPECT_EQ(dev["containerEdits"]["mounts"][0],
            json({{"hostPath", md + "/ib/metadata.json"},
                  {"containerPath", MetadataContainerPath(ref, "rdma.example.com", "ib")},
                  {"options", {"ro", "bind"}}}));
  EXPECT_THAT(dev["containerEdits"]["env"].get<std::vector<std::string>>(),
              ::testing::Contains("PCIDEVICE__JOB_1_HCAS_X7K2P__IB=0000:10:00.0,0000:11:00.0"));
  EXPECT_THAT(devices[0].cdi_ids, ElementsAre("rdma.example.com/hca=hca-0000-10-00-0",
                                              Cat("rdma.example.com/metadata=", ref.uid, "_ib")));
  EXPECT_THAT(devices[1].cdi_ids, ElementsAre("rdma.example.com/hca=hca-0000-11-00-0"));
  EXPECT_THAT(devices[2].cdi_ids, ElementsAre("rdma.example.com/hca=hca-0000-12-00-0",
                                              Cat("rdma.example.com/metadata=", ref.uid, "_roce")));
  // Another claim's files and a foreign spec stay.
  std::ofstream(dirs.cdi_dir + "/rdma.example.com_metadata_other-uid_ib.json") << "{}";
  std::ofstream(dirs.cdi_dir + "/k8s-rdma-shared-dp_dra_hca-0000-10-00-0.json") << "{}";
  ASSERT_TRUE(RemoveClaimMetadata(dirs, ref.namespace_, ref.name, ref.uid).ok());
  EXPECT_FALSE(std::filesystem::exists(md));
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dirs.cdi_dir)) {
    left.push_back(e.path().filename());
  }
  EXPECT_THAT(left, UnorderedElementsAre("rdma.example.com_metadata_other-uid_ib.json",
                                         "k8s-rdma-shared-dp_dra_hca-0000-10-00-0.json"));
  // Again (the kubelet retries Unprepare): nothing there is fine.
  EXPECT_TRUE(RemoveClaimMetadata(dirs, ref.namespace_, ref.name, ref.uid).ok());
}

namespace fs = std::filesystem;

// A plugin data directory and a CDI directory, both empty.
struct Dirs {
  testing::TempDir tmp;
  MetadataDirs dirs{"rdma.example.com", tmp.path() + "/plugin", tmp.path() + "/cdi"};
  Dirs() {
    fs::create_directories(dirs.data_dir);
    fs::create_directories(dirs.cdi_dir);
  }
};

std::string SpecPath(const MetadataDirs& dirs, const std::string& uid, const std::string& request) {
  return Cat(dirs.cdi_dir, "/", dirs.driver, "_metadata_", uid, "_", request, ".json");
}

// Where a request's metadata file is on the host, as the CDI spec written for it says (so a
// test finds it wherever the code keeps it).
std::string HostPath(const MetadataDirs& dirs, const std::string& uid, const std::string& request) {
  std::ifstream in(SpecPath(dirs, uid, request));
  const json spec = json::parse(in, nullptr, false);
  if (spec.is_discarded()) return "";
  return spec.at("devices")
      .at(0)
      .at("containerEdits")
      .at("mounts")
      .at(0)
      .at("hostPath")
      .get<std::string>();
}

// The metadata directory was keyed by namespace/name, the CDI spec by UID. Claim c1 deleted
// (uid-1) and re-created (uid-2), both prepared on the node: uid-1's Unprepare removed the
// file uid-2's spec mounts. Each UID has its own directory now (docs/dra.md, "Prepare").
// Fails on the old code: uid-2's metadata file is gone after uid-1's Unprepare.
TEST(ClaimMetadata, UnprepareRemovesOnlyWhatItsUidWrote) {
  Dirs d;
  PublishedSpecs pub;
  ClaimRef deleted = Ref();
  deleted.uid = "uid-1";
  ClaimRef recreated = Ref();
  recreated.uid = "uid-2";
  std::vector<PreparedDevice> first = {Prepared(pub.a, "ib")};
  std::vector<PreparedDevice> second = {Prepared(pub.a, "ib")};
  ASSERT_TRUE(WriteClaimMetadata(d.dirs, deleted, first).ok());
  ASSERT_TRUE(WriteClaimMetadata(d.dirs, recreated, second).ok());
  const std::string kept = HostPath(d.dirs, "uid-2", "ib");
  ASSERT_TRUE(fs::exists(kept));
  EXPECT_NE(HostPath(d.dirs, "uid-1", "ib"), kept);
  ASSERT_TRUE(RemoveClaimMetadata(d.dirs, deleted.namespace_, deleted.name, "uid-1").ok());
  ASSERT_TRUE(fs::exists(kept)) << "uid-2's spec mounts it";
  std::ifstream in(kept);
  EXPECT_EQ(json::parse(in)["metadata"]["uid"], "uid-2");
  EXPECT_TRUE(fs::exists(SpecPath(d.dirs, "uid-2", "ib")));
  EXPECT_FALSE(fs::exists(SpecPath(d.dirs, "uid-1", "ib")));
  EXPECT_FALSE(fs::exists(HostPath(d.dirs, "uid-1", "ib")));
}

// The same, for the layout before UID keying (<namespace>_<name>) that an earlier version
// left: Unprepare removes such a directory when its files name the claim's UID, and leaves
// one that a re-created namesake wrote (docs/dra.md, "Prepare"). Fails on the old code:
// uid-1's Unprepare removes uid-2's directory.
TEST(ClaimMetadata, AnOldLayoutDirectoryIsRemovedOnlyForItsOwnUid) {
  Dirs d;
  PublishedSpecs pub;
  ClaimRef ref = Ref();
  ref.uid = "uid-2";
  const std::string legacy =
      Cat(d.dirs.data_dir, "/dra-device-metadata/", ref.namespace_, "_", ref.name);
  fs::create_directories(legacy + "/ib");
  std::ofstream(legacy + "/ib/metadata.json")
      << MetadataFile(ref, d.dirs.driver, "ib", {Prepared(pub.a, "ib")});
  ASSERT_TRUE(RemoveClaimMetadata(d.dirs, ref.namespace_, ref.name, "uid-1").ok());
  EXPECT_TRUE(fs::exists(legacy + "/ib/metadata.json")) << "uid-2's, not uid-1's";
  ASSERT_TRUE(RemoveClaimMetadata(d.dirs, ref.namespace_, ref.name, "uid-2").ok());
  EXPECT_FALSE(fs::exists(legacy));
}

// The directory was named <namespace>_<name>: 317 characters for a namespace of 63 and a
// name of 253, both allowed, over NAME_MAX (255). Prepare went on with a warning and the
// container got neither the file nor PCIDEVICE_* nor the hints. The UID names it now
// (docs/dra.md, "Prepare"). Fails on the old code: WriteClaimMetadata errs (ENAMETOOLONG).
TEST(ClaimMetadata, TheLongestNamesKubernetesAllowsStillGetTheirFiles) {
  Dirs d;
  PublishedSpecs pub;
  ClaimRef ref = Ref();
  ref.namespace_ = std::string(63, 'n');
  ref.name = Cat(std::string(63, 'a'), ".", std::string(63, 'b'), ".", std::string(63, 'c'), ".",
                 std::string(61, 'd'));
  ASSERT_EQ(ref.name.size(), 253u);
  const json claim = {
      {"metadata", {{"namespace", ref.namespace_}, {"name", ref.name}, {"uid", ref.uid}}}};
  ASSERT_TRUE(ReadClaimRef(claim).ok()) << "names the API server accepts";
  std::vector<PreparedDevice> devices = {Prepared(pub.a, "ib")};
  const absl::Status written = WriteClaimMetadata(d.dirs, ref, devices);
  ASSERT_TRUE(written.ok()) << written;
  const std::string host = HostPath(d.dirs, ref.uid, "ib");
  EXPECT_TRUE(fs::is_regular_file(host)) << host;
  EXPECT_THAT(devices[0].cdi_ids,
              ::testing::Contains(Cat("rdma.example.com/metadata=", ref.uid, "_ib")));
  ASSERT_TRUE(RemoveClaimMetadata(d.dirs, ref.namespace_, ref.name, ref.uid).ok());
  EXPECT_FALSE(fs::exists(host));
}

// The PCIDEVICE_ names a request's edits set (not the hints).
std::set<std::string> PciDeviceNames(const ClaimRef& claim, const std::string& request,
                                     const std::vector<PreparedDevice>& devices) {
  std::set<std::string> out;
  for (const auto& [k, v] : RequestEnv(claim, request, devices, devices)) {
    if (k.starts_with("PCIDEVICE")) out.insert(k);
  }
  return out;
}

ClaimRef Direct(std::string name) { return {"team-a", std::move(name), "uid-1", std::nullopt}; }

// PCIDEVICE_<CLAIM>_<REQUEST> clashed although docs/pod-env.md said it never did: claim
// "a-b"/request "c" and claim "a"/request "b-c" both set PCIDEVICE_A_B_C, and claim
// "rdma"/request "adv-dp" set the device plugin's PCIDEVICE_RDMA_ADV_DP (resource
// rdma/adv_dp). The DRA family is PCIDEVICE__<CLAIM>__<REQUEST> now, ambiguous parts written
// in hex (pool/pod_env.h; docs/pod-env.md, "DRA"). Fails on the old code: those pairs give
// equal names.
TEST(ClaimMetadata, DraVariablesNeverClashWithEachOtherOrADevicePlugins) {
  PublishedSpecs pub;
  const std::vector<PreparedDevice> one = {Prepared(pub.a, "x")};
  const auto ab_c = PciDeviceNames(Direct("a-b"), "c", one);
  EXPECT_THAT(ab_c, UnorderedElementsAre("PCIDEVICE__A_B__C", "PCIDEVICE__A_B__C_INFO"));
  EXPECT_THAT(PciDeviceNames(Direct("a"), "b-c", one),
              UnorderedElementsAre("PCIDEVICE__A__B_C", "PCIDEVICE__A__B_C_INFO"));
  const std::string dp = pool::PciDeviceEnvName("rdma/adv_dp");
  ASSERT_EQ(dp, "PCIDEVICE_RDMA_ADV_DP");
  for (const auto& name : PciDeviceNames(Direct("rdma"), "adv-dp", one)) {
    EXPECT_NE(name, dp);
    EXPECT_NE(name, dp + "_INFO");
  }
  // Names that the plain form would make ambiguous are written in hex: a '.', a "--", and a
  // request that would end its address list in "_INFO" (readers take that for the JSON).
  EXPECT_THAT(PciDeviceNames(Direct("a.b"), "c", one),
              ::testing::Contains("PCIDEVICE__x612e62__C"));
  EXPECT_THAT(PciDeviceNames(Direct("a--b"), "c", one),
              ::testing::Contains("PCIDEVICE__x612d2d62__C"));
  EXPECT_THAT(
      PciDeviceNames(Direct("x"), "a-info", one),
      UnorderedElementsAre("PCIDEVICE__X__x612d696e666f", "PCIDEVICE__X__x612d696e666f_INFO"));

  // Every claim name and request name over a small alphabet, with the characters that make
  // clashes: all names distinct, none another's "_INFO" twin, none a device plugin's (a
  // device plugin's name has a letter or digit after "PCIDEVICE_"), all shell names.
  std::vector<std::string> words = {"info", "a-info", "info-a", "a-b-info", "rdma"};
  std::vector<std::string> grow = {""};
  for (int length = 1; length <= 4; ++length) {
    std::vector<std::string> next;
    for (const auto& w : grow) {
      for (char c : {'a', '0', '-', '.'}) next.push_back(w + c);
    }
    words.insert(words.end(), next.begin(), next.end());
    grow = std::move(next);
  }
  std::vector<std::string> claims;
  std::vector<std::string> requests;
  for (const auto& w : words) {
    if (config::DnsSubdomainProblem(w).empty()) claims.push_back(w);
    if (config::DnsLabelProblem(w).empty()) requests.push_back(w);
  }
  ASSERT_GT(requests.size(), 20u);
  std::set<std::string> seen;
  std::vector<std::string> problems;  // said together: the old code had thousands
  for (const auto& claim : claims) {
    for (const auto& request : requests) {
      const auto names = PciDeviceNames(Direct(claim), request, one);
      if (names.size() != 2) {
        problems.push_back(Cat(claim, "/", request, ": ", names.size(), " names"));
        continue;
      }
      // In a set the address list sorts before its twin (a prefix of it).
      const std::string& list = *names.begin();
      if (*names.rbegin() != list + "_INFO" || list.ends_with("_INFO")) {
        problems.push_back(Cat(list, ": the address list's name ends like a JSON twin's"));
      }
      for (const auto& name : names) {
        if (!seen.insert(name).second) {
          problems.push_back(Cat(name, " again, for ", claim, "/", request));
        }
        if (!name.starts_with("PCIDEVICE__") ||
            name.find_first_not_of(
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
                std::string::npos) {
          problems.push_back(Cat(name, ": not of the DRA family, or not a shell name"));
        }
      }
    }
  }
  const auto shown = static_cast<std::ptrdiff_t>(std::min<size_t>(problems.size(), 10));
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems, the first:\n"
                                << Join(std::vector<std::string>(problems.begin(),
                                                                 problems.begin() + shown),
                                        "\n");
  // And a device plugin's name has a letter or digit where these have the second '_'.
  for (const char* resource : {"rdma/hca_shared_devices_a", "example.com/x", "a-b/c", "0/x"}) {
    const std::string name = pool::PciDeviceEnvName(resource);
    EXPECT_NE(name[10], '_') << name;
  }
}

// The tree was walked by path, following symlinks. A symlink planted at a request's
// directory made Prepare write the metadata into its target and Unprepare delete the
// target's files. Every step now goes through directory fds with O_NOFOLLOW; the link is
// removed as itself (docs/dra.md, "Prepare"). Fails on the old code: victim/metadata.json is
// written, the link stays, and Unprepare deletes victim/keep (or errs on the link).
TEST(ClaimMetadata, ASymlinkPlantedInTheTreeIsNeverFollowed) {
  Dirs d;
  PublishedSpecs pub;
  const ClaimRef ref = Ref();
  std::vector<PreparedDevice> devices = {Prepared(pub.a, "ib")};
  ASSERT_TRUE(WriteClaimMetadata(d.dirs, ref, devices).ok());
  const fs::path file = HostPath(d.dirs, ref.uid, "ib");
  const fs::path request_dir = file.parent_path();
  const std::string victim = d.tmp.path() + "/victim";
  fs::create_directories(victim);
  std::ofstream(victim + "/keep") << "x";
  fs::remove_all(request_dir);
  fs::create_directory_symlink(victim, request_dir);
  // A replayed Prepare: a directory of ours replaces the link.
  devices = {Prepared(pub.a, "ib")};
  const absl::Status rewritten = WriteClaimMetadata(d.dirs, ref, devices);
  EXPECT_TRUE(rewritten.ok()) << rewritten;
  EXPECT_FALSE(fs::exists(victim + "/metadata.json")) << "written through the link";
  EXPECT_FALSE(fs::is_symlink(request_dir));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(file)));
  // Unprepare with the link planted again: the link goes, its target stays whole.
  fs::remove_all(request_dir);
  fs::create_directory_symlink(victim, request_dir);
  const absl::Status removed = RemoveClaimMetadata(d.dirs, ref.namespace_, ref.name, ref.uid);
  EXPECT_TRUE(removed.ok()) << removed;
  EXPECT_TRUE(fs::exists(victim + "/keep")) << "deleted through the link";
  EXPECT_FALSE(fs::exists(fs::symlink_status(request_dir)));
  EXPECT_FALSE(fs::exists(fs::symlink_status(request_dir.parent_path())));
  // A link at the metadata file: replaced by Prepare, unlinked by Unprepare.
  devices = {Prepared(pub.a, "ib")};
  ASSERT_TRUE(WriteClaimMetadata(d.dirs, ref, devices).ok());
  fs::remove(file);
  fs::create_symlink(victim + "/keep", file);
  devices = {Prepared(pub.a, "ib")};
  ASSERT_TRUE(WriteClaimMetadata(d.dirs, ref, devices).ok());
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(file)));
  fs::remove(file);
  fs::create_symlink(victim + "/keep", file);
  EXPECT_TRUE(RemoveClaimMetadata(d.dirs, ref.namespace_, ref.name, ref.uid).ok());
  std::ifstream keep(victim + "/keep");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(keep), {}), "x");
}

// A regular file at the claim's directory made every Unprepare fail, for ever (the kubelet
// retries it). What is not a directory where one belongs is removed as itself, by Unprepare
// and by Prepare; a directory where the metadata file belongs is removed too. Fails on the
// old code: Unprepare errs (rmdir: Not a directory).
TEST(ClaimMetadata, AFileWhereADirectoryBelongsIsRemovedAsItself) {
  Dirs d;
  PublishedSpecs pub;
  const ClaimRef ref = Ref();
  std::vector<PreparedDevice> devices = {Prepared(pub.a, "ib")};
  ASSERT_TRUE(WriteClaimMetadata(d.dirs, ref, devices).ok());
  const fs::path claim_dir = fs::path(HostPath(d.dirs, ref.uid, "ib")).parent_path().parent_path();
  fs::remove_all(claim_dir);
  std::ofstream(claim_dir) << "not a directory";
  const absl::Status removed = RemoveClaimMetadata(d.dirs, ref.namespace_, ref.name, ref.uid);
  EXPECT_TRUE(removed.ok()) << removed;
  EXPECT_FALSE(fs::exists(fs::symlink_status(claim_dir)));
  // Prepare over a file at the claim's directory, then at the request's.
  std::ofstream(claim_dir) << "x";
  devices = {Prepared(pub.a, "ib")};
  absl::Status written = WriteClaimMetadata(d.dirs, ref, devices);
  EXPECT_TRUE(written.ok()) << written;
  EXPECT_TRUE(fs::is_regular_file(claim_dir / "ib" / "metadata.json"));
  fs::remove_all(claim_dir / "ib");
  std::ofstream(claim_dir / "ib") << "x";
  devices = {Prepared(pub.a, "ib")};
  written = WriteClaimMetadata(d.dirs, ref, devices);
  EXPECT_TRUE(written.ok()) << written;
  EXPECT_TRUE(fs::is_regular_file(claim_dir / "ib" / "metadata.json"));
  // A directory (with something in it) where the metadata file belongs.
  fs::remove(claim_dir / "ib" / "metadata.json");
  fs::create_directories(claim_dir / "ib" / "metadata.json" / "sub");
  devices = {Prepared(pub.a, "ib")};
  written = WriteClaimMetadata(d.dirs, ref, devices);
  EXPECT_TRUE(written.ok()) << written;
  EXPECT_TRUE(fs::is_regular_file(claim_dir / "ib" / "metadata.json"));
  // A dangling symlink at the claim's directory.
  ASSERT_TRUE(RemoveClaimMetadata(d.dirs, ref.namespace_, ref.name, ref.uid).ok());
  fs::create_symlink(d.tmp.path() + "/nowhere", claim_dir);
  EXPECT_TRUE(RemoveClaimMetadata(d.dirs, ref.namespace_, ref.name, ref.uid).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(claim_dir)));
}

// Nothing capped a claim's results (the metadata half; the Prepare answer's is DraPrepare in
// dra_test.cpp), and each request is a spec file. kube-apiserver stores at most 32 results
// in a claim (AllocationResultsMaxSize); more is refused before anything is written
// (docs/dra.md, "Prepare"). Fails on the old code: 33 requests write 33 specs.
TEST(ClaimMetadata, MoreResultsThanAClaimCanHoldWriteNothing) {
  Dirs d;
  PublishedSpecs pub;
  std::vector<PreparedDevice> devices;
  for (int i = 0; i < 33; ++i) devices.push_back(Prepared(pub.a, Cat("r", i)));
  EXPECT_FALSE(WriteClaimMetadata(d.dirs, Ref(), devices).ok());
  EXPECT_TRUE(fs::is_empty(d.dirs.cdi_dir));
  devices.pop_back();
  ASSERT_TRUE(WriteClaimMetadata(d.dirs, Ref(), devices).ok());
  EXPECT_EQ(std::distance(fs::directory_iterator(d.dirs.cdi_dir), fs::directory_iterator{}), 32);
}

}  // namespace
}  // namespace rdmadp::dra
