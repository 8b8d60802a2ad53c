// The kubelet's Topology Manager merge and device manager choice (test/support/
// topology_manager.h) against Kubernetes' own tests of them, transcribed: each TEST names the
// upstream test function (pkg/kubelet/cm/topologymanager/, pkg/kubelet/cm/devicemanager/),
// each row its case name (upstream rows without a name are numbered). Where upstream sorts or
// walks a Go map, the order here is the port's (sorted), which the cases do not depend on.
#include "test/support/topology_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rdmadp::testing::topology {
namespace {

// topology_manager_test.go NewTestBitMask and topology_hints_test.go makeSocketMask.
BitMask TmMask(std::initializer_list<int> bits) {
  BitMask mask = 0;
  for (int bit : bits) mask |= BitMask{1} << static_cast<unsigned>(bit);
  return mask;
}

// NewTestBitMask(numaNodes...).
BitMask TmMaskOfNodes(const std::vector<int>& nodes) {
  BitMask mask = 0;
  for (int node : nodes) mask |= BitMask{1} << static_cast<unsigned>(node);
  return mask;
}

TopologyHint TmHint(std::initializer_list<int> bits, bool preferred) {
  return TopologyHint{TmMask(bits), preferred};
}

TopologyHint TmNilHint(bool preferred) { return TopologyHint{std::nullopt, preferred}; }

std::optional<std::vector<TopologyHint>> TmHints(std::initializer_list<TopologyHint> hints) {
  return std::vector<TopologyHint>(hints);
}

std::vector<int> TmNodes(int count) {
  std::vector<int> nodes;
  for (int node = 0; node < count; ++node) nodes.push_back(node);
  return nodes;
}

// policy_test.go commonNUMAInfoTwoNodes.
NumaInfo TmTwoNodes() { return NumaInfo{{0, 1}, {{0, {10, 11}}, {1, {11, 10}}}}; }

// policy_test.go commonNUMAInfoFourNodes.
NumaInfo TmFourNodes() {
  return NumaInfo{
      {0, 1, 2, 3},
      {{0, {10, 11, 12, 12}}, {1, {11, 10, 12, 12}}, {2, {12, 12, 10, 11}}, {3, {12, 12, 11, 10}}}};
}

// policy_test.go commonNUMAInfoEightNodes (node 7's row as upstream has it).
NumaInfo TmEightNodes() {
  return NumaInfo{TmNodes(8),
                  {{0, {10, 11, 12, 12, 30, 30, 30, 30}},
                   {1, {11, 10, 12, 12, 30, 30, 30, 30}},
                   {2, {12, 12, 10, 11, 30, 30, 30, 30}},
                   {3, {12, 12, 11, 10, 30, 30, 30, 30}},
                   {4, {30, 30, 30, 30, 10, 11, 12, 12}},
                   {5, {30, 30, 30, 30, 11, 10, 12, 12}},
                   {6, {30, 30, 30, 30, 12, 12, 10, 11}},
                   {7, {30, 30, 30, 30, 12, 12, 13, 10}}}};
}

// ---- bitmask/bitmask_test.go ----

TEST(TopologyManagerBitMask, NewBitMask) {  // TestNewBitMask
  const struct {
    std::string name;
    std::vector<int> bits;
    BitMask expected;
  } cases[] = {
      {"New BitMask with bit 0 set", {0}, 0b01},
      {"New BitMask with bit 1 set", {1}, 0b10},
      {"New BitMask with bit 0 and bit 1 set", {0, 1}, 0b11},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    const absl::StatusOr<BitMask> mask = NewBitMask(tc.bits);
    ASSERT_TRUE(mask.ok());
    EXPECT_EQ(*mask, tc.expected);
  }
}

// TestAdd: a bit outside 0-63 fails the whole Add, the mask unchanged.
TEST(TopologyManagerBitMask, Add) {
  const struct {
    std::string name;
    std::vector<int> bits;
    BitMask expected;
  } cases[] = {
      {"Add BitMask with bit 0 set", {0}, 0b01},
      {"Add BitMask with bit 1 set", {1}, 0b10},
      {"Add BitMask with bits 0 and 1 set", {0, 1}, 0b11},
      {"Add BitMask with bits outside range 0-63", {-1, 64}, 0b00},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    const BitMask before = 0;
    const absl::StatusOr<BitMask> added = AddBits(before, tc.bits);
    EXPECT_EQ(added.ok() ? *added : before, tc.expected);
  }
}

TEST(TopologyManagerBitMask, And) {  // TestAnd: And(masks[0], masks...)
  const struct {
    std::string name;
    std::vector<BitMask> masks;
    BitMask expected;
  } cases[] = {
      {"Mask 11 AND mask 11", {TmMask({0, 1}), TmMask({0, 1})}, 0b11},
      {"Mask 11 AND mask 10", {TmMask({0, 1}), TmMask({1})}, 0b10},
      {"Mask 01 AND mask 11", {TmMask({0}), TmMask({0, 1})}, 0b01},
      {"Mask 11 AND mask 11 AND mask 10", {TmMask({0, 1}), TmMask({0, 1}), TmMask({1})}, 0b10},
      {"Mask 01 AND mask 01 AND mask 10 AND mask 11",
       {TmMask({0}), TmMask({0}), TmMask({1}), TmMask({0, 1})},
       0b00},
      {"Mask 1111 AND mask 1110 AND mask 1100 AND mask 1000",
       {TmMask({0, 1, 2, 3}), TmMask({1, 2, 3}), TmMask({2, 3}), TmMask({3})},
       0b1000},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(And(tc.masks[0], tc.masks), tc.expected);
  }
}

TEST(TopologyManagerBitMask, IsSet) {  // TestIsSet
  const struct {
    std::string name;
    BitMask mask;
    int bit;
    bool expected;
  } cases[] = {
      {"Check if bit 0 in mask 00 is set", 0, 0, false},
      {"Check if bit 0 in mask 01 is set", TmMask({0}), 0, true},
      {"Check if bit 1 in mask 11 is set", TmMask({0, 1}), 1, true},
      {"Check if bit outside range 0-63 is set", TmMask({0, 1}), 64, false},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(IsSet(tc.mask, tc.bit), tc.expected);
  }
}

TEST(TopologyManagerBitMask, AnySet) {  // TestAnySet
  const struct {
    std::string name;
    BitMask mask;
    std::vector<int> bits;
    bool expected;
  } cases[] = {
      {"Check if any bits from 11 in mask 00 is set", 0, {0, 1}, false},
      {"Check if any bits from 11 in mask 01 is set", TmMask({0}), {0, 1}, true},
      {"Check if any bits from 11 in mask 11 is set", TmMask({0, 1}), {0, 1}, true},
      {"Check if any bit outside range 0-63 is set", TmMask({0, 1}), {64, 65}, false},
      {"Check if any bits from 1001 in mask 0110 is set", TmMask({1, 2}), {0, 3}, false},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(AnySet(tc.mask, tc.bits), tc.expected);
  }
}

TEST(TopologyManagerBitMask, Count) {  // TestCount
  const struct {
    std::string name;
    BitMask mask;
    int expected;
  } cases[] = {
      {"Count number of bits set in mask 00", 0, 0},
      {"Count number of bits set in mask 01", TmMask({0}), 1},
      {"Count number of bits set in mask 11", TmMask({0, 1}), 2},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(Count(tc.mask), tc.expected);
  }
}

TEST(TopologyManagerBitMask, GetBits) {  // TestGetBits
  const struct {
    std::string name;
    BitMask mask;
    std::vector<int> expected;
  } cases[] = {
      {"Get bits of mask 00", 0, {}},
      {"Get bits of mask 01", TmMask({0}), {0}},
      {"Get bits of mask 11", TmMask({0, 1}), {0, 1}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(GetBits(tc.mask), tc.expected);
  }
}

TEST(TopologyManagerBitMask, IsNarrowerThan) {  // TestIsNarrowerThan
  const struct {
    std::string name;
    BitMask first;
    BitMask second;
    bool expected_first_narrower;
  } cases[] = {
      {"Check narrowness of masks with unequal bits set 1/2", TmMask({0}), TmMask({0, 1}), true},
      {"Check narrowness of masks with unequal bits set 2/2", TmMask({0, 1}), TmMask({0}), false},
      {"Check narrowness of masks with equal bits set 1/2", TmMask({0}), TmMask({1}), true},
      {"Check narrowness of masks with equal bits set 2/2", TmMask({1}), TmMask({0}), false},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(IsNarrowerThan(tc.first, tc.second), tc.expected_first_narrower);
  }
}

// TestIterateBitMasks: 2^n - 1 masks from n bits.
TEST(TopologyManagerBitMask, IterateBitMasks) {
  const struct {
    std::string name;
    int numbits;
  } cases[] = {{"1 bit", 1}, {"2 bits", 2}, {"4 bits", 4}, {"8 bits", 8}, {"16 bits", 16}};
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    int masks = 0;
    IterateBitMasks(TmNodes(tc.numbits), [&masks](BitMask) { ++masks; });
    EXPECT_EQ(masks, (1 << tc.numbits) - 1);
  }
}

// ---- numa_info_test.go ----

TEST(TopologyManagerNumaInfo, CalculateAvgDistanceFor) {  // TestCalculateAvgDistanceFor
  const std::vector<std::vector<uint64_t>> four = {
      {10, 11, 12, 12}, {11, 10, 12, 12}, {12, 12, 10, 11}, {12, 12, 11, 10}};
  const struct {
    std::string name;
    std::vector<int> bits;
    std::vector<std::vector<uint64_t>> distance;
    double expected;
  } cases[] = {
      {"1 NUMA node", {0}, {{10}}, 10},
      {"2 NUMA node, 1 set in bitmask", {0}, {{10, 11}, {11, 10}}, 10},
      {"2 NUMA node, 2 set in bitmask", {0, 1}, {{10, 11}, {11, 10}}, 10.5},
      {"4 NUMA node, 2 set in bitmask", {0, 2}, four, 11},
      {"4 NUMA node, 3 set in bitmask", {0, 2, 3}, four, 11.11111111111111},
      {"0 NUMA node, 0 set in bitmask", {}, {}, 0},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    NumaDistances distances;
    for (size_t node = 0; node < tc.distance.size(); ++node) {
      distances[static_cast<int>(node)] = tc.distance[node];
    }
    const absl::StatusOr<BitMask> mask = NewBitMask(tc.bits);
    ASSERT_TRUE(mask.ok());
    EXPECT_DOUBLE_EQ(CalculateAverageFor(distances, *mask), tc.expected);
  }
}

// TestClosest: Closest(candidate, current).
TEST(TopologyManagerNumaInfo, Closest) {
  const NumaDistances tens3 = {{0, {10, 10, 10}}, {1, {10, 10, 10}}, {2, {10, 10, 10}}};
  const NumaDistances tens4 = {
      {0, {10, 10, 10, 10}}, {1, {10, 10, 10, 10}}, {2, {10, 10, 10, 10}}, {3, {10, 10, 10, 10}}};
  const NumaDistances four = TmFourNodes().distances;
  const struct {
    std::string description;
    BitMask current;
    BitMask candidate;
    bool expect_current;
    NumaDistances distances;
  } cases[] = {
      {"current and candidate length is not the same, current narrower",
       TmMask({0}),
       TmMask({0, 2}),
       true,
       {}},
      {"current and candidate length is the same, distance is the same, current more lower bits "
       "set",
       TmMask({0, 1}), TmMask({0, 2}), true, tens3},
      {"current and candidate length is the same, distance is the same, candidate more lower "
       "bits set",
       TmMask({0, 3}), TmMask({0, 2}), false, tens4},
      {"current and candidate length is the same, candidate average distance is smaller",
       TmMask({0, 3}), TmMask({0, 1}), false, four},
      {"current and candidate length is the same, current average distance is smaller",
       TmMask({2, 3}), TmMask({0, 3}), true, four},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.description);
    EXPECT_EQ(Closest(tc.distances, tc.candidate, tc.current),
              tc.expect_current ? tc.current : tc.candidate);
  }
}

