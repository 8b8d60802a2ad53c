#include "pkg/dra/slices/slice_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace rdmadp::dra {
namespace {

using Kind = SliceWrite::Kind;
using nlohmann::json;

json Slice(const std::string& pool, int64_t generation, std::vector<std::string> devices,
           int64_t count = 1) {
  json devs = json::array();
  for (const auto& d : devices) devs.push_back({{"name", d}});
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"generateName", "n1-a-"}}},
          {"spec",
           {{"driver", "rdma.x.io"},
            {"nodeName", "n1"},
            {"pool", {{"name", pool}, {"generation", generation}, {"resourceSliceCount", count}}},
            {"devices", devs}}}};
}

// As the API server returns it: named, versioned, with a default we never set.
PublishedSlice Published(const std::string& name, const std::string& rv, json slice) {
  slice["metadata"] = {{"name", name}, {"resourceVersion", rv}, {"uid", "u-" + name}};
  slice["spec"]["perDeviceNodeSelection"] = false;
  return {name, rv, slice};
}

std::map<std::string, PublishedSlice> Map(std::vector<PublishedSlice> v) {
  std::map<std::string, PublishedSlice> m;
  for (auto& s : v) m[s.name] = s;
  return m;
}

TEST(Reconcile, FirstPublishCreatesEverySliceAtGenerationOne) {
  auto writes =
      Reconcile({}, {{"n1/a", {Slice("n1/a", 0, {"hca-1"}, 2), Slice("n1/a", 0, {"hca-2"}, 2)}}});
  ASSERT_EQ(writes.size(), 2u);
  for (const auto& w : writes) {
    EXPECT_EQ(w.kind, Kind::kCreate);
    EXPECT_EQ(w.object["spec"]["pool"]["generation"], 1);
  }
}

TEST(Reconcile, UnchangedContentWritesNothingDespiteServerDefaults) {
  auto published = Map({Published("s1", "10", Slice("n1/a", 3, {"hca-1"}))});
  EXPECT_TRUE(Reconcile(published, {{"n1/a", {Slice("n1/a", 0, {"hca-1"})}}}).empty());
}

TEST(Reconcile, AChangeUpdatesInPlaceWithTheNextGeneration) {
  auto published = Map({Published("s1", "10", Slice("n1/a", 3, {"hca-1"}))});
  auto writes = Reconcile(published, {{"n1/a", {Slice("n1/a", 0, {"hca-1", "hca-2"})}}});
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].kind, Kind::kUpdate);
  EXPECT_EQ(writes[0].name, "s1");
  EXPECT_EQ(writes[0].resource_version, "10");
  EXPECT_EQ(writes[0].object["metadata"]["name"], "s1");
  EXPECT_EQ(writes[0].object["metadata"]["resourceVersion"], "10");
  EXPECT_EQ(writes[0].object["spec"]["pool"]["generation"], 4);
  EXPECT_EQ(writes[0].object["spec"]["devices"].size(), 2u);
}

TEST(Reconcile, FewerSlicesDeletesTheSurplusAndStaleGenerations) {
  auto published = Map({Published("s1", "10", Slice("n1/a", 2, {"hca-1"}, 2)),
                        Published("s2", "11", Slice("n1/a", 2, {"hca-2"}, 2)),
                        Published("s3", "12", Slice("n1/gone", 1, {"hca-3"}))});
  auto writes = Reconcile(published, {{"n1/a", {Slice("n1/a", 0, {"hca-1"})}}});
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_EQ(writes[0].kind, Kind::kUpdate);
  EXPECT_EQ(writes[0].object["spec"]["pool"]["generation"], 3);
  EXPECT_EQ(writes[1], (SliceWrite{Kind::kDelete, "s2", "11", {}}));
  EXPECT_EQ(writes[2], (SliceWrite{Kind::kDelete, "s3", "12", {}}));
}

TEST(Reconcile, AMixOfGenerationsIsRewrittenEvenIfContentMatches) {
  // An older writer's leftover: the pool's slices must all carry one generation.
  auto published = Map({Published("s1", "10", Slice("n1/a", 2, {"hca-1"}, 2)),
                        Published("s2", "11", Slice("n1/a", 1, {"hca-2"}, 2))});
  auto writes = Reconcile(
      published, {{"n1/a", {Slice("n1/a", 0, {"hca-1"}, 2), Slice("n1/a", 0, {"hca-2"}, 2)}}});
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].object["spec"]["pool"]["generation"], 3);
  EXPECT_EQ(writes[1].object["spec"]["pool"]["generation"], 3);
}

