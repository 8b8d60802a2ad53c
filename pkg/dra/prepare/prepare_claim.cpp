#include "pkg/dra/prepare/prepare_claim.h"

#include "pkg/kube/json_read.h"
#include "pkg/text/cat.h"

namespace rdmadp::dra {

absl::StatusOr<std::vector<PreparedDevice>> PrepareClaim(const nlohmann::json& claim,
                                                         std::string_view uid,
                                                         const DraView& view) {
  using kube::Arr;
  using kube::Obj;
  using kube::Str;
  // The claim is the API server's answer: read without trusting its types (json_read.h).
  const auto& meta = Obj(claim, "metadata");
  const std::string name = Cat(Str(meta, "namespace"), "/", Str(meta, "name"));
  if (!claim.is_object()) {
    return absl::FailedPreconditionError(
        Cat("the API server's answer for ResourceClaim ", uid, " is not a JSON object"));
  }
  if (Str(meta, "uid") != uid) {
    const std::string got = Str(meta, "uid");
    return absl::FailedPreconditionError(
        Cat("ResourceClaim ", name, " has UID ", got.empty() ? "(none)" : got,
            ", the kubelet asked for ", uid, " (the claim was deleted and re-created)"));
  }
  const nlohmann::json* results =
      Arr(Obj(Obj(Obj(claim, "status"), "allocation"), "devices"), "results");
  if (results == nullptr) {
    return absl::FailedPreconditionError(Cat("ResourceClaim ", name, " is not allocated"));
  }
  std::vector<PreparedDevice> out;
  for (const auto& r : *results) {
    if (Str(r, "driver") != view.driver) continue;
    const std::string pool_name = Str(r, "pool");
    const std::string device = Str(r, "device");
    const DraDevice* found = FindPreparable(view, pool_name, device);
    if (found == nullptr) {
      return absl::NotFoundError(Cat("ResourceClaim ", name, ": device ", pool_name, "/", device,
                                     " is not published by this node (removed since it was "
                                     "allocated?)"));
    }
    const std::string request_ref = Str(r, "request");
    std::string request = request_ref;
    // A subrequest ("<request>/<subrequest>", prioritized lists): containers name the request.
    if (const auto slash = request.find('/'); slash != std::string::npos) request.resize(slash);
    out.push_back(
        {{request}, request_ref, found, pool_name, device, found->cdi_ids, Str(r, "shareID")});
  }
  return out;
}

}  // namespace rdmadp::dra