// ---- policy_test.go ----

TEST(TopologyManagerPolicy, MaxOfMinAffinityCounts) {  // TestMaxOfMinAffinityCounts
  const struct {
    HintLists hints;
    int expected;
  } cases[] = {
      {{}, 0},
      {{{TmHint({}, true)}}, 0},
      {{{TmHint({0}, true)}}, 1},
      {{{TmHint({0, 1}, true)}}, 2},
      {{{TmHint({0, 1}, true), TmHint({0, 1, 2}, true)}}, 2},
      {{{TmHint({0, 1}, true), TmHint({0, 1, 2}, true)}, {TmHint({0, 1, 2}, true)}}, 3},
      {{{TmHint({0, 1}, true), TmHint({0, 1, 2}, true)},
        {TmHint({0, 1, 2}, true), TmHint({0, 1, 2, 3}, true)}},
       3},
  };
  int row = 0;
  for (const auto& tc : cases) {
    SCOPED_TRACE("row " + std::to_string(++row));
    EXPECT_EQ(MaxOfMinAffinityCounts(tc.hints), tc.expected);
  }
}

// TestCompareHintsNarrowest: HintMerger.compare returns `current` or `candidate` itself.
TEST(TopologyManagerPolicy, CompareHintsNarrowest) {
  const struct {
    std::string description;
    int best_non_preferred_affinity_count;
    std::optional<TopologyHint> current;
    TopologyHint candidate;
    bool expect_current;
  } cases[] = {
      {"candidate.NUMANodeAffinity.Count() == 0 (1)", -1, std::nullopt, TmHint({}, false), true},
      {"candidate.NUMANodeAffinity.Count() == 0 (2)", -1, TmHint({}, true), TmHint({}, false),
       true},
      {"current == nil (1)", -1, std::nullopt, TmHint({0}, true), false},
      {"current == nil (2)", -1, std::nullopt, TmHint({0}, false), false},
      {"!current.Preferred && candidate.Preferred", -1, TmHint({0}, false), TmHint({0}, true),
       false},
      {"current.Preferred && !candidate.Preferred", -1, TmHint({0}, true), TmHint({0}, false),
       true},
      {"current.Preferred && candidate.Preferred (1)", -1, TmHint({0}, true), TmHint({0}, true),
       true},
      {"current.Preferred && candidate.Preferred (2)", -1, TmHint({0, 1}, true), TmHint({0}, true),
       false},
      {"current.Preferred && candidate.Preferred (3)", -1, TmHint({0}, true), TmHint({0, 1}, true),
       true},
      {"!current.Preferred && !candidate.Preferred (1.1)", 1, TmHint({0, 1}, false),
       TmHint({0, 1}, false), true},
      {"!current.Preferred && !candidate.Preferred (1.2)", 1, TmHint({1, 2}, false),
       TmHint({0, 1}, false), false},
      {"!current.Preferred && !candidate.Preferred (1.3)", 1, TmHint({0, 1}, false),
       TmHint({1, 2}, false), true},
      {"!current.Preferred && !candidate.Preferred (2.1)", 2, TmHint({0, 1}, false),
       TmHint({0}, false), true},
      {"!current.Preferred && !candidate.Preferred (2.2)", 2, TmHint({0, 1}, false),
       TmHint({0, 1}, false), true},
      {"!current.Preferred && !candidate.Preferred (2.3)", 2, TmHint({1, 2}, false),
       TmHint({0, 1}, false), false},
      {"!current.Preferred && !candidate.Preferred (2.4)", 2, TmHint({0, 1}, false),
       TmHint({1, 2}, false), true},
      {"!current.Preferred && !candidate.Preferred (3a)", 2, TmHint({0}, false),
       TmHint({0, 1, 2}, false), true},
      {"!current.Preferred && !candidate.Preferred (3b)", 2, TmHint({0}, false),
       TmHint({0, 1}, false), false},
      {"!current.Preferred && !candidate.Preferred (3ca.1)", 3, TmHint({0}, false),
       TmHint({0, 1}, false), false},
      {"!current.Preferred && !candidate.Preferred (3ca.2)", 3, TmHint({0}, false),
       TmHint({1, 2}, false), false},
      {"!current.Preferred && !candidate.Preferred (3ca.3)", 4, TmHint({0, 1}, false),
       TmHint({1, 2, 3}, false), false},
      {"!current.Preferred && !candidate.Preferred (3cb)", 4, TmHint({1, 2, 3}, false),
       TmHint({0, 1}, false), true},
      {"!current.Preferred && !candidate.Preferred (3cc.1)", 4, TmHint({0, 1, 2}, false),
       TmHint({0, 1, 2}, false), true},
      {"!current.Preferred && !candidate.Preferred (3cc.2)", 4, TmHint({0, 1, 2}, false),
       TmHint({1, 2, 3}, false), true},
      {"!current.Preferred && !candidate.Preferred (3cc.3)", 4, TmHint({1, 2, 3}, false),
       TmHint({0, 1, 2}, false), false},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.description);
    HintMerger merger = NewHintMerger(NumaInfo{}, HintLists{}, Policy::kBestEffort, {});
    merger.best_non_preferred_affinity_count = tc.best_non_preferred_affinity_count;
    const TopologyHint* current = tc.current ? &*tc.current : nullptr;
    const TopologyHint* result = Compare(merger, current, &tc.candidate);
    EXPECT_EQ(result, tc.expect_current ? current : &tc.candidate);
  }
}

