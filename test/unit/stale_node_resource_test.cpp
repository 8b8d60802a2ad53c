// The device plugin's entry left in a node's status (pkg/dra/move): which state it is in and
// the guarded JSON patch that removes it.
#include "pkg/dra/move/stale_node_resource.h"

#include <gtest/gtest.h>

namespace rdmadp::dra {
namespace {

using nlohmann::json;

json NodeWith(const json& capacity, const json& allocatable) {
  return {{"kind", "Node"}, {"status", {{"capacity", capacity}, {"allocatable", allocatable}}}};
}

constexpr char kA[] = "rdma/hca_shared_devices_a";

TEST(StaleNodeResource, TheKubeletsTimelineAfterThePluginLeft) {
  // Served; just left (allocatable 0 at once, capacity kept 5 minutes); 0/0 for good.
  EXPECT_EQ(ReadNodeResource(NodeWith({{kA, "1k"}}, {{kA, "1k"}}), kA).state,
            NodeResourceState::kServed);
  EXPECT_EQ(ReadNodeResource(NodeWith({{kA, "1k"}}, {{kA, "0"}}), kA).state,
            NodeResourceState::kDraining);
  EXPECT_EQ(ReadNodeResource(NodeWith({{kA, "0"}}, {{kA, "0"}}), kA).state,
            NodeResourceState::kStale);
  EXPECT_EQ(ReadNodeResource(NodeWith(json::object(), {{kA, "0"}}), kA).state,
            NodeResourceState::kStale);
  EXPECT_EQ(ReadNodeResource(NodeWith({{"cpu", "8"}}, {{"cpu", "8"}}), kA).state,
            NodeResourceState::kAbsent);
  EXPECT_EQ(ReadNodeResource(json::object(), kA).state, NodeResourceState::kAbsent);
}

TEST(StaleNodeResource, ZeroQuantities) {
  for (const char* q : {"0", "+0", "0.0", "0k", "0Ki", "0m", "0e3", "0E-2", "-0", ".0"}) {
    EXPECT_TRUE(IsZeroQuantity(q)) << q;
  }
  for (const char* q : {"1", "0.5", "10", "1k", "", "k", "0x", "0e", "0Kix", "abc", "0.0.0"}) {
    EXPECT_FALSE(IsZeroQuantity(q)) << q;
  }
}

TEST(StaleNodeResource, ThePatchTestsWhatItReadThenRemovesOnlyStaleEntries) {
  const std::vector<NodeResource> resources = {
      ReadNodeResource(NodeWith({{kA, "0"}}, {{kA, "0"}}), kA),
      ReadNodeResource(NodeWith({{"rdma/b", "5"}}, {{"rdma/b", "5"}}), "rdma/b"),
      ReadNodeResource(NodeWith(json::object(), {{"x.io/a~b", "0"}}), "x.io/a~b"),
  };
  EXPECT_EQ(RemoveStalePatch(resources), json::parse(R"([
    {"op": "test", "path": "/status/capacity/rdma~1hca_shared_devices_a", "value": "0"},
    {"op": "test", "path": "/status/allocatable/rdma~1hca_shared_devices_a", "value": "0"},
    {"op": "test", "path": "/status/allocatable/x.io~1a~0b", "value": "0"},
    {"op": "remove", "path": "/status/capacity/rdma~1hca_shared_devices_a"},
    {"op": "remove", "path": "/status/allocatable/rdma~1hca_shared_devices_a"},
    {"op": "remove", "path": "/status/allocatable/x.io~1a~0b"}])"));
  EXPECT_EQ(RemoveStalePatch({resources[1]}), json::array());
}

TEST(StaleNodeResource, EachStateSaysWhatIsDone) {
  EXPECT_EQ(DescribeNodeResource(ReadNodeResource(NodeWith({{kA, "1k"}}, {{kA, "0"}}), kA), "n1"),
            "rdma/hca_shared_devices_a: its device plugin left node n1 less than 5 minutes ago "
            "(capacity 1k, allocatable 0); not removed: the kubelet would write it back; run "
            "this again after 5 minutes");
  EXPECT_EQ(DescribeNodeResource(ReadNodeResource(NodeWith({{kA, "0"}}, {{kA, "0"}}), kA), "n1"),
            "rdma/hca_shared_devices_a: left at capacity 0, allocatable 0 on node n1 by a device "
            "plugin that is gone");
}

}  // namespace
}  // namespace rdmadp::dra
