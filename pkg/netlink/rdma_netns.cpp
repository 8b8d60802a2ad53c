#include "pkg/netlink/rdma_netns.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "pkg/netlink/nl_socket.h"
#include "pkg/text/cat.h"

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

namespace rdmadp::netlink {

NetnsQuery QueryRdmaNetnsMode() {
  NetnsQuery q;
  NlSocket sock(nl_socket_alloc());
  if (!sock) {
    q.detail = "cannot allocate a netlink socket";
    return q;
  }
  if (int rc = nl_connect(sock.get(), NETLINK_RDMA); rc < 0) {
    // libnl maps EPROTONOSUPPORT to NLE_PROTO_MISMATCH.
    if (rc == -NLE_PROTO_MISMATCH || rc == -NLE_NOACCESS || rc == -NLE_OPNOTSUPP) {
      q.outcome = NetnsQuery::Outcome::kNoRdmaNetlink;
    }
    q.detail = Cat("cannot open a NETLINK_RDMA socket: ", nl_geterror(rc));
    return q;
  }
  timeval timeout{.tv_sec = 2, .tv_usec = 0};
  ::setsockopt(nl_socket_get_fd(sock.get()), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  auto request = EncodeSysGetRequest(1);
  if (int rc = nl_sendto(sock.get(), request.data(), request.size()); rc < 0) {
    q.detail = Cat("sending the netns-mode query failed: ", nl_geterror(rc));
    return q;
  }
  sockaddr_nl peer{};
  unsigned char* buf = nullptr;
  const int n = nl_recv(sock.get(), &peer, &buf, nullptr);
  if (n <= 0) {
    q.detail =
        Cat("no answer to the netns-mode query: ", n == 0 ? "connection closed" : nl_geterror(n));
    return q;
  }
  auto decoded = DecodeSysGetReply({buf, static_cast<size_t>(n)});
  std::free(buf);
  if (decoded.ok()) {
    q.outcome = NetnsQuery::Outcome::kMode;
    q.mode = *decoded;
    return q;
  }
  if (ErrnoOf(decoded.status()) == EINVAL) q.outcome = NetnsQuery::Outcome::kOldKernel;
  q.detail = std::string(decoded.status().message());
  return q;
}

}  // namespace rdmadp::netlink
