// `k8s-rdma-shared-dp remove-stale-resources`: removes from this node's status the extended
// resources of the config's DRA entries that a device plugin left behind (at 0, for good,
// once it has been gone 5 minutes), so that kube-scheduler 1.34 serves them through DRA
// (pkg/dra/move/stale_node_resource.h; docs/migrating.md). Run in the plugin's pod on the
// node (kubectl exec) with images/components/dra-remove-stale-resources' RBAC (patch
// nodes/status), or anywhere with --node-name and --kube-* flags.
#pragma once

#include "pkg/cli/flags.h"

namespace rdmadp {

// One line per DRA entry's resource on stdout (what it is, what was done); exit status 0
// when every one is absent or was removed (or would be, with --dry-run), 1 when one is
// still served, draining, or the API server refused, 2 for a config or flag problem.
int RunRemoveStaleResources(const cli::Options& opts);

}  // namespace rdmadp
