// Netlink datagrams from the kernel: replies to the NETLINK_RDMA netns-mode query, and
// RTNLGRP_LINK events. Any bytes: never a crash, an overflow or a read past the end.
#include <cstddef>
#include <cstdint>
#include <span>

#include "pkg/netlink/kernel_events.h"
#include "pkg/netlink/rdma_netns_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto mode = rdmadp::netlink::DecodeSysGetReply(std::span<const uint8_t>(data, size));
  if (!mode.ok()) (void)rdmadp::netlink::ErrnoOf(mode.status());
  (void)rdmadp::netlink::ParseLinkNames(std::span<const uint8_t>(data, size));
  return 0;
}