TEST(Reconcile, NoPoolsDeletesEverything) {
  auto published = Map({Published("s1", "10", Slice("n1/a", 2, {"hca-1"}))});
  EXPECT_THAT(Reconcile(published, {}),
              ::testing::ElementsAre(SliceWrite{Kind::kDelete, "s1", "10", {}}));
}

TEST(CarriesAll, ObjectsRecursiveArraysExact) {
  EXPECT_TRUE(CarriesAll(json{{"a", 1}, {"b", 2}}, json{{"a", 1}}));
  EXPECT_FALSE(CarriesAll(json{{"a", 1}}, json{{"a", 2}}));
  EXPECT_FALSE(CarriesAll(json{{"a", json::array({1, 2})}}, json{{"a", json::array({1})}}));
  EXPECT_TRUE(CarriesAll(json{{"a", json::array({json{{"x", 1}, {"y", 2}}})}},
                         json{{"a", json::array({json{{"x", 1}}})}}));
}

// A perHca device as we render it (taints when its port is down).
json PerHcaDevice(const std::string& name, bool down) {
  json d = {
      {"name", name},
      {"allowMultipleAllocations", true},
      {"attributes", {{"vendor", {{"string", "15b3"}}}}},
      {"capacity",
       {{"shares",
         {{"value", "4"},
          {"requestPolicy", {{"default", "1"}, {"validRange", {{"min", "1"}, {"step", "1"}}}}}}}}}};
  if (down) d["taints"] = json::array({{{"key", "rdma.x.io/port-down"}, {"effect", "NoSchedule"}}});
  return d;
}

json PerHcaSlice(bool down) {
  json s = Slice("n1/a", 0, {});
  s["spec"]["devices"] = json::array({PerHcaDevice("hca-1", down), PerHcaDevice("hca-2", false)});
  return s;
}

// What kube-apiserver 1.34 stores (pkg/registry/resource/resourceslice/strategy.go,
// dropDisabledFields with DRAConsumableCapacity and DRADeviceTaints off): the same spec
// without allowMultipleAllocations, requestPolicy and taints.
json As134Stores(json slice) {
  for (auto& d : slice["spec"]["devices"]) {
    d.erase("allowMultipleAllocations");
    d.erase("taints");
    for (auto& [name, c] : d["capacity"].items()) c.erase("requestPolicy");
  }
  return slice;
}

TEST(DroppedFields, NamesWhatTheServerDidNotKeep) {
  const json written = PerHcaSlice(/*down=*/true)["spec"];
  const json stored = As134Stores(PerHcaSlice(true))["spec"];
  EXPECT_EQ(DroppedFields(written, stored),
            (FieldPaths{"devices[].allowMultipleAllocations",
                        "devices[].capacity.shares.requestPolicy", "devices[].taints"}));
  EXPECT_TRUE(DroppedFields(written, written).empty());
  // A changed value is not a drop, and neither is an empty value the server omits.
  json changed = written;
  changed["devices"][0]["capacity"]["shares"]["value"] = "8";
  EXPECT_TRUE(DroppedFields(written, changed).empty());
  json with_empty = written;
  with_empty["devices"][0]["attributes"] = json::object();
  json omitted = written;
  omitted["devices"][0].erase("attributes");
  EXPECT_TRUE(DroppedFields(with_empty, omitted).empty());
  EXPECT_EQ(GateDropping("devices[].taints"), "DRADeviceTaints");
  EXPECT_EQ(GateDropping("devices[].capacity.shares.requestPolicy"), "DRAConsumableCapacity");
  EXPECT_EQ(GateDropping("devices[].somethingNew"), "");
}

