// The DRA driver's answers to the kubelet's NodePrepareResources and
// NodeUnprepareResources: each claim is read from the API server and its allocation turned
// into the CDI devices of our view (PrepareClaim, prepare_claim.h).
//
// Threads: a DraServer worker's; one RestClient per worker, never shared.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

#include "pkg/dra/kubelet/dra_server.h"
#include "pkg/dra/prepare/claim_metadata.h"
#include "pkg/dra/prepare/prepare_claim.h"
#include "pkg/dra/status/claim_status.h"
#include "pkg/kube/rest_client.h"

namespace rdmadp::dra {

// `claims`: nullptr while there is no API client. `cancelled`: the server is being torn down
// (set before the clients are cancelled, so a GET that starts after the cancel sees it here).
// A claim whose GET cannot end before `deadline` (the kubelet's) is not fetched.
// `metadata`: where each prepared claim's device metadata and env go (claim_metadata.h).
// The claim the API server answers with must be the one the kubelet named (namespace, name
// and UID) and hold at most kMaxAllocationResults results; anything else is that claim's
// error in the answer, and nothing is written for it. `on_prepared` (optional) gets each
// claim answered with devices of ours, for its status (pkg/dra/status).
drav1::NodePrepareResourcesResponse Prepare(
    const drav1::NodePrepareResourcesRequest& req, const DraViewPtr& view, kube::RestClient* claims,
    std::chrono::system_clock::time_point deadline, const std::atomic<bool>& cancelled,
    const MetadataDirs& metadata, const std::function<void(PreparedClaim)>& on_prepared = nullptr);

// Removes each claim's device metadata, what was written for its UID only (the HCAs' own
// CDI specs stay: they are per HCA).
drav1::NodeUnprepareResourcesResponse Unprepare(const drav1::NodeUnprepareResourcesRequest& req,
                                                const MetadataDirs& metadata);

}  // namespace rdmadp::dra
