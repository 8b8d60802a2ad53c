// RAII for libnl sockets.
#pragma once

#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <memory>

namespace rdmadp::netlink {

struct NlSockDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }  // also closes the fd
};
using NlSocket = std::unique_ptr<nl_sock, NlSockDeleter>;

}  // namespace rdmadp::netlink
