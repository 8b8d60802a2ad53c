#include "pkg/dra/slices/slice_cache.h"

#include <charconv>
#include <utility>

#include "pkg/kube/json_read.h"

namespace rdmadp::dra {
namespace {

using kube::Obj;
using kube::Str;

constexpr size_t kMaxTombstones = 1024;  // a wipe of 1024 slices between two answers

// resourceVersions are opaque; the API server's are integers.
bool Older(const std::string& a, const std::string& b) {
  uint64_t x = 0;
  uint64_t y = 0;
  const auto [pa, ea] = std::from_chars(a.data(), a.data() + a.size(), x);
  const auto [pb, eb] = std::from_chars(b.data(), b.data() + b.size(), y);
  if (ea != std::errc() || eb != std::errc()) return false;
  return x < y;
}

PublishedSlice FromObject(const nlohmann::json& object) {
  const auto& meta = Obj(object, "metadata");
  return {Str(meta, "name"), Str(meta, "resourceVersion"), object};
}

}  // namespace

SliceCache::SliceCache(std::string node_name, std::string driver)
    : node_name_(std::move(node_name)), driver_(std::move(driver)) {}

bool SliceCache::Ours(const nlohmann::json& object) const {
  const auto& spec = Obj(object, "spec");
  return Str(spec, "nodeName") == node_name_ && Str(spec, "driver") == driver_;
}

void SliceCache::Replace(const nlohmann::json& items, std::string resource_version) {
  slices_.clear();
  deleted_.clear();
  deleted_by_age_.clear();
  for (const auto& item : items) {
    if (!Ours(item)) continue;  // another node's or driver's: never ours to delete
    PublishedSlice s = FromObject(item);
    if (s.name.empty()) continue;
    slices_[s.name] = std::move(s);
  }
  resource_version_ = std::move(resource_version);
}

bool SliceCache::Apply(const std::string& type, const nlohmann::json& object) {
  const std::string rv = Str(Obj(object, "metadata"), "resourceVersion");
  if (!rv.empty()) resource_version_ = rv;
  if (type == "BOOKMARK" || !Ours(object)) return false;
  PublishedSlice s = FromObject(object);
  if (s.name.empty()) return false;
  if (type == "DELETED") {
    slices_.erase(s.name);
    Tombstone(s.name);
  } else {
    Keep(std::move(s));
  }
  return true;
}

void SliceCache::Written(const nlohmann::json& answer) {
  PublishedSlice s = FromObject(answer);
  if (s.name.empty() || !Ours(answer)) return;
  if (deleted_.count(s.name) != 0) return;  // the watch saw it go meanwhile
  Keep(std::move(s));
}

void SliceCache::Tombstone(const std::string& name) {
  auto [it, added] = deleted_.try_emplace(name, 0);
  if (!added) {
    deleted_by_age_.erase(it->second);  // deleted again: its age starts anew
  } else if (deleted_.size() > kMaxTombstones) {
    // deleted_by_age_ lacks the new name yet, so its first is the oldest other tombstone.
    deleted_.erase(deleted_by_age_.begin()->second);
    deleted_by_age_.erase(deleted_by_age_.begin());
  }
  it->second = ++deletions_;
  deleted_by_age_.emplace(it->second, name);
}

void SliceCache::Keep(PublishedSlice slice) {
  auto it = slices_.find(slice.name);
  if (it != slices_.end() && Older(slice.resource_version, it->second.resource_version)) return;
  slices_[slice.name] = std::move(slice);
}

}  // namespace rdmadp::dra
