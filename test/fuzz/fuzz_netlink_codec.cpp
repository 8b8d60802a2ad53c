// Replies to the NETLINK_RDMA netns-mode query: any bytes, never a crash or an overflow.
#include <cstddef>
#include <cstdint>
#include <span>

#include "pkg/netlink/rdma_netns_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto mode = rdmadp::netlink::DecodeSysGetReply(std::span<const uint8_t>(data, size));
  if (!mode.ok()) (void)rdmadp::netlink::ErrnoOf(mode.status());
  return 0;
}