// policy_test.go's merge tables: each provider's hints, and the hint the merge gives.
struct TmMergeCase {
  std::string name;
  std::vector<ProviderHints> providers;
  TopologyHint expected;
};

// policy_test.go commonPolicyMergeTestCases.
std::vector<TmMergeCase> TmCommonMergeCases() {
  return {
      {"Two providers, 1 hint each, same mask, both preferred 1/2",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0}, true)})}}},
       TmHint({0}, true)},
      {"Two providers, 1 hint each, same mask, both preferred 2/2",
       {ProviderHints{{"resource1", TmHints({TmHint({1}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({1}, true)})}}},
       TmHint({1}, true)},
      {"Two providers, 1 no hints, 1 single hint preferred 1/2",
       {ProviderHints{}, ProviderHints{{"resource", TmHints({TmHint({0}, true)})}}},
       TmHint({0}, true)},
      {"Two providers, 1 no hints, 1 single hint preferred 2/2",
       {ProviderHints{}, ProviderHints{{"resource", TmHints({TmHint({1}, true)})}}},
       TmHint({1}, true)},
      {"Two providers, 1 with 2 hints, 1 with single hint matching 1/2",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true), TmHint({1}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0}, true)})}}},
       TmHint({0}, true)},
      {"Two providers, 1 with 2 hints, 1 with single hint matching 2/2",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true), TmHint({1}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({1}, true)})}}},
       TmHint({1}, true)},
      {"Two providers, both with 2 hints, matching narrower preferred hint from both",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true), TmHint({1}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0}, true), TmHint({0, 1}, false)})}}},
       TmHint({0}, true)},
      {"Ensure less narrow preferred hints are chosen over narrower non-preferred hints",
       {ProviderHints{{"resource1", TmHints({TmHint({1}, true), TmHint({0, 1}, false)})}},
        ProviderHints{
            {"resource2", TmHints({TmHint({0}, true), TmHint({1}, true), TmHint({0, 1}, false)})}}},
       TmHint({1}, true)},
      {"Multiple resources, same provider",
       {ProviderHints{
           {"resource1", TmHints({TmHint({1}, true), TmHint({0, 1}, false)})},
           {"resource2", TmHints({TmHint({0}, true), TmHint({1}, true), TmHint({0, 1}, false)})}}},
       TmHint({1}, true)},
  };
}

// The bestNonPreferredAffinityCount cases' first provider.
ProviderHints TmWideAndPairProvider() {
  return ProviderHints{
      {"resource1", TmHints({TmHint({0, 1, 2, 3}, false), TmHint({0, 1}, false)})}};
}

// policy_test.go bestEffortPolicy.mergeTestCases (restricted's too: it embeds best-effort).
std::vector<TmMergeCase> TmBestEffortMergeCases(const std::vector<int>& numa_nodes) {
  const BitMask all = TmMaskOfNodes(numa_nodes);
  return {
      {"Two providers, 2 hints each, same mask (some with different bits), same preferred",
       {ProviderHints{{"resource1", TmHints({TmHint({0, 1}, true), TmHint({0, 2}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0, 1}, true), TmHint({0, 2}, true)})}}},
       TmHint({0, 1}, true)},
      {"TopologyHint not set", {}, TopologyHint{all, true}},
      {"HintProvider returns empty non-nil map[string][]TopologyHint",
       {ProviderHints{}},
       TopologyHint{all, true}},
      {"HintProvider returns -nil map[string][]TopologyHint from provider",
       {ProviderHints{{"resource", std::nullopt}}},
       TopologyHint{all, true}},
      {"HintProvider returns empty non-nil map[string][]TopologyHint from provider",
       {ProviderHints{{"resource", TmHints({})}}},
       TopologyHint{all, false}},
      {"Single TopologyHint with Preferred as true and NUMANodeAffinity as nil",
       {ProviderHints{{"resource", TmHints({TmNilHint(true)})}}},
       TopologyHint{all, true}},
      {"Single TopologyHint with Preferred as false and NUMANodeAffinity as nil",
       {ProviderHints{{"resource", TmHints({TmNilHint(false)})}}},
       TopologyHint{all, false}},
      {"Two providers, 1 hint each, no common mask",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({1}, true)})}}},
       TopologyHint{all, false}},
      {"Two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0}, false)})}}},
       TmHint({0}, false)},
      {"Two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2",
       {ProviderHints{{"resource1", TmHints({TmHint({1}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({1}, false)})}}},
       TmHint({1}, false)},
      {"Two providers, 1 hint each, 1 wider mask, both preferred 1/2",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0, 1}, true)})}}},
       TmHint({0}, false)},
      {"Two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true), TmHint({1}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0, 1}, false)})}}},
       TmHint({0}, false)},
      {"Two providers, 1 hint each, 1 wider mask, both preferred 2/2",
       {ProviderHints{{"resource1", TmHints({TmHint({1}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0, 1}, true)})}}},
       TmHint({1}, false)},
      {"bestNonPreferredAffinityCount (1)",
       {TmWideAndPairProvider(), ProviderHints{{"resource2", TmHints({TmHint({0, 1}, false)})}}},
       TmHint({0, 1}, false)},
      {"bestNonPreferredAffinityCount (2)",
       {TmWideAndPairProvider(), ProviderHints{{"resource2", TmHints({TmHint({0, 3}, false)})}}},
       TmHint({0, 3}, false)},
      {"bestNonPreferredAffinityCount (3)",
       {TmWideAndPairProvider(), ProviderHints{{"resource2", TmHints({TmHint({1, 2}, false)})}}},
       TmHint({1, 2}, false)},
      {"bestNonPreferredAffinityCount (4)",
       {TmWideAndPairProvider(), ProviderHints{{"resource2", TmHints({TmHint({2, 3}, false)})}}},
       TmHint({2, 3}, false)},
  };
}

