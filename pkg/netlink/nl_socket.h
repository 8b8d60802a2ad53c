// RAII for libnl sockets and objects.
#pragma once

#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>

#include <memory>

namespace rdmadp::netlink {

struct NlSockDeleter {
  void operator()(nl_sock* s) const { nl_socket_free(s); }  // also closes the fd
};
using NlSocket = std::unique_ptr<nl_sock, NlSockDeleter>;

struct RtnlLinkDeleter {
  void operator()(rtnl_link* l) const { rtnl_link_put(l); }
};
using RtnlLink = std::unique_ptr<rtnl_link, RtnlLinkDeleter>;

}  // namespace rdmadp::netlink