TEST(WithoutFields, StripsEveryElementsField) {
  const json spec = PerHcaSlice(true)["spec"];
  const json stripped =
      WithoutFields(spec, DroppedFields(spec, As134Stores(PerHcaSlice(true))["spec"]));
  EXPECT_EQ(stripped, As134Stores(PerHcaSlice(true))["spec"]);
  EXPECT_EQ(WithoutFields(spec, {"devices[]", "nope.deeper", "devices[].nope"}), spec);
}

// With the fields dropped, every answer looked like a change and the pool was rewritten
// hundreds of times a second. Knowing the drops, the stored pool is unchanged (docs/dra.md,
// "What the plugin does about it").
TEST(Reconcile, FieldsTheServerDropsAreNotAChange) {
  const FieldPaths dropped =
      DroppedFields(PerHcaSlice(true)["spec"], As134Stores(PerHcaSlice(true))["spec"]);
  auto published = Map({Published("s1", "10", As134Stores(PerHcaSlice(false)))});
  const std::vector<WantedPool> wanted = {{"n1/a", {PerHcaSlice(false)}}};
  ASSERT_EQ(Reconcile(published, wanted).size(), 1u) << "without the knowledge: a rewrite";
  EXPECT_TRUE(Reconcile(published, wanted, dropped).empty());
  // A real change still writes, once.
  json more = PerHcaSlice(false);
  more["spec"]["devices"].push_back(PerHcaDevice("hca-3", false));
  EXPECT_EQ(Reconcile(published, {{"n1/a", {more}}}, dropped).size(), 1u);
}

// Where taints are dropped, a down HCA is left out of its slice instead (nothing else keeps
// the scheduler off it), and comes back when it recovers (docs/dra.md, "What the plugin does
// about it").
TEST(Reconcile, WithoutTaintsADownDeviceLeavesTheSlice) {
  const FieldPaths dropped =
      DroppedFields(PerHcaSlice(true)["spec"], As134Stores(PerHcaSlice(true))["spec"]);
  auto published = Map({Published("s1", "10", As134Stores(PerHcaSlice(false)))});
  auto writes = Reconcile(published, {{"n1/a", {PerHcaSlice(/*down=*/true)}}}, dropped);
  ASSERT_EQ(writes.size(), 1u);
  ASSERT_EQ(writes[0].object["spec"]["devices"].size(), 1u);
  EXPECT_EQ(writes[0].object["spec"]["devices"][0]["name"], "hca-2");
}

// A taint the server keeps comes off when the port recovers (docs/dra.md, "What the plugin
// does about it"); extra fields on the server's copy were taken for defaults, so the taint
// stayed for ever.
TEST(Reconcile, ATaintComesOffWhenThePortRecovers) {
  json tainted = PerHcaSlice(/*down=*/true);
  tainted["spec"]["devices"][0]["taints"][0]["timeAdded"] = "2026-11-26T05:00:00Z";  // a default
  auto published = Map({Published("s1", "10", tainted)});
  EXPECT_TRUE(Reconcile(published, {{"n1/a", {PerHcaSlice(true)}}}).empty())
      << "the server's timeAdded is a default, not a change";
  auto writes = Reconcile(published, {{"n1/a", {PerHcaSlice(/*down=*/false)}}});
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_FALSE(writes[0].object["spec"]["devices"][0].contains("taints"));
}

// Answers of the wrong type, and a generation at the end of int64 (docs/reliability.md).
TEST(Reconcile, WrongTypesAndAMaximalGenerationDoNotThrowOrOverflow) {
  json odd = Slice("n1/a", 0, {"hca-1"});
  odd["spec"]["pool"]["generation"] = "seven";
  odd["spec"]["pool"]["name"] = 42;
  json max = Slice("n1/a", std::numeric_limits<int64_t>::max(), {"hca-2"});
  auto published = Map({Published("s1", "10", odd), Published("s2", "11", max)});
  published["s3"] = {"s3", "12", json::array({1, 2})};
  std::vector<SliceWrite> writes;
  ASSERT_NO_THROW(writes = Reconcile(published, {{"n1/a", {Slice("n1/a", 0, {"hca-1"})}}}));
  for (const auto& w : writes) {
    if (w.kind == Kind::kUpdate) {
      EXPECT_EQ(w.object["spec"]["pool"]["generation"], std::numeric_limits<int64_t>::max());
    }
  }
}

}  // namespace
}  // namespace rdmadp::dra
