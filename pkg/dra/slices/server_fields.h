// What this cluster's API server keeps of a ResourceSlice. A disabled feature gate makes
// kube-apiserver drop its fields from what we write (dropDisabledFields); they are learnt
// from the answer to the capability probe (a dry-run create of ProbeSlice(), the truth for
// its fields, repeated about hourly) and from the answers to real writes, and are left out
// of what is written so that nothing is rewritten for ever. A field learnt from a write is
// written once more after kRecheckDropped, so an enabled gate is picked up without a
// restart; the probe's own fields are the probe's to refresh. It also keeps when the probe
// is due.
//
// Pure; not thread-safe: the publisher's lock covers it.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "pkg/dra/slices/slice_reconciler.h"

namespace rdmadp::dra {

inline constexpr std::chrono::minutes kRecheckDropped{60};

// What the server keeps, as the front end needs it to choose a device model.
struct ServerCapabilities {
  bool consumable_capacity = true;  // allowMultipleAllocations and requestPolicy kept
  bool device_taints = true;        // devices[].taints kept
  bool operator==(const ServerCapabilities&) const = default;
};

// The capability probe: one device with every gated field we may set.
nlohmann::json ProbeSlice(const std::string& driver, const std::string& node_name);

class ServerFields {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // The answer to a write dropped `dropped`. Returns the paths never reported before.
  std::vector<std::string> Learned(const FieldPaths& dropped, TimePoint now);
  // The probe's answer dropped `dropped`: an upgrade that enabled a gate takes its field
  // out, a downgrade puts it in. The probe is due again at `next`. Returns the paths never
  // reported before.
  std::vector<std::string> Probed(const FieldPaths& dropped, TimePoint now, TimePoint next);
  // The probe failed: it is tried again at `next`; what is known stays known.
  void ProbeFailed(TimePoint next) { next_probe_ = next; }
  // When the capability probe is due (the first: at once).
  TimePoint next_probe() const { return next_probe_; }
  // The fields to leave out of what is written at `now`.
  FieldPaths Active(TimePoint now);
  // Every field believed dropped now (stats).
  FieldPaths Believed() const;
  // The capabilities, when they differ from what the caller was last told (or it never
  // was); they count as told from now on.
  std::optional<ServerCapabilities> ToTell();
  // What the caller was last told (nullopt: nothing yet).
  const std::optional<ServerCapabilities>& told() const { return told_; }

 private:
  std::vector<std::string> Report(const FieldPaths& dropped);

  std::map<std::string, TimePoint> dropped_;  // with when it was learnt
  std::set<std::string> reported_;
  std::optional<ServerCapabilities> told_;
  TimePoint next_probe_{};
};

}  // namespace rdmadp::dra
