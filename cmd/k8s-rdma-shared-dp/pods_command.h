// `k8s-rdma-shared-dp pods`: one sample of per-container RDMA use on this node, run in the
// plugin's pod (kubectl exec) with images/components/usage's mounts, or on the node itself.
#pragma once

#include "pkg/cli/flags.h"

namespace rdmadp {

// Prints the table (or JSON) on stdout; exit status 1 when the kubelet's pod-resources API
// cannot be read (nothing then says who holds our devices), else 0.
int RunPods(const cli::Options& opts);

}  // namespace rdmadp
