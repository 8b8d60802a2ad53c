// The ResourceSlice publisher's decisions, pure: what this node's driver has published (as
// the API server last told us) and what it should publish, in; the writes that make them
// agree, out. No I/O; the publisher (slice_publisher.h) carries the writes out.
//
// Rules:
//  - a pool whose content is unchanged is not written at all (0 API writes per idle hour);
//    content is compared on the fields we set, so server-side defaults never look like a
//    change;
//  - a changed pool gets generation = the highest published + 1, written by updating the
//    existing slices in place (their names kept), creating what is missing and deleting
//    the surplus, so the scheduler sees one consistent generation;
//  - slices of pools we no longer publish, or of an older generation, are deleted;
//  - after a wipe (nothing published) the pool is created again from generation 1.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rdmadp::dra {

struct PublishedSlice {
  std::string name;
  std::string resource_version;
  nlohmann::json object;
};

// One pool's wanted slices, rendered with any generation (it is set here).
struct WantedPool {
  std::string pool_name;
  std::vector<nlohmann::json> slices;
};

struct SliceWrite {
  enum class Kind { kCreate, kUpdate, kDelete };
  Kind kind;
  std::string name;              // update, delete
  std::string resource_version;  // update, delete (precondition)
  nlohmann::json object;         // create, update
  bool operator==(const SliceWrite&) const = default;
};

// `published`: by name, this node's and driver's slices only.
std::vector<SliceWrite> Reconcile(const std::map<std::string, PublishedSlice>& published,
                                  const std::vector<WantedPool>& wanted);

// `have` carries every field of `want` with the same value (objects recursively; arrays
// element by element, same length). Extra fields in `have` are server defaults.
bool CarriesAll(const nlohmann::json& have, const nlohmann::json& want);

}  // namespace rdmadp::dra
