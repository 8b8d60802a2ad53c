#include "pkg/dra/slice_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rdmadp::dra
