#include "pkg/dra/slices/slice_reconciler.h"

#include <algorithm>
#include <limits>
#include <set>

#include "pkg/kube/json_read.h"

namespace rdmadp::dra {
namespace {

using kube::Member;

const nlohmann::json* PoolField(const nlohmann::json& slice, const char* key) {
  const nlohmann::json* spec = Member(slice, "spec");
  const nlohmann::json* pool = spec ? Member(*spec, "pool") : nullptr;
  return pool ? Member(*pool, key) : nullptr;
}

int64_t GenerationOf(const nlohmann::json& slice) {
  const nlohmann::json* g = PoolField(slice, "generation");
  return g && g->is_number_integer() ? g->get<int64_t>() : 0;
}

// The spec without its generation: what a pool's content is.
nlohmann::json Content(const nlohmann::json& slice) {
  const nlohmann::json* found = Member(slice, "spec");
  nlohmann::json spec = found && found->is_object() ? *found : nlohmann::json::object();
  if (spec.contains("pool") && spec["pool"].is_object()) spec["pool"].erase("generation");
  return spec;
}

bool Empty(const nlohmann::json& v) {
  return v.is_null() || ((v.is_object() || v.is_array() || v.is_string()) && v.empty());
}

std::string Dotted(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

void CollectDropped(const nlohmann::json& written, const nlohmann::json& answer,
                    const std::string& path, FieldPaths& out) {
  if (written.is_object() && answer.is_object()) {
    for (const auto& [key, value] : written.items()) {
      if (Empty(value)) continue;
      if (!answer.contains(key)) {
        out.insert(Dotted(path, key));
      } else {
        CollectDropped(value, answer[key], Dotted(path, key), out);
      }
    }
  } else if (written.is_array() && answer.is_array()) {
    for (size_t i = 0; i < written.size() && i < answer.size(); ++i) {
      CollectDropped(written[i], answer[i], path + "[]", out);
    }
  }
}

// Removes the field at `parts[i..]` from `v`; "x[]" descends into every element of x.
void Strip(nlohmann::json& v, const std::vector<std::string>& parts, size_t i) {
  if (i >= parts.size() || !v.is_object()) return;
  std::string key = parts[i];
  const bool each = key.size() > 2 && key.ends_with("[]");
  if (each) key.resize(key.size() - 2);
  if (!v.contains(key)) return;
  if (i + 1 == parts.size() && !each) {
    v.erase(key);
    return;
  }
  if (each) {
    if (!v[key].is_array()) return;
    for (auto& element : v[key]) {
      if (i + 1 == parts.size()) continue;  // "x[]" alone names no field
      Strip(element, parts, i + 1);
    }
  } else {
    Strip(v[key], parts, i + 1);
  }
}

// The pool without its tainted devices (see the header: taints the server drops).
WantedPool WithoutTaintedDevices(const WantedPool& pool) {
  WantedPool out = pool;
  for (auto& slice : out.slices) {
    if (!slice.contains("spec") || !slice["spec"].contains("devices")) continue;
    auto& devices = slice["spec"]["devices"];
    nlohmann::json kept = nlohmann::json::array();
    for (auto& d : devices) {
      if (!d.contains("taints") || d["taints"].empty()) kept.push_back(std::move(d));
    }
    devices = std::move(kept);
  }
  return out;
}

}  // namespace

std::string SlicePoolName(const nlohmann::json& slice) {
  const nlohmann::json* name = PoolField(slice, "name");
  return name && name->is_string() ? name->get<std::string>() : "";
}

bool CarriesAll(const nlohmann::json& have, const nlohmann::json& want) {
  if (want.is_object()) {
    if (!have.is_object()) return false;
    for (const auto& [key, value] : want.items()) {
      if (!have.contains(key)) {
        if (Empty(value)) continue;
        return false;
      }
      if (!CarriesAll(have[key], value)) return false;
    }
    for (const auto& key : kOptionalOwnedFields) {
      if (!want.contains(key) && have.contains(key) && !Empty(have[key])) return false;
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

FieldPaths DroppedFields(const nlohmann::json& written, const nlohmann::json& answer) {
  FieldPaths out;
  CollectDropped(written, answer, "", out);
  return out;
}

nlohmann::json WithoutFields(nlohmann::json spec, const FieldPaths& paths) {
  for (const std::string& path : paths) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
      parts.push_back(path.substr(start, dot - start));
      start = dot + 1;
    }
    parts.push_back(path.substr(start));
    Strip(spec, parts, 0);
  }
  return spec;
}

std::string GateDropping(const std::string& path) {
  // pkg/registry/resource/resourceslice/strategy.go: dropDisabledDRADeviceTaintsFields,
  // dropDisabledDRAConsumableCapacityFields.
  if (path.ends_with(".taints")) return "DRADeviceTaints";
  if (path.ends_with(".allowMultipleAllocations") || path.ends_with(".requestPolicy")) {
    return "DRAConsumableCapacity";
  }
  return "";
}

std::vector<SliceWrite> Reconcile(const std::map<std::string, PublishedSlice>& published,
                                  const std::vector<WantedPool>& wanted,
                                  const FieldPaths& dropped) {
  std::vector<SliceWrite> writes;
  std::set<std::string> wanted_pools;
  const bool taints_dropped = dropped.count("devices[].taints") != 0;
  for (const WantedPool& original : wanted) {
    const WantedPool pool = taints_dropped ? WithoutTaintedDevices(original) : original;
    wanted_pools.insert(pool.pool_name);
    std::vector<const PublishedSlice*> mine;
    int64_t generation = 0;
    for (const auto& [name, slice] : published) {
      if (SlicePoolName(slice.object) != pool.pool_name) continue;
      mine.push_back(&slice);
      generation = std::max(generation, GenerationOf(slice.object));
    }
    // Unchanged: every published slice is of the newest generation and each wanted slice
    // is carried by a distinct one of them.
    bool unchanged = mine.size() == pool.slices.size();
    std::vector<bool> used(mine.size(), false);
    for (const auto& want : pool.slices) {
      if (!unchanged) break;
      const nlohmann::json content = WithoutFields(Content(want), dropped);
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
    // A generation at the type's end (a hostile or broken answer) is not overflowed.
    const int64_t next =
        generation < std::numeric_limits<int64_t>::max() ? generation + 1 : generation;
    for (size_t i = 0; i < pool.slices.size(); ++i) {
      nlohmann::json object = pool.slices[i];
      object["spec"]["pool"]["generation"] = next;
      if (i < mine.size()) {
        const nlohmann::json* meta = Member(mine[i]->object, "metadata");
        object["metadata"] = meta && meta->is_object() ? *meta : nlohmann::json::object();
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
    if (wanted_pools.count(SlicePoolName(slice.object)) == 0) {
      writes.push_back({SliceWrite::Kind::kDelete, name, slice.resource_version, {}});
    }
  }
  return writes;
}

}  // namespace rdmadp::dra
