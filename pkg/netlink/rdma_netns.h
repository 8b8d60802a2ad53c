// Asks the kernel for the RDMA subsystem's network-namespace mode over NETLINK_RDMA.
// Blocking with a short receive timeout; called once at start (and on reload).
#pragma once

#include <string>

#include "pkg/netlink/rdma_netns_codec.h"

namespace rdmadp::netlink {

struct NetnsQuery {
  enum class Outcome {
    kMode,           // `mode` is valid
    kNoRdmaNetlink,  // kernel without NETLINK_RDMA (ib_core not loaded, or no RDMA at all)
    kOldKernel,      // kernel answers EINVAL: RDMA netlink without SYS_GET (< 5.2)
    kError,          // anything else; `detail` says what
  };
  Outcome outcome = Outcome::kError;
  NetnsMode mode = NetnsMode::kUnknown;
  std::string detail;
};

NetnsQuery QueryRdmaNetnsMode();

}  // namespace rdmadp::netlink
