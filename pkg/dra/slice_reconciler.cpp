#include "pkg/dra/slice_reconciler.h"

#include <algorithm>
#include <set>

namespace rdmadp::dra {
namespace {

std::string PoolOf(const nlohmann::json& slice) {
  const auto& spec = slice.value("spec", nlohmann::json::object());
  return spec.contains("pool") ? spec["pool"].value("name", "") : "";
}

int64_t GenerationOf(const nlohmann::json& slice) {
  const auto& spec = slice.value("spec", nlohmann::json::object());
  return spec.contains("pool") ? spec["pool"].value("generation", int64_t{0}) : 0;
}

// The spec without its generation: what a pool's content is.
nlohmann::json Content(const nlohmann::json& slice) {
  nlohmann::json spec = slice.value("spec", nlohmann::json::object());
  if (spec.contains("pool")) spec["pool"].erase("generation");
  return spec;
}

}  // namespace

bool CarriesAll(const nlohmann::json& have, const nlohmann::json& want) {
  if (want.is_object()) {
    if (!have.is_object()) return false;
    for (const auto& [key, value] : want.items()) {
      if (!have.contains(key) || !CarriesAll(have[key], value)) return false;
    }
    return true;
  }
  if (want.is_array()) {
    if (!have.is_array() || have.size() != want.size()) return false;
    for (size_t i = 0; i < want.size(); ++i) {
      if (!CarriesAll(have[i], want[i])) return false;
    }
    return true;
  }
  return have == want;
}

std::vector<SliceWrite> Reconcile(const std::map<std::string, PublishedSlice>& published,
                                  const std::vector<WantedPool>& wanted) {
  std::vector<SliceWrite> writes;
  std::set<std::string> wanted_pools;
  for (const WantedPool& pool : wanted) {
    wanted_pools.insert(pool.pool_name);
    std::vector<const PublishedSlice*> mine;
    int64_t generation = 0;
    for (const auto& [name, slice] : published) {
      if (PoolOf(slice.object) != pool.pool_name) continue;
      mine.push_back(&slice);
      generation = std::max(generation, GenerationOf(slice.object));
    }
    // Unchanged: every published slice is of the newest generation and each wanted slice
    // is carried by a distinct one of them.
    bool unchanged = mine.size() == pool.slices.size();
    std::vector<bool> used(mine.size(), false);
    for (const auto& want : pool.slices) {
      if (!unchanged) break;
      const nlohmann::json content = Content(want);
      bool found = false;
      for (size_t i = 0; i < mine.size() && !found; ++i) {
        if (!used[i] && GenerationOf(mine[i]->object) == generation &&
            CarriesAll(Content(mine[i]->object), content)) {
          used[i] = found = true;
        }
      }
      unchanged = found;
    }
    if (unchanged) continue;
    const int64_t next = generation + 1;
    for (size_t i = 0; i < pool.slices.size(); ++i) {
      nlohmann::json object = pool.slices[i];
      object["spec"]["pool"]["generation"] = next;
      if (i < mine.size()) {
        object["metadata"] = mine[i]->object.value("metadata", nlohmann::json::object());
        writes.push_back({SliceWrite::Kind::kUpdate, mine[i]->name, mine[i]->resource_version,
                          std::move(object)});
      } else {
        writes.push_back({SliceWrite::Kind::kCreate, "", "", std::move(object)});
      }
    }
    for (size_t i = pool.slices.size(); i < mine.size(); ++i) {
      writes.push_back({SliceWrite::Kind::kDelete, mine[i]->name, mine[i]->resource_version, {}});
    }
  }
  for (const auto& [name, slice] : published) {
    if (wanted_pools.count(PoolOf(slice.object)) == 0) {
      writes.push_back({SliceWrite::Kind::kDelete, name, slice.resource_version, {}});
    }
  }
  return writes;
}

}  // namespace rdmadp::dra
