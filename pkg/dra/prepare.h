// The DRA driver's answers to the kubelet's NodePrepareResources and
// NodeUnprepareResources: each claim is read from the API server and its allocation turned
// into the CDI devices of our view (PrepareClaim, dra_view.h).
//
// Threads: a DraServer worker's; one RestClient per worker, never shared.
#pragma once

#include <atomic>
#include <chrono>

#include "pkg/dra/dra_server.h"
#include "pkg/dra/dra_view.h"
#include "pkg/kube/rest_client.h"

namespace rdmadp::dra {

// `claims`: nullptr while there is no API client. `cancelled`: the server is being torn down
// (set before the clients are cancelled, so a GET that starts after the cancel sees it here).
// A claim whose GET cannot end before `deadline` (the kubelet's) is not fetched.
drav1::NodePrepareResourcesResponse Prepare(const drav1::NodePrepareResourcesRequest& req,
                                            const DraViewPtr& view, kube::RestClient* claims,
                                            std::chrono::system_clock::time_point deadline,
                                            const std::atomic<bool>& cancelled);

// Nothing to undo: Prepare leaves no state behind (the CDI specs are per HCA and stay).
drav1::NodeUnprepareResourcesResponse Unprepare(const drav1::NodeUnprepareResourcesRequest& req);

}  // namespace rdmadp::dra
