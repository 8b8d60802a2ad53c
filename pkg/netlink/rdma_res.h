// The kernel's RDMA resource tracking over NETLINK_RDMA (rdma_res_codec.h has the
// protocol): the device list, and per device its queue pairs or contexts with their owners.
// Blocking and bounded: each dump ends within `timeout` and holds at most `max_entries`
// entries, or is an error saying which. For a sampler's own thread, never the event loop.
// A kernel without NETLINK_RDMA (ib_core not loaded) is kNoRdmaNetlink, not an error of the
// caller's: a node without RDMA has nothing to dump.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/netlink/rdma_res_codec.h"

namespace rdmadp::netlink {

// The status code of "this kernel has no NETLINK_RDMA" (absl::StatusCode::kUnavailable,
// message starting "no NETLINK_RDMA").
bool IsNoRdmaNetlink(const absl::Status& status);

absl::StatusOr<std::vector<RdmaDeviceEntry>> DumpRdmaDevices(std::chrono::milliseconds timeout,
                                                             size_t max_devices);
// `dump`: kQueuePairs or kContexts, of the device whose index is `dev_index`.
absl::StatusOr<std::vector<RdmaResEntry>> DumpRdmaResources(ResDump dump, uint32_t dev_index,
                                                            std::chrono::milliseconds timeout,
                                                            size_t max_entries);

// The receive half, on any datagram socket `fd` (tests hand it one end of a socketpair):
// feeds each datagram to `decoder` until the dump ends, `timeout` passes (what is already
// queued is still read) or an error; a datagram longer than kMaxResDatagram is an error.
absl::Status ReceiveResDump(int fd, ResDumpDecoder& decoder, std::chrono::milliseconds timeout);

}  // namespace rdmadp::netlink
