#include "pkg/dra/slices/update_spacing.h"

#include <algorithm>
#include <set>
#include <utility>

namespace rdmadp::dra {

std::vector<SliceWrite> UpdateSpacing::Hold(std::vector<SliceWrite> writes,
                                            const std::map<std::string, PublishedSlice>& published,
                                            TimePoint now) {
  held_until_.reset();
  // A pool with a slice to create is repaired at once: holding its updates would leave it
  // half at one generation.
  std::set<std::string> creating;
  for (const auto& w : writes) {
    if (w.kind == SliceWrite::Kind::kCreate) creating.insert(SlicePoolName(w.object));
  }
  std::set<std::string> held;
  for (const auto& w : writes) {
    if (w.kind != SliceWrite::Kind::kUpdate) continue;
    const std::string pool = SlicePoolName(w.object);
    if (creating.count(pool) != 0) continue;
    auto it = last_update_.find(pool);
    if (it == last_update_.end() || now >= it->second + kUpdateSpacing) continue;
    held.insert(it->first);
    held_until_ =
        std::min(held_until_.value_or(it->second + kUpdateSpacing), it->second + kUpdateSpacing);
  }
  if (held.empty()) return writes;
  std::vector<SliceWrite> out;
  for (auto& w : writes) {
    std::string pool = SlicePoolName(w.object);
    if (w.kind == SliceWrite::Kind::kDelete) {
      auto it = published.find(w.name);
      pool = it == published.end() ? "" : SlicePoolName(it->second.object);
    }
    if (held.count(pool) == 0) out.push_back(std::move(w));
  }
  return out;
}

void UpdateSpacing::Written(const std::vector<SliceWrite>& writes, TimePoint now) {
  for (const auto& w : writes) {
    if (w.kind == SliceWrite::Kind::kUpdate) last_update_[SlicePoolName(w.object)] = now;
  }
}

}  // namespace rdmadp::dra
