// `k8s-rdma-shared-dp pods`: one sample of per-container RDMA use on this node, run in the
// plugin's pod (kubectl exec) with images/components/usage's mounts, or on the node itself;
// and the same reads for the daemon's observer.
#pragma once

#include <string>

#include "pkg/cli/flags.h"
#include "pkg/observe/rdma_use_observer.h"

namespace rdmadp {

// Prints the table (or JSON) on stdout; exit status 1 when the kubelet's pod-resources API
// cannot be read (nothing then says who holds our devices), else 0.
int RunPods(const cli::Options& opts);

// The daemon's observer (--rdma-usage-interval), reading what `pods` reads.
observe::ObserverOptions UseObserverOptions(const cli::Options& opts, const std::string& node_name);

}  // namespace rdmadp
