#include "pkg/netlink/link_up.h"

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/msg.h>

#include <optional>

#include "pkg/netlink/nl_socket.h"
#include "pkg/text/cat.h"

namespace rdmadp::netlink {
namespace {

// Plain rtnetlink messages through libnl-3's core (NlMsg): libnl-route would add a library
// (and ~0.4 MiB resident) for two messages.
absl::StatusOr<NlSocket> ConnectRoute(const std::string& ifname) {
  NlSocket sock(nl_socket_alloc());
  if (!sock) return absl::ResourceExhaustedError("cannot allocate a netlink socket");
  if (int rc = nl_connect(sock.get(), NETLINK_ROUTE); rc < 0) {
    return absl::UnavailableError(
        Cat("link ", ifname, ": cannot open rtnetlink: ", nl_geterror(rc)));
  }
  return sock;
}

// An RTM_* link message for `ifname`: ifinfomsg (flags under `change`) + IFLA_IFNAME.
NlMsg LinkMessage(int type, const std::string& ifname, unsigned flags, unsigned change) {
  NlMsg msg(nlmsg_alloc_simple(type, 0));
  if (!msg) return msg;
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_flags = flags;
  ifi.ifi_change = change;
  if (nlmsg_append(msg.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
      nla_put_string(msg.get(), IFLA_IFNAME, ifname.c_str()) < 0) {
    msg.reset();
  }
  return msg;
}

int CaptureFlags(nl_msg* msg, void* arg) {
  const nlmsghdr* hdr = nlmsg_hdr(msg);
  if (hdr->nlmsg_type == RTM_NEWLINK && nlmsg_datalen(hdr) >= static_cast<int>(sizeof(ifinfomsg))) {
    *static_cast<std::optional<unsigned>*>(arg) =
        static_cast<const ifinfomsg*>(nlmsg_data(hdr))->ifi_flags;
  }
  return NL_OK;
}

absl::StatusOr<unsigned> LinkFlags(nl_sock* sock, const std::string& ifname) {
  NlMsg request = LinkMessage(RTM_GETLINK, ifname, 0, 0);
  if (!request) return absl::ResourceExhaustedError("cannot allocate a netlink message");
  std::optional<unsigned> flags;
  nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, CaptureFlags, &flags);
  int rc = nl_send_auto(sock, request.get());
  if (rc >= 0) rc = nl_wait_for_ack(sock);  // the reply comes first, then the ack
  if (rc < 0 || !flags) {
    return absl::NotFoundError(Cat("link ", ifname, ": lookup failed: ",
                                   rc < 0 ? nl_geterror(rc) : "no answer from the kernel"));
  }
  return *flags;
}

}  // namespace

absl::Status SetLinkAdminState(const std::string& ifname, bool up) {
  auto sock = ConnectRoute(ifname);
  if (!sock.ok()) return sock.status();
  auto flags = LinkFlags(sock->get(), ifname);
  if (!flags.ok()) return flags.status();
  if (((*flags & IFF_UP) != 0) == up) return absl::OkStatus();
  NlMsg change = LinkMessage(RTM_NEWLINK, ifname, up ? IFF_UP : 0, IFF_UP);
  if (!change) return absl::ResourceExhaustedError("cannot allocate a netlink message");
  int rc = nl_send_auto(sock->get(), change.get());
  if (rc >= 0) rc = nl_wait_for_ack(sock->get());
  if (rc < 0) {
    return absl::PermissionDeniedError(
        Cat("link ", ifname, ": setting it ", up ? "up" : "down", " failed: ", nl_geterror(rc)));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> IsLinkUp(const std::string& ifname) {
  auto sock = ConnectRoute(ifname);
  if (!sock.ok()) return sock.status();
  auto flags = LinkFlags(sock->get(), ifname);
  if (!flags.ok()) return flags.status();
  return (*flags & IFF_UP) != 0;
}

}  // namespace rdmadp::netlink
