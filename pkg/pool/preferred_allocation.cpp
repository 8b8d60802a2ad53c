#include "pkg/pool/preferred_allocation.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

namespace rdmadp::pool {
namespace {

// One HCA's free shares among `available`, lowest index first, and how many the container
// takes of it so far.
struct HcaChoice {
  std::vector<std::pair<int64_t, const std::string*>> free;  // (share index, ID)
  size_t next = 0;
  int taken = 0;
  bool HasFree() const { return next < free.size(); }
};

int64_t ShareIndex(const std::string& id) {
  int64_t v = 0;
  const size_t dash = id.rfind('-');
  std::from_chars(id.data() + dash + 1, id.data() + id.size(), v);
  return v;
}

// The group (a NUMA node, or a PCIe root within one) to anchor on: the closest fit of
// `needed` distinct HCAs, else the one with the most; `unknown` (no NUMA node, no root)
// loses ties. `count`: distinct HCAs with a free share per group key, never empty.
template <typename Key>
Key ClosestFit(const std::map<Key, int>& count, int needed, const Key& unknown) {
  std::optional<Key> fit;
  std::optional<Key> most;
  const Key& last = unknown;
  auto better = [&](const Key& a, const Key& b, bool fewer) {  // a beats b?
    const int na = count.at(a);
    const int nb = count.at(b);
    if (na != nb) return fewer ? na < nb : na > nb;
    if ((a == last) != (b == last)) return b == last;
    return a < b;
  };
  for (const auto& [key, n] : count) {
    if (n >= needed && (!fit || better(key, *fit, true))) fit = key;
    if (!most || better(key, *most, false)) most = key;
  }
  return fit ? *fit : *most;
}

}  // namespace

std::vector<std::string> PreferredAllocation(const std::vector<PoolHca>& hcas, const PerHcaIds& ids,
                                             const std::vector<std::string>& available,
                                             const std::vector<std::string>& must_include,
                                             int size) {
  // Each HCA's offered shares, sorted and without repeats: no set of strings, whose compares
  // would walk the common "0000:xx:00.0-" prefix of thousands of IDs.
  std::vector<HcaChoice> choice(hcas.size());
  for (const auto& id : available) {
    if (auto h = ids.HcaOf(id)) choice[*h].free.emplace_back(ShareIndex(id), &id);
  }
  for (auto& c : choice) {
    std::sort(c.free.begin(), c.free.end());
    c.free.erase(std::unique(c.free.begin(), c.free.end(),
                             [](const auto& a, const auto& b) { return a.first == b.first; }),
                 c.free.end());
  }
  std::vector<std::string> out;
  std::optional<size_t> anchor_hca;
  for (const auto& id : must_include) {
    auto h = ids.HcaOf(id);
    if (!h) continue;
    auto& free = choice[*h].free;
    auto it = std::lower_bound(free.begin(), free.end(), ShareIndex(id),
                               [](const auto& f, int64_t share) { return f.first < share; });
    if (it == free.end() || it->first != ShareIndex(id)) continue;  // not offered, or twice
    out.push_back(id);
    free.erase(it);
    ++choice[*h].taken;
    if (!anchor_hca) anchor_hca = *h;
  }
  // In 64 bits: `size` is the kubelet's int32, which may be anything.
  const int64_t needed = int64_t{size} - std::ssize(out);
  if (needed <= 0) return out;

  auto numa = [&](size_t h) { return hcas[h].function.numa_node; };
  auto root = [&](size_t h) -> const std::string& { return hcas[h].function.pcie_root; };
  constexpr int64_t kNoNode = -1;
  constexpr int kMost = std::numeric_limits<int>::max();  // no group fits: the one with most
  // The anchor: with must-include IDs, the node, then the root, of most of their HCAs (the
  // kubelet sends them in no particular order); else the closest fit of the free HCAs.
  std::map<int64_t, int> per_node;
  for (size_t h = 0; h < hcas.size(); ++h) {
    if (anchor_hca ? choice[h].taken > 0 : choice[h].HasFree()) ++per_node[numa(h)];
  }
  if (per_node.empty()) return out;
  const int fit = anchor_hca ? kMost : static_cast<int>(std::min<int64_t>(needed, kMost));
  const int64_t anchor_numa = ClosestFit(per_node, fit, kNoNode);
  std::map<std::string, int> per_root;
  for (size_t h = 0; h < hcas.size(); ++h) {
    if (numa(h) == anchor_numa && (anchor_hca ? choice[h].taken > 0 : choice[h].HasFree())) {
      ++per_root[root(h)];
    }
  }
  const std::string anchor_root = ClosestFit(per_root, fit, std::string());

  // The HCAs with a free share, closest to the anchor first; then rounds, each taking one
  // share of every HCA that has the fewest taken so far: distinct HCAs before second shares,
  // in O(HCAs log HCAs + IDs taken + rounds x HCAs left).
  std::vector<size_t> order;
  for (size_t h = 0; h < hcas.size(); ++h) {
    if (choice[h].HasFree()) order.push_back(h);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tuple(numa(a) != anchor_numa, root(a) != anchor_root, a) <
           std::tuple(numa(b) != anchor_numa, root(b) != anchor_root, b);
  });
  int64_t left = needed;
  while (left > 0 && !order.empty()) {
    int level = kMost;
    for (size_t h : order) level = std::min(level, choice[h].taken);
    for (size_t h : order) {
      if (left == 0) break;
      HcaChoice& c = choice[h];
      if (c.taken != level) continue;
      out.push_back(*c.free[c.next++].second);
      ++c.taken;
      --left;
    }
    std::erase_if(order, [&](size_t h) { return !choice[h].HasFree(); });
  }
  return out;
}

}  // namespace rdmadp::pool
