#include "pkg/netlink/link_up.h"

#include <net/if.h>
#include <netlink/route/link.h>

#include "pkg/netlink/nl_socket.h"
#include "pkg/text/cat.h"

namespace rdmadp::netlink {
namespace {

absl::StatusOr<NlSocket> ConnectRoute(const std::string& ifname) {
  NlSocket sock(nl_socket_alloc());
  if (!sock) return absl::ResourceExhaustedError("cannot allocate a netlink socket");
  if (int rc = nl_connect(sock.get(), NETLINK_ROUTE); rc < 0) {
    return absl::UnavailableError(
        Cat("link ", ifname, ": cannot open rtnetlink: ", nl_geterror(rc)));
  }
  return sock;
}

absl::StatusOr<RtnlLink> GetLink(nl_sock* sock, const std::string& ifname) {
  rtnl_link* raw = nullptr;
  if (int rc = rtnl_link_get_kernel(sock, 0, ifname.c_str(), &raw); rc < 0) {
    return absl::NotFoundError(Cat("link ", ifname, ": lookup failed: ", nl_geterror(rc)));
  }
  return RtnlLink(raw);
}

}  // namespace

absl::Status SetLinkAdminState(const std::string& ifname, bool up) {
  auto sock = ConnectRoute(ifname);
  if (!sock.ok()) return sock.status();
  auto link = GetLink(sock->get(), ifname);
  if (!link.ok()) return link.status();
  if (((rtnl_link_get_flags(link->get()) & IFF_UP) != 0) == up) return absl::OkStatus();
  RtnlLink change(rtnl_link_alloc());
  if (up) {
    rtnl_link_set_flags(change.get(), IFF_UP);
  } else {
    rtnl_link_unset_flags(change.get(), IFF_UP);
  }
  if (int rc = rtnl_link_change(sock->get(), link->get(), change.get(), 0); rc < 0) {
    return absl::PermissionDeniedError(
        Cat("link ", ifname, ": setting it ", up ? "up" : "down", " failed: ", nl_geterror(rc)));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> IsLinkUp(const std::string& ifname) {
  auto sock = ConnectRoute(ifname);
  if (!sock.ok()) return sock.status();
  auto link = GetLink(sock->get(), ifname);
  if (!link.ok()) return link.status();
  return (rtnl_link_get_flags(link->get()) & IFF_UP) != 0;
}

}  // namespace rdmadp::netlink
