// Issue 30 item 4: what a container given a DRA claim learns. The metadata document is
// checked field by field against the upstream types it must decode as
// (k8s.io/dynamic-resource-allocation api/metadata/v1alpha1/types.go: DeviceMetadata,
// DeviceMetadataRequest, Device; attribute values as k8s.io/api resource/v1 DeviceAttribute),
// the paths against kubeletplugin/metadata.go and api/metadata/helpers.go.
#include "pkg/dra/claim_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pkg/text/cat.h"
#include "test/support/hca_fixture.h"
#include "test/support/temp_dir.h"

namespace rdmadp::dra {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// Two HCAs of a hinted pool, one of an unhinted one, as BuildDraView publishes them.
struct Published {
  DraDevice a, b, c;
  Published() {
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
  Published pub;
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
  Published pub;
  const std::vector<PreparedDevice> claim = {Prepared(pub.a, "ib"), Prepared(pub.b, "ib"),
                                             Prepared(pub.c, "roce")};
  const std::vector<PreparedDevice> ib(claim.begin(), claim.begin() + 2);
  const std::vector<PreparedDevice> roce(claim.begin() + 2, claim.end());
  const auto ib_env = RequestEnv(Ref("hcas"), "ib", ib, claim);
  const auto roce_env = RequestEnv(Ref("hcas"), "roce", roce, claim);
  std::vector<std::string> names;
  for (const auto& [k, v] : ib_env) names.push_back(k);
  EXPECT_THAT(names, UnorderedElementsAre("PCIDEVICE_HCAS_IB", "PCIDEVICE_HCAS_IB_INFO",
                                          "NCCL_IB_HCA", "UCX_NET_DEVICES"));
  EXPECT_EQ(ib_env.at("PCIDEVICE_HCAS_IB"), "0000:10:00.0,0000:11:00.0");
  EXPECT_EQ(json::parse(ib_env.at("PCIDEVICE_HCAS_IB_INFO")).size(), 2u);
  EXPECT_EQ(roce_env.at("PCIDEVICE_HCAS_ROCE"), "0000:12:00.0");
  // The hints name every hinted device of the claim (c's entry has none), and both
  // requests' edits carry the same value: nothing for the runtime to choose between.
  EXPECT_EQ(ib_env.at("NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1");
  EXPECT_EQ(roce_env.at("NCCL_IB_HCA"), ib_env.at("NCCL_IB_HCA"));
  EXPECT_EQ(roce_env.at("UCX_NET_DEVICES"), "mlx5_0:1,mlx5_1:1");
  // Two shares of one HCA (a slot model): the HCA once.
  const std::vector<PreparedDevice> twice = {Prepared(pub.a, "ib"), Prepared(pub.a, "ib")};
  EXPECT_EQ(RequestEnv(Ref(), "ib", twice, twice).at("PCIDEVICE_JOB_1_HCAS_X7K2P_IB"),
            "0000:10:00.0");
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
  Published pub;
  std::vector<PreparedDevice> devices = {Prepared(pub.a, "ib"), Prepared(pub.b, "ib"),
                                         Prepared(pub.c, "roce")};
  const ClaimRef ref = Ref();
  ASSERT_TRUE(WriteClaimMetadata(dirs, ref, devices).ok());
  const std::string md = dirs.data_dir + "/dra-device-metadata/team-a_job-1-hcas-x7k2p";
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
              ::testing::Contains("PCIDEVICE_JOB_1_HCAS_X7K2P_IB=0000:10:00.0,0000:11:00.0"));
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

}  // namespace
}  // namespace rdmadp::dra
