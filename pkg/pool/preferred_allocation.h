// GetPreferredAllocation for deviceModel "perHca" (per_hca.h): which IDs of those the
// kubelet offers a container should get. Pure: the pool's HCAs and the request in, IDs out.
//
// The order of preference:
//  1. every available ID of `must_include` (what the kubelet already chose or reuses);
//  2. distinct HCAs before a second share of one: another share of an HCA the container has
//     adds no port and no bandwidth;
//  3. HCAs of one NUMA node, then of one PCIe root complex, before spreading. The anchor is
//     the NUMA node, then the root in it, of most of the `must_include` HCAs (the kubelet
//     sends them in no particular order); without any, the NUMA node whose HCAs with a free
//     share can serve the request distinct with the fewest to spare (the closest fit, which
//     keeps larger nodes whole for larger requests), else the one with the most; then the
//     same rule over the PCIe roots of that node. Ties go to the lower node, an HCA of no
//     known node last, and to the lower root and PCI address.
// Its cost grows with the IDs offered and the HCAs, never with `size` beyond what is offered.
// Never an ID that is not in `available` or not advertised; fewer than `size` when
// `available` holds fewer. Within an HCA, the lowest share index first.
#pragma once

#include <string>
#include <vector>

#include "pkg/pool/per_hca.h"
#include "pkg/pool/pool_model.h"

namespace rdmadp::pool {

std::vector<std::string> PreferredAllocation(const std::vector<PoolHca>& hcas, const PerHcaIds& ids,
                                             const std::vector<std::string>& available,
                                             const std::vector<std::string>& must_include,
                                             int size);

}  // namespace rdmadp::pool
