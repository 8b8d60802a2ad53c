// RAII for libnl sockets and messages.
#pragma once

#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <memory>

namespace rdmadp::netlink {

struct NlSockDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }  // also closes the fd
};
using NlSocket = std::unique_ptr<nl_sock, NlSockDeleter>;

struct NlMsgDeleter {
  void operator()(nl_msg* m) const { nlmsg_free(m); }
};
using NlMsg = std::unique_ptr<nl_msg, NlMsgDeleter>;

}  // namespace rdmadp::netlink
