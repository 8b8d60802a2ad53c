// The cgroup v2 rdma controller's files, `rdma.current` and `rdma.max` (Linux
// kernel/cgroup/rdma.c, rdmacg_resource_read): one line per registered RDMA device, in
// registration order, charged or not:
//
//   mlx5_0 hca_handle=1 hca_object=23 \n
//
// the device name (at most 63 bytes: IB_DEVICE_NAME_MAX), then `key=value` per resource,
// each followed by a space, "max" for S32_MAX. `hca_handle` counts the cgroup's open device
// contexts (one per ibv_open_device), `hca_object` every verbs object they made (PD, MR,
// CQ, QP, SRQ, AH, flows, and mlx5 DevX objects, which the per-object tracking over
// netlink does not see). Charges are hierarchical: a cgroup's figure includes its
// descendants'. The root cgroup has no such file. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace rdmadp::usage {

struct RdmaCgroupCounts {
  int64_t hca_handle = 0;
  int64_t hca_object = 0;
  bool operator==(const RdmaCgroupCounts&) const = default;
};

// What one file says, by device name. "max" reads as kRdmaCgroupMax; a key the kernel may
// add later is skipped; a line without a device name, a pair without '=', a value that is
// not a number from 0 to S32_MAX, a name over 63 bytes, a device twice, or more than
// kMaxRdmaCgroupDevices lines is an error naming the line (a file is never half-read).
inline constexpr int64_t kRdmaCgroupMax = 2147483647;
inline constexpr size_t kMaxRdmaCgroupDevices = 1024;
absl::StatusOr<std::map<std::string, RdmaCgroupCounts>> ParseRdmaCgroupFile(std::string_view text);

}  // namespace rdmadp::usage
