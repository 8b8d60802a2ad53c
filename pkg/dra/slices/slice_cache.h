// This node's and driver's ResourceSlices as the API server has them, with the
// resourceVersion to watch from: what the publisher's watcher lists and watches, and what
// the answers to its own writes say. Only our own objects are kept: a list or an event
// carrying another node's or driver's slice is ignored (the field selector is the server's
// promise, not ours).
//
// Pure; not thread-safe: the publisher's lock covers it (its watcher and writer share it).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "nlohmann/json.hpp"
#include "pkg/dra/slices/slice_reconciler.h"

namespace rdmadp::dra {

class SliceCache {
 public:
  SliceCache(std::string node_name, std::string driver);

  // This node's and this driver's.
  bool Ours(const nlohmann::json& object) const;
  // A list's items and resourceVersion: the whole truth again.
  void Replace(const nlohmann::json& items, std::string resource_version);
  // One watch event (ADDED, MODIFIED, DELETED, BOOKMARK); every event's resourceVersion is
  // where the watch resumes. True when the slices changed (a reconcile is due).
  bool Apply(const std::string& type, const nlohmann::json& object);
  // The server's answer to our create or update of an object of ours.
  void Written(const nlohmann::json& answer);
  // A slice we deleted, or found gone (404).
  void Erase(const std::string& name) { slices_.erase(name); }

  const std::map<std::string, PublishedSlice>& slices() const { return slices_; }
  const std::string& resource_version() const { return resource_version_; }

 private:
  // An older resourceVersion never replaces a newer one (our own write's answer can come
  // before or after its watch event).
  void Keep(PublishedSlice slice);
  // Adds (or renews) the name's tombstone, evicting the oldest past the cap.
  void Tombstone(const std::string& name);

  const std::string node_name_;
  const std::string driver_;
  std::map<std::string, PublishedSlice> slices_;
  // Slices the watch saw deleted since the last list. The answer to our own write can come
  // after the watch's DELETED event for the same slice (the kubelet's wipe right after our
  // create); it must not bring the slice back. Names are generated, never reused, so a
  // deleted name stays deleted. At most kMaxTombstones (slice_cache.cpp) are kept; past that
  // the oldest goes first, age being the order of the DELETED events (a name deleted again
  // is new again). Not by name: the newest tombstone guards the answers most likely still on
  // their way, and name order would as soon drop it as any other.
  std::map<std::string, uint64_t> deleted_;         // name -> its DELETED event's number
  std::map<uint64_t, std::string> deleted_by_age_;  // the same tombstones, oldest first
  uint64_t deletions_ = 0;                          // the last number given
  std::string resource_version_;
};

}  // namespace rdmadp::dra
