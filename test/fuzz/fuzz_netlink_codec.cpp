// Netlink datagrams from the kernel: replies to the NETLINK_RDMA netns-mode query and
// resource dumps, and RTNLGRP_LINK events. Any bytes: never a crash, an overflow or a read past the
// end.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "pkg/netlink/kernel_events.h"
#include "pkg/netlink/rdma_netns_codec.h"
#include "pkg/netlink/rdma_res_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto mode = rdmadp::netlink::DecodeSysGetReply(std::span<const uint8_t>(data, size));
  if (!mode.ok()) (void)rdmadp::netlink::ErrnoOf(mode.status());
  (void)rdmadp::netlink::ParseLinkNames(std::span<const uint8_t>(data, size));
  // The dump decoders, expecting the datagram's own sequence number, so the attributes are
  // reached; a tight cap, so the cap is reached too.
  uint32_t seq = 0;
  if (size >= 12) std::memcpy(&seq, data + 8, sizeof(seq));
  using rdmadp::netlink::ResDump;
  for (ResDump dump : {ResDump::kDevices, ResDump::kQueuePairs, ResDump::kContexts}) {
    rdmadp::netlink::ResDumpDecoder decoder(dump, seq, 4);
    (void)decoder.Feed(std::span<const uint8_t>(data, size));
  }
  return 0;
}
