// Encoding and decoding of the NETLINK_RDMA "system get" exchange (`rdma system show netns`).
// Pure: bytes in, bytes or values out; no sockets. Built with libnl's message helpers.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rdmadp::netlink {

enum class NetnsMode { kExclusive, kShared, kUnknown };

std::string_view NetnsModeName(NetnsMode mode);

// RDMA_NL_NLDEV << 10 | RDMA_NLDEV_CMD_SYS_GET (= 5126), flags REQUEST|ACK, no payload.
std::vector<uint8_t> EncodeSysGetRequest(uint32_t seq);

// Decodes the kernel's answer. An NLMSG_ERROR answer becomes a status whose message is
// "netlink error: <strerror>" with the errno available through ErrnoOf(); a reply without
// the NETNS_MODE attribute is an error; a mode other than 0/1 is kUnknown.
absl::StatusOr<NetnsMode> DecodeSysGetReply(std::span<const uint8_t> bytes);

// The errno carried by a status returned from DecodeSysGetReply (or any made by
// KernelErrorStatus), or 0.
int ErrnoOf(const absl::Status& status);
// The status for the kernel's answer `negative_errno` (-errno): "netlink error: <strerror>",
// its errno for ErrnoOf(). A value outside errno's range (a hostile or corrupt reply, even
// INT_MIN) is EPROTO.
absl::Status KernelErrorStatus(int negative_errno);

}  // namespace rdmadp::netlink