// The second provider of the bestNonPreferredAffinityCount (5) and (6) cases.
ProviderHints TmCount5Provider() {
  return ProviderHints{{"resource2", TmHints({TmHint({1, 2}, false), TmHint({2, 3}, false)})}};
}

ProviderHints TmCount6Provider() {
  return ProviderHints{{"resource2", TmHints({TmHint({1, 2, 3}, false), TmHint({1, 2}, false),
                                              TmHint({1, 3}, false), TmHint({2, 3}, false)})}};
}

// policy_test.go bestEffortPolicy.mergeTestCasesNoPolicies.
std::vector<TmMergeCase> TmBestEffortNoPoliciesCases() {
  return {
      {"bestNonPreferredAffinityCount (5)",
       {TmWideAndPairProvider(), TmCount5Provider()},
       TmHint({1, 2}, false)},
      {"bestNonPreferredAffinityCount (6)",
       {TmWideAndPairProvider(), TmCount6Provider()},
       TmHint({1, 2}, false)},
  };
}

// policy_test.go bestEffortPolicy.mergeTestCasesClosestNUMA.
std::vector<TmMergeCase> TmBestEffortClosestNumaCases() {
  return {
      {"Two providers, 2 hints each, same mask (some with different bits), same preferred",
       {ProviderHints{{"resource1", TmHints({TmHint({0, 4}, true), TmHint({0, 2}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0, 4}, true), TmHint({0, 2}, true)})}}},
       TmHint({0, 2}, true)},
      {"Two providers, 2 hints each, different mask",
       {ProviderHints{{"resource1", TmHints({TmHint({4}, true), TmHint({0, 2}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({4}, true), TmHint({0, 2}, true)})}}},
       TmHint({4}, true)},
      {"bestNonPreferredAffinityCount (5)",
       {TmWideAndPairProvider(), TmCount5Provider()},
       TmHint({2, 3}, false)},
      {"bestNonPreferredAffinityCount (6)",
       {TmWideAndPairProvider(), TmCount6Provider()},
       TmHint({2, 3}, false)},
  };
}

// policy_test.go singleNumaNodePolicy.mergeTestCases.
std::vector<TmMergeCase> TmSingleNumaMergeCases() {
  return {
      {"TopologyHint not set", {}, TmNilHint(true)},
      {"HintProvider returns empty non-nil map[string][]TopologyHint",
       {ProviderHints{}},
       TmNilHint(true)},
      {"HintProvider returns -nil map[string][]TopologyHint from provider",
       {ProviderHints{{"resource", std::nullopt}}},
       TmNilHint(true)},
      {"HintProvider returns empty non-nil map[string][]TopologyHint from provider",
       {ProviderHints{{"resource", TmHints({})}}},
       TmNilHint(false)},
      {"Single TopologyHint with Preferred as true and NUMANodeAffinity as nil",
       {ProviderHints{{"resource", TmHints({TmNilHint(true)})}}},
       TmNilHint(true)},
      {"Single TopologyHint with Preferred as false and NUMANodeAffinity as nil",
       {ProviderHints{{"resource", TmHints({TmNilHint(false)})}}},
       TmNilHint(false)},
      {"Two providers, 1 hint each, no common mask",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({1}, true)})}}},
       TmNilHint(false)},
      {"Two providers, 1 hint each, same mask, 1 preferred, 1 not 1/2",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0}, false)})}}},
       TmNilHint(false)},
      {"Two providers, 1 hint each, same mask, 1 preferred, 1 not 2/2",
       {ProviderHints{{"resource1", TmHints({TmHint({1}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({1}, false)})}}},
       TmNilHint(false)},
      {"Two providers, 1 with 2 hints, 1 with single non-preferred hint matching",
       {ProviderHints{{"resource1", TmHints({TmHint({0}, true), TmHint({1}, true)})}},
        ProviderHints{{"resource2", TmHints({TmHint({0, 1}, false)})}}},
       TmNilHint(false)},
      {"Single NUMA hint generation",
       {ProviderHints{
           {"resource1", TmHints({TmHint({0, 1}, true)})},
           {"resource2", TmHints({TmHint({0}, true), TmHint({1}, true), TmHint({0, 1}, false)})}}},
       TmNilHint(false)},
      {"One no-preference provider",
       {ProviderHints{
            {"resource1", TmHints({TmHint({0}, true), TmHint({1}, true), TmHint({0, 1}, false)})}},
        ProviderHints{}},
       TmHint({0}, true)},
  };
}

