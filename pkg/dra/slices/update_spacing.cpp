#include "pkg/dra/slices/update_spacing.h"

#include <algorithm>
#include <set>
#include <utility>

#include "pkg/kube/json_read.h"

namespace rdmadp::dra {
namespace {

std::string PoolOf(const nlohmann::json& object) {
  return kube::Str(kube::Obj(kube::Obj(object, "spec"), "pool"), "name");
}

}  // namespace

std::vector<SliceWrite> UpdateSpacing::Hold(std::vector<SliceWrite> writes,
                                            const std::map<std::string, PublishedSlice>& published,
                                            TimePoint now) {
  held_until_.reset();
  // A pool with a slice to create is repaired at once: holding its updates would leave it
  // half at one generation.
  std::set<std::string> creating;
  for (const auto& w : writes) {
    if (w.kind == SliceWrite::Kind::kCreate) creating.insert(PoolOf(w.object));
  }
  std::set<std::string> held;
  for (const auto& w : writes) {
    if (w.kind != SliceWrite::Kind::kUpdate || creating.count(PoolOf(w.object)) != 0) continue;
    auto it = last_update_.find(PoolOf(w.object));
    if (it == last_update_.end() || now >= it->second + kUpdateSpacing) continue;
    held.insert(it->first);
    held_until_ =
        std::min(held_until_.value_or(it->second + kUpdateSpacing), it->second + kUpdateSpacing);
  }
  if (held.empty()) return writes;
  std::vector<SliceWrite> out;
  for (auto& w : writes) {
    std::string pool = PoolOf(w.object);
    if (w.kind == SliceWrite::Kind::kDelete) {
      auto it = published.find(w.name);
      pool = it == published.end() ? "" : PoolOf(it->second.object);
    }
    if (held.count(pool) == 0) out.push_back(std::move(w));
  }
  return out;
}

void UpdateSpacing::Written(const std::vector<SliceWrite>& writes, TimePoint now) {
  for (const auto& w : writes) {
    if (w.kind == SliceWrite::Kind::kUpdate) last_update_[PoolOf(w.object)] = now;
  }
}

}  // namespace rdmadp::dra
