// Which of our devices a claim was allocated, from the ResourceClaim the API server returned
// and the view the DRA front end serves (pkg/dra/view): the pure core of Prepare
// (prepare.h does the I/O: the claim GET, the deadlines, the metadata files).
//
// Threads: pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/dra/view/dra_view.h"

namespace rdmadp::dra {

// One device the kubelet gets for a claim.
struct PreparedDevice {
  std::vector<std::string> request_names;
  std::string request_ref;               // as allocated: "<request>" or "<request>/<subrequest>"
  const DraDevice* published = nullptr;  // in the view PrepareClaim read (the caller holds it)
  std::string pool;
  std::string device;
  std::vector<std::string> cdi_ids;
  std::string share_id;  // KEP-5075 share, "" for a device allocated whole
};

// Prepares one claim from the ResourceClaim as the API server returned it: its UID must be
// the one the kubelet names (a re-created claim is not the kubelet's), it must be
// allocated, and each result for our driver must name a device we publish. Results for
// other drivers are theirs. Stateless: the same claim prepares the same way every time.
absl::StatusOr<std::vector<PreparedDevice>> PrepareClaim(const nlohmann::json& claim,
                                                         std::string_view uid, const DraView& view);

}  // namespace rdmadp::dra