std::vector<TmMergeCase> TmJoin(std::vector<TmMergeCase> first,
                                const std::vector<TmMergeCase>& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

// policy_test.go testPolicyMerge: the merged hint only (not the admission).
void TmExpectMerges(Policy policy, const NumaInfo& numa, const PolicyOptions& opts,
                    const std::vector<TmMergeCase>& cases) {
  for (const TmMergeCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(Merge(policy, numa, tc.providers, opts).first, tc.expected);
  }
}

// ---- policy_none_test.go ----

TEST(TopologyManagerPolicyNone, Name) {  // TestPolicyNoneName: "New None Policy"
  EXPECT_EQ(PolicyName(Policy::kNone), "none");
}

TEST(TopologyManagerPolicyNone, CanAdmitPodResult) {  // TestPolicyNoneCanAdmitPodResult
  {
    SCOPED_TRACE("Preferred is set to false in topology hints");
    EXPECT_TRUE(CanAdmitPodResult(Policy::kNone, TmNilHint(false)));
  }
  {
    SCOPED_TRACE("Preferred is set to true in topology hints");
    EXPECT_TRUE(CanAdmitPodResult(Policy::kNone, TmNilHint(true)));
  }
}

TEST(TopologyManagerPolicyNone, Merge) {  // TestPolicyNoneMerge
  const struct {
    std::string name;
    std::vector<ProviderHints> providers;
  } cases[] = {
      {"merged empty providers hints", {}},
      {"merge with a single provider with a single preferred resource",
       {ProviderHints{{"resource", TmHints({TmHint({0, 1}, true)})}}}},
      {"merge with a single provider with a single non-preferred resource",
       {ProviderHints{{"resource", TmHints({TmHint({0, 1}, false)})}}}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    const std::pair<TopologyHint, bool> merged = Merge(Policy::kNone, TmTwoNodes(), tc.providers);
    EXPECT_EQ(merged.first, TopologyHint{});
    EXPECT_TRUE(merged.second);
  }
}

// ---- policy_best_effort_test.go ----

TEST(TopologyManagerPolicyBestEffort, CanAdmitPodResult) {  // TestPolicyBestEffortCanAdmitPodResult
  {
    SCOPED_TRACE("Preferred is set to false in topology hints");
    EXPECT_TRUE(CanAdmitPodResult(Policy::kBestEffort, TmNilHint(false)));
  }
  {
    SCOPED_TRACE("Preferred is set to true in topology hints");
    EXPECT_TRUE(CanAdmitPodResult(Policy::kBestEffort, TmNilHint(true)));
  }
}

TEST(TopologyManagerPolicyBestEffort, Merge) {  // TestPolicyBestEffortMerge
  const NumaInfo numa = TmFourNodes();
  TmExpectMerges(Policy::kBestEffort, numa, {},
                 TmJoin(TmJoin(TmCommonMergeCases(), TmBestEffortMergeCases(numa.nodes)),
                        TmBestEffortNoPoliciesCases()));
}

TEST(TopologyManagerPolicyBestEffort, MergeClosestNUMA) {  // TestPolicyBestEffortMergeClosestNUMA
  const NumaInfo numa = TmEightNodes();
  TmExpectMerges(Policy::kBestEffort, numa, PolicyOptions{true, 8},
                 TmJoin(TmJoin(TmCommonMergeCases(), TmBestEffortMergeCases(numa.nodes)),
                        TmBestEffortClosestNumaCases()));
}

// ---- policy_restricted_test.go ----

TEST(TopologyManagerPolicyRestricted, Name) {  // TestPolicyRestrictedName: "New Restricted Policy"
  EXPECT_EQ(PolicyName(Policy::kRestricted), "restricted");
}

TEST(TopologyManagerPolicyRestricted, CanAdmitPodResult) {  // TestPolicyRestrictedCanAdmitPodResult
  {
    SCOPED_TRACE("Preferred is set to false in topology hints");
    EXPECT_FALSE(CanAdmitPodResult(Policy::kRestricted, TmNilHint(false)));
  }
  {
    SCOPED_TRACE("Preferred is set to true in topology hints");
    EXPECT_TRUE(CanAdmitPodResult(Policy::kRestricted, TmNilHint(true)));
  }
}

TEST(TopologyManagerPolicyRestricted, Merge) {  // TestPolicyRestrictedMerge
  const NumaInfo numa = TmFourNodes();
  TmExpectMerges(Policy::kRestricted, numa, {},
                 TmJoin(TmJoin(TmCommonMergeCases(), TmBestEffortMergeCases(numa.nodes)),
                        TmBestEffortNoPoliciesCases()));
}

TEST(TopologyManagerPolicyRestricted, MergeClosestNUMA) {  // TestPolicyRestrictedMergeClosestNUMA
  const NumaInfo numa = TmEightNodes();
  TmExpectMerges(Policy::kRestricted, numa, PolicyOptions{true, 8},
                 TmJoin(TmJoin(TmCommonMergeCases(), TmBestEffortMergeCases(numa.nodes)),
                        TmBestEffortClosestNumaCases()));
}

// ---- policy_single_numa_node_test.go ----

// TestPolicySingleNumaNodeCanAdmitPodResult.
TEST(TopologyManagerPolicySingleNumaNode, CanAdmitPodResult) {
  SCOPED_TRACE("Preferred is set to false in topology hints");
  EXPECT_FALSE(CanAdmitPodResult(Policy::kSingleNumaNode, TmNilHint(false)));
}

TEST(TopologyManagerPolicySingleNumaNode, FilterHints) {  // TestPolicySingleNumaNodeFilterHints
  const struct {
    std::string name;
    HintLists all_resources;
    HintLists expected_resources;
  } cases[] = {
      {"filter empty resources", {}, {}},
      {"filter hints with nil socket mask 1/2",
       {{TmNilHint(false)}, {TmNilHint(true)}},
       {{}, {TmNilHint(true)}}},
      {"filter hints with nil socket mask 2/2",
       {{TmHint({0}, true), TmNilHint(false)}, {TmHint({1}, true), TmNilHint(true)}},
       {{TmHint({0}, true)}, {TmHint({1}, true), TmNilHint(true)}}},
      {"filter hints with empty resource socket mask",
       {{TmHint({1}, true), TmHint({0}, true), TmNilHint(false)}, {}},
       {{TmHint({1}, true), TmHint({0}, true)}, {}}},
      {"filter hints with wide sockemask",
       {{TmHint({0}, true), TmHint({1}, true), TmHint({1, 2}, false), TmHint({0, 1, 2}, false),
         TmNilHint(false)},
        {TmHint({1, 2}, false), TmHint({0, 1, 2}, false), TmHint({0, 2}, false),
         TmHint({3}, false)},
        {TmHint({1, 2}, false), TmHint({0, 1, 2}, false), TmHint({0, 2}, false)}},
       {{TmHint({0}, true), TmHint({1}, true)}, {}, {}}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(FilterSingleNumaHints(tc.all_resources), tc.expected_resources);
  }
}

TEST(TopologyManagerPolicySingleNumaNode, Merge) {  // TestPolicySingleNumaNodeMerge
  TmExpectMerges(Policy::kSingleNumaNode, TmTwoNodes(), {},
                 TmJoin(TmCommonMergeCases(), TmSingleNumaMergeCases()));
}

// ---- topology_manager_test.go ----

// TestNewManager: the policy named, and the refusal of more than 8 NUMA nodes (the cases of
// unknown policies and options, and of NUMA distances, parse what this port takes parsed).
TEST(TopologyManagerNewManager, PoliciesAndNumaNodeCount) {
  const struct {
    std::string description;
    Policy policy;
    std::string expected_policy;
    int nodes;
    std::string expected_error;
  } cases[] = {
      {"Policy is set to none", Policy::kNone, "none", 0, ""},
      {"Policy is set to best-effort", Policy::kBestEffort, "best-effort", 0, ""},
      {"Policy is set to restricted", Policy::kRestricted, "restricted", 0, ""},
      {"Policy is set to single-numa-node", Policy::kSingleNumaNode, "single-numa-node", 0, ""},
      {"more than 8 NUMA nodes", Policy::kBestEffort, "best-effort", 9,
       "unsupported on machines with more than 8 NUMA Nodes"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.description);
    EXPECT_EQ(PolicyName(tc.policy), tc.expected_policy);
    const absl::Status status =
        CheckNumaNodeCount(tc.policy, NumaInfo{TmNodes(tc.nodes), {}}, PolicyOptions{});
    EXPECT_EQ(std::string(status.message()), tc.expected_error);
  }
}

// TestAdmit, container scope: the single container's merge decides (the pod scope merges the
// same hints; the QoS class does not enter the decision).
TEST(TopologyManagerAdmit, Admit) {
  const std::vector<ProviderHints> preferred0 = {
      ProviderHints{{"resource", TmHints({TmHint({0}, true), TmHint({0, 1}, false)})}}};
  const std::vector<ProviderHints> preferred01 = {ProviderHints{
      {"resource", TmHints({TmHint({0}, true), TmHint({1}, true), TmHint({0, 1}, false)})}}};
  const std::vector<ProviderHints> none_preferred = {
      ProviderHints{{"resource", TmHints({TmHint({0, 1}, false)})}}};
  const struct {
    std::string name;
    Policy policy;
    std::vector<ProviderHints> providers;
    bool expected;
  } cases[] = {
      {"QOSClass set as BestEffort. None Policy. No Hints.", Policy::kNone, {}, true},
      {"QOSClass set as Guaranteed. None Policy. No Hints.", Policy::kNone, {}, true},
      {"QOSClass set as BestEffort. single-numa-node Policy. No Hints.",
       Policy::kSingleNumaNode,
       {ProviderHints{}},
       true},
      {"QOSClass set as BestEffort. Restricted Policy. No Hints.",
       Policy::kRestricted,
       {ProviderHints{}},
       true},
      {"QOSClass set as Guaranteed. BestEffort Policy. Preferred Affinity.", Policy::kBestEffort,
       preferred0, true},
      {"QOSClass set as Guaranteed. BestEffort Policy. More than one Preferred Affinity.",
       Policy::kBestEffort, preferred01, true},
      {"QOSClass set as Burstable. BestEffort Policy. More than one Preferred Affinity.",
       Policy::kBestEffort, preferred01, true},
      {"QOSClass set as Guaranteed. BestEffort Policy. No Preferred Affinity.", Policy::kBestEffort,
       none_preferred, true},
      {"QOSClass set as Guaranteed. Restricted Policy. Preferred Affinity.", Policy::kRestricted,
       preferred0, true},
      {"QOSClass set as Burstable. Restricted Policy. Preferred Affinity.", Policy::kRestricted,
       preferred0, true},
      {"QOSClass set as Guaranteed. Restricted Policy. More than one Preferred affinity.",
       Policy::kRestricted, preferred01, true},
      {"QOSClass set as Burstable. Restricted Policy. More than one Preferred affinity.",
       Policy::kRestricted, preferred01, true},
      {"QOSClass set as Guaranteed. Restricted Policy. No Preferred affinity.", Policy::kRestricted,
       none_preferred, false},
      {"QOSClass set as Burstable. Restricted Policy. No Preferred affinity.", Policy::kRestricted,
       none_preferred, false},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(Merge(tc.policy, TmTwoNodes(), tc.providers).second, tc.expected);
  }
}

// ---- devicemanager/topology_hints_test.go ----

// topology_hints_test.go makeNUMADevice, and devices with a nil Topology or one of no nodes.
Device TmNumaDevice(int numa) { return Device{std::vector<int>{numa}}; }
Device TmNoTopology() { return Device{std::nullopt}; }
Device TmNoNodes() { return Device{std::vector<int>{}}; }

// Devices "Dev<first>" to "Dev<last - 1>" on `numa`, added to `devices`.
Devices TmNumaDevices(Devices devices, int first, int last, int numa) {
  for (int i = first; i < last; ++i) devices["Dev" + std::to_string(i)] = TmNumaDevice(numa);
  return devices;
}

// getCommonTestCases' rows: the container "fakeContainer" of pod "fakePod" asks `limits`; the
// pod's containers already hold `allocated` (container -> resource -> devices).
struct TmHintsCase {
  std::string description;
  std::map<std::string, int> limits;
  std::map<std::string, Devices> devices;
  std::map<std::string, std::map<std::string, DeviceIds>> allocated;
  ProviderHints expected;
};

Devices TmTwoPerSocket() {
  return Devices{{"Dev1", TmNumaDevice(0)},
                 {"Dev2", TmNumaDevice(1)},
                 {"Dev3", TmNumaDevice(0)},
                 {"Dev4", TmNumaDevice(1)}};
}

Devices TmTwoOnSocket0TwoOnSocket1() {
  return Devices{{"Dev1", TmNumaDevice(0)},
                 {"Dev2", TmNumaDevice(0)},
                 {"Dev3", TmNumaDevice(1)},
                 {"Dev4", TmNumaDevice(1)}};
}

// topology_hints_test.go getCommonTestCases.
std::vector<TmHintsCase> TmCommonHintsCases() {
  const auto both = TmHints({TmHint({0}, true), TmHint({1}, true), TmHint({0, 1}, false)});
  return {
      {"Single Request, no alignment",
       {{"testdevice", 1}},
       {{"testdevice", Devices{{"Dev1", TmNoTopology()},
                               {"Dev2", TmNoTopology()},
                               {"Dev3", TmNoNodes()},
                               {"Dev4", TmNoNodes()}}}},
       {},
       {{"testdevice", std::nullopt}}},
      {"Single Request, only one with alignment",
       {{"testdevice", 1}},
       {{"testdevice", Devices{{"Dev1", TmNoTopology()}, {"Dev2", TmNumaDevice(1)}}}},
       {},
       {{"testdevice", TmHints({TmHint({1}, true), TmHint({0, 1}, false)})}}},
      {"Single Request, one device per socket",
       {{"testdevice", 1}},
       {{"testdevice", Devices{{"Dev1", TmNumaDevice(0)}, {"Dev2", TmNumaDevice(1)}}}},
       {},
       {{"testdevice", both}}},
      {"Request for 2, one device per socket",
       {{"testdevice", 2}},
       {{"testdevice", Devices{{"Dev1", TmNumaDevice(0)}, {"Dev2", TmNumaDevice(1)}}}},
       {},
       {{"testdevice", TmHints({TmHint({0, 1}, true)})}}},
      {"Request for 2, 2 devices per socket",
       {{"testdevice", 2}},
       {{"testdevice", TmTwoPerSocket()}},
       {},
       {{"testdevice", both}}},
      {"Request for 2, optimal on 1 NUMA node, forced cross-NUMA",
       {{"testdevice", 2}},
       {{"testdevice", TmTwoPerSocket()}},
       {{"fakeOtherContainer", {{"testdevice", {"Dev1", "Dev2"}}}}},
       {{"testdevice", TmHints({TmHint({0, 1}, false)})}}},
      {"2 device types, mixed configuration",
       {{"testdevice1", 2}, {"testdevice2", 1}},
       {{"testdevice1", TmTwoPerSocket()}, {"testdevice2", Devices{{"Dev1", TmNumaDevice(0)}}}},
       {},
       {{"testdevice1", both},
        {"testdevice2", TmHints({TmHint({0}, true), TmHint({0, 1}, false)})}}},
      {"Single device type, more requested than available",
       {{"testdevice", 6}},
       {{"testdevice", TmTwoOnSocket0TwoOnSocket1()}},
       {},
       {{"testdevice", TmHints({})}}},
      {"Single device type, all already allocated to container",
       {{"testdevice", 2}},
       {{"testdevice", Devices{{"Dev1", TmNumaDevice(0)}, {"Dev2", TmNumaDevice(0)}}}},
       {{"fakeContainer", {{"testdevice", {"Dev1", "Dev2"}}}}},
       {{"testdevice", TmHints({TmHint({0}, true), TmHint({0, 1}, false)})}}},
      {"Single device type, less already allocated to container than requested",
       {{"testdevice", 4}},
       {{"testdevice", TmTwoOnSocket0TwoOnSocket1()}},
       {{"fakeContainer", {{"testdevice", {"Dev1", "Dev2"}}}}},
       {{"testdevice", TmHints({})}}},
      {"Single device type, more already allocated to container than requested",
       {{"testdevice", 2}},
       {{"testdevice", TmTwoOnSocket0TwoOnSocket1()}},
       {{"fakeContainer", {{"testdevice", {"Dev1", "Dev2", "Dev3", "Dev4"}}}}},
       {{"testdevice", TmHints({})}}},
  };
}

// TestGetTopologyHints sorts both lists by TopologyHint.LessThan before comparing.
std::optional<std::vector<TopologyHint>> TmSorted(std::optional<std::vector<TopologyHint>> hints) {
  if (hints) std::stable_sort(hints->begin(), hints->end(), LessThan);
  return hints;
}

// TestGetTopologyHints: the manager's state as the test sets it (every listed device healthy,
// each allocation also in the resource's devices in use), NUMA nodes 0 and 1.
TEST(TopologyManagerDeviceHints, GetTopologyHints) {
  for (const TmHintsCase& tc : TmCommonHintsCases()) {
    SCOPED_TRACE(tc.description);
    std::map<std::string, ResourceState> resources;
    for (const auto& entry : tc.devices) {
      ResourceState& state = resources[entry.first];
      state.devices = entry.second;
      for (const auto& device : entry.second) state.healthy.insert(device.first);
    }
    ContainerState container;
    container.limits = tc.limits;
    for (const auto& by_container : tc.allocated) {
      for (const auto& by_resource : by_container.second) {
        resources[by_resource.first].in_use = by_resource.second;
        if (by_container.first == "fakeContainer") {
          container.allocated[by_resource.first] = by_resource.second;
        }
      }
    }
    const ProviderHints hints = GetTopologyHints({0, 1}, resources, container);
    for (const auto& expected : tc.expected) {
      SCOPED_TRACE(expected.first);
      const auto actual = hints.find(expected.first);
      ASSERT_TRUE(actual != hints.end()) << "no hints for the resource";
      EXPECT_EQ(TmSorted(actual->second), TmSorted(expected.second));
    }
  }
}

// TestTopologyAlignedAllocation's rows: `reply` is the plugin's GetPreferredAllocation answer
// (nullopt: the plugin offers none), `alignment` the allocated devices per NUMA node.
struct TmAlignedCase {
  std::string description;
  int request;
  Devices devices;
  TopologyHint hint;
  std::optional<std::vector<std::string>> reply;
  std::vector<std::string> expected_preferred_allocation;
  std::map<int, int> expected_alignment;
};

Devices TmSixAlternating() {
  Devices devices;
  for (int i = 1; i <= 6; ++i) devices["Dev" + std::to_string(i)] = TmNumaDevice((i + 1) % 2);
  return devices;
}

Devices TmEightOnFourSockets() {
  Devices devices;
  for (int i = 1; i <= 8; ++i) devices["Dev" + std::to_string(i)] = TmNumaDevice((i - 1) % 4);
  return devices;
}

std::vector<TmAlignedCase> TmAlignedCases() {
  const Devices hundred_each = TmNumaDevices(TmNumaDevices({}, 0, 100, 0), 100, 200, 1);
  const Devices three_and_rest = TmNumaDevices(TmNumaDevices({}, 0, 3, 0), 3, 100, 1);
  return {
      {"Single Request, no alignment",
       1,
       Devices{{"Dev1", TmNoTopology()}, {"Dev2", TmNoTopology()}},
       TmHint({0, 1}, true),
       std::nullopt,
       {},
       {}},
      {"Request for 1, partial alignment",
       1,
       Devices{{"Dev1", TmNoTopology()}, {"Dev2", TmNumaDevice(1)}},
       TmHint({1}, true),
       std::nullopt,
       {},
       {{1, 1}}},
      {"Single Request, socket 0",
       1,
       Devices{{"Dev1", TmNumaDevice(0)}, {"Dev2", TmNumaDevice(1)}},
       TmHint({0}, true),
       std::nullopt,
       {},
       {{0, 1}}},
      {"Single Request, socket 1",
       1,
       Devices{{"Dev1", TmNumaDevice(0)}, {"Dev2", TmNumaDevice(1)}},
       TmHint({1}, true),
       std::nullopt,
       {},
       {{1, 1}}},
      {"Request for 2, socket 0",
       2,
       TmTwoPerSocket(),
       TmHint({0}, true),
       std::nullopt,
       {},
       {{0, 2}}},
      {"Request for 2, socket 1",
       2,
       TmTwoPerSocket(),
       TmHint({1}, true),
       std::nullopt,
       {},
       {{1, 2}}},
      {"Request for 4, unsatisfiable, prefer socket 0",
       4,
       TmSixAlternating(),
       TmHint({0}, true),
       std::nullopt,
       {},
       {{0, 3}, {1, 1}}},
      {"Request for 4, unsatisfiable, prefer socket 1",
       4,
       TmSixAlternating(),
       TmHint({1}, true),
       std::nullopt,
       {},
       {{0, 1}, {1, 3}}},
      {"Request for 4, multisocket",
       4,
       TmEightOnFourSockets(),
       TmHint({1, 3}, true),
       std::nullopt,
       {},
       {{1, 2}, {3, 2}}},
      {"Request for 5, socket 0, preferred aligned accepted",
       5,
       hundred_each,
       TmHint({0}, true),
       std::vector<std::string>{"Dev0", "Dev19", "Dev83", "Dev42", "Dev77"},
       {"Dev0", "Dev19", "Dev83", "Dev42", "Dev77"},
       {{0, 5}}},
      {"Request for 5, socket 0, preferred aligned accepted, unaligned ignored",
       5,
       hundred_each,
       TmHint({0}, true),
       std::vector<std::string>{"Dev0", "Dev19", "Dev83", "Dev150", "Dev186"},
       {"Dev0", "Dev19", "Dev83"},
       {{0, 5}}},
      {"Request for 5, socket 1, preferred aligned accepted, bogus ignored",
       5,
       TmNumaDevices({}, 0, 100, 1),
       TmHint({1}, true),
       std::vector<std::string>{"Dev0", "Dev19", "Dev83", "bogus0", "bogus1"},
       {"Dev0", "Dev19", "Dev83"},
       {{1, 5}}},
      {"Request for 5, multisocket, preferred accepted",
       5,
       three_and_rest,
       TmHint({0}, true),
       std::vector<std::string>{"Dev0", "Dev1", "Dev2", "Dev42", "Dev83"},
       {"Dev0", "Dev1", "Dev2", "Dev42", "Dev83"},
       {{0, 3}, {1, 2}}},
      {"Request for 5, multisocket, preferred unaligned accepted, bogus ignored",
       5,
       three_and_rest,
       TmHint({0}, true),
       std::vector<std::string>{"Dev0", "Dev1", "Dev2", "Dev42", "bogus0"},
       {"Dev0", "Dev1", "Dev2", "Dev42"},
       {{0, 3}, {1, 2}}},
  };
}

// A request for `tc`'s devices, all healthy and free, none held by the container.
AllocationRequest TmAlignedRequest(const TmAlignedCase& tc) {
  AllocationRequest request;
  request.resource = "resource";
  request.required = tc.request;
  request.devices = tc.devices;
  request.healthy = DeviceIds{};
  for (const auto& device : tc.devices) request.healthy->insert(device.first);
  request.affinity = tc.hint;
  if (tc.reply) {
    request.preferred = [reply = *tc.reply](const DeviceIds&, const DeviceIds&,
                                            int) -> absl::StatusOr<std::vector<std::string>> {
      return reply;
    };
  }
  return request;
}

// TestTopologyAlignedAllocation.
TEST(TopologyManagerDeviceAllocation, TopologyAlignedAllocation) {
  for (const TmAlignedCase& tc : TmAlignedCases()) {
    SCOPED_TRACE(tc.description);
    const absl::StatusOr<DeviceIds> allocated = DevicesToAllocate(TmAlignedRequest(tc));
    ASSERT_TRUE(allocated.ok()) << allocated.status();
    EXPECT_EQ(static_cast<int>(allocated->size()), tc.request);
    for (const std::string& id : tc.expected_preferred_allocation) {
      EXPECT_TRUE(allocated->contains(id)) << id;
    }
    std::map<int, int> alignment;
    if (DeviceHasTopologyAlignment(tc.devices)) {
      for (const std::string& id : *allocated) {
        const Device& device = tc.devices.at(id);
        if (device.numa_nodes && !device.numa_nodes->empty()) ++alignment[device.numa_nodes->at(0)];
      }
    }
    EXPECT_EQ(alignment, tc.expected_alignment);
  }
}

// TestGetPreferredAllocationParameters: what the plugin is asked. (Upstream's check of the
// must-include list compares the available list twice; the list is checked here.)
TEST(TopologyManagerDeviceAllocation, GetPreferredAllocationParameters) {
  const Devices four0 = TmNumaDevices({}, 0, 4, 0);
  const Devices eight0 = TmNumaDevices({}, 0, 8, 0);
  const Devices four_each = TmNumaDevices(TmNumaDevices({}, 0, 4, 0), 4, 8, 1);
  const struct {
    std::string description;
    int request;
    Devices all_devices;
    DeviceIds allocated_devices;
    DeviceIds reusable_devices;
    TopologyHint hint;
    DeviceIds expected_available;
    DeviceIds expected_must_include;
    int expected_size;
  } cases[] = {
      {"Request for 1, socket 0, 0 already allocated, 0 reusable",
       1,
       four0,
       {},
       {},
       TmHint({0}, true),
       {"Dev0", "Dev1", "Dev2", "Dev3"},
       {},
       1},
      {"Request for 4, socket 0, 2 already allocated, 2 reusable",
       4,
       eight0,
       {"Dev0", "Dev5"},
       {"Dev0", "Dev5"},
       TmHint({0}, true),
       {"Dev0", "Dev1", "Dev2", "Dev3", "Dev4", "Dev5", "Dev6", "Dev7"},
       {"Dev0", "Dev5"},
       4},
      {"Request for 4, socket 0, 4 already allocated, 2 reusable",
       4,
       eight0,
       {"Dev0", "Dev5", "Dev4", "Dev1"},
       {"Dev0", "Dev5"},
       TmHint({0}, true),
       {"Dev0", "Dev2", "Dev3", "Dev5", "Dev6", "Dev7"},
       {"Dev0", "Dev5"},
       4},
      {"Request for 6, multisocket, 2 already allocated, 2 reusable",
       6,
       four_each,
       {"Dev1", "Dev6"},
       {"Dev1", "Dev6"},
       TmHint({0}, true),
       {"Dev0", "Dev1", "Dev2", "Dev3", "Dev4", "Dev5", "Dev6", "Dev7"},
       {"Dev0", "Dev1", "Dev2", "Dev3", "Dev6"},
       6},
      {"Request for 6, multisocket, 4 already allocated, 2 reusable",
       6,
       four_each,
       {"Dev0", "Dev1", "Dev6", "Dev7"},
       {"Dev1", "Dev6"},
       TmHint({0}, true),
       {"Dev1", "Dev2", "Dev3", "Dev4", "Dev5", "Dev6"},
       {"Dev1", "Dev2", "Dev3", "Dev6"},
       6},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.description);
    DeviceIds actual_available;
    DeviceIds actual_must_include;
    int actual_size = 0;
    AllocationRequest request;
    request.resource = "resource";
    request.required = tc.request;
    request.devices = tc.all_devices;
    request.healthy = DeviceIds{};
    for (const auto& device : tc.all_devices) request.healthy->insert(device.first);
    request.in_use = tc.allocated_devices;
    request.reusable = tc.reusable_devices;
    request.affinity = tc.hint;
    request.preferred = [&actual_available, &actual_must_include, &actual_size](
                            const DeviceIds& available, const DeviceIds& must_include,
                            int size) -> absl::StatusOr<std::vector<std::string>> {
      actual_available.insert(available.begin(), available.end());
      actual_must_include.insert(must_include.begin(), must_include.end());
      actual_size = size;
      return std::vector<std::string>{};
    };
    const absl::StatusOr<DeviceIds> allocated = DevicesToAllocate(request);
    ASSERT_TRUE(allocated.ok()) << allocated.status();
    EXPECT_EQ(actual_available, tc.expected_available);
    EXPECT_EQ(actual_must_include, tc.expected_must_include);
    EXPECT_EQ(actual_size, tc.expected_size);
  }
}

// ---- devicemanager/manager_test.go ----

// TestPodContainerDeviceToAllocate: resource1 is registered without a healthy device,
// resource2 is not registered, resource3's healthy devices no longer include the one its
// container holds.
TEST(TopologyManagerDeviceAllocation, PodContainerDeviceToAllocate) {
  const struct {
    std::string description;
    std::string resource;
    int required;
    DeviceIds held;
    std::optional<DeviceIds> healthy;
    std::string expected_error;
  } cases[] = {
      {"Admission error in case no healthy devices to allocate present",
       "domain1.com/resource1",
       2,
       {"dev1", "dev2"},
       DeviceIds{},
       "no healthy devices present; cannot allocate unhealthy devices domain1.com/resource1"},
      {"Admission error in case resource is not registered",
       "domain2.com/resource2",
       1,
       {"dev5"},
       std::nullopt,
       "cannot allocate unregistered device domain2.com/resource2"},
      {"Admission error in case resource not devices previously allocated no longer healthy",
       "domain2.com/resource3",
       1,
       {"dev5"},
       DeviceIds{"dev7", "dev8"},
       "previously allocated devices are no longer healthy; cannot allocate unhealthy devices "
       "domain2.com/resource3"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.description);
    AllocationRequest request;
    request.resource = tc.resource;
    request.required = tc.required;
    request.healthy = tc.healthy;
    request.container_devices = tc.held;
    const absl::StatusOr<DeviceIds> allocated = DevicesToAllocate(request);
    ASSERT_FALSE(allocated.ok());
    EXPECT_EQ(std::string(allocated.status().message()), tc.expected_error);
  }
}

}  // namespace
}  // namespace rdmadp::testing::topology
