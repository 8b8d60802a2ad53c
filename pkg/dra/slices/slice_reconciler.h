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
//  - after a wipe (nothing published) the pool is created again from generation 1;
//  - a field the API server dropped from what we wrote (kube-apiserver's
//    dropDisabledFields in pkg/registry/resource/resourceslice/strategy.go drops the
//    fields of a disabled feature gate; its decoder drops fields it does not know) is a
//    fact about this cluster, not a difference: `dropped` names such fields, and a pool
//    that differs from what we want only in them is unchanged. Without this, every answer
//    looked like a change and the publisher rewrote the pool hundreds of times a second;
//  - where the server drops taints (DRADeviceTaints off, before 1.36), a tainted device
//    (an HCA whose port is down) is left out of its slice instead: nothing else would keep
//    the scheduler off it. It comes back when it recovers.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace rdmadp::dra {

// (clang-tidy 14 flags the implicit members of any struct holding an nlohmann::json; they
// throw only what json itself would.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct PublishedSlice {
  std::string name;
  std::string resource_version;
  nlohmann::json object;
};

// spec.pool.name of a ResourceSlice object; "" when it has none.
std::string SlicePoolName(const nlohmann::json& slice);

// One pool's wanted slices, rendered with any generation (it is set here).
struct WantedPool {
  std::string pool_name;
  std::vector<nlohmann::json> slices;
  bool operator==(const WantedPool&) const = default;
};

struct SliceWrite {
  enum class Kind { kCreate, kUpdate, kDelete };
  Kind kind;
  std::string name;              // update, delete
  std::string resource_version;  // update, delete (precondition)
  nlohmann::json object;         // create, update
  bool operator==(const SliceWrite&) const = default;
};

// Fields of a slice's spec, as paths: keys joined by '.', every element of an array as
// "[]" ("devices[].taints", "devices[].capacity.shares.requestPolicy").
using FieldPaths = std::set<std::string>;

// `published`: by name, this node's and driver's slices only. `dropped`: fields the API
// server does not keep (see above).
std::vector<SliceWrite> Reconcile(const std::map<std::string, PublishedSlice>& published,
                                  const std::vector<WantedPool>& wanted,
                                  const FieldPaths& dropped = {});

// `have` carries every field of `want` with the same value (objects recursively; arrays
// element by element, same length). Extra fields in `have` are server defaults (a taint's
// timeAdded), except the fields we set only sometimes (kOptionalOwnedFields): a taint that
// `want` no longer has must come off. An empty value in `want` (the server omits empty
// maps and lists) is carried by its absence.
bool CarriesAll(const nlohmann::json& have, const nlohmann::json& want);
inline const std::set<std::string> kOptionalOwnedFields = {"taints"};

// The fields of `written` (a spec we sent) that `answer` (the spec the server stored) does
// not carry at all. Changed values are not drops; empty values are never drops.
FieldPaths DroppedFields(const nlohmann::json& written, const nlohmann::json& answer);
// `spec` without the fields at `paths`.
nlohmann::json WithoutFields(nlohmann::json spec, const FieldPaths& paths);
// The feature gate whose being off makes kube-apiserver drop `path` ("" if none we know).
std::string GateDropping(const std::string& path);

}  // namespace rdmadp::dra
