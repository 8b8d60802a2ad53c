#include "pkg/netlink/kernel_events.h"

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "absl/status/status.h"
#include "pkg/text/cat.h"

namespace rdmadp::netlink {
namespace {

absl::StatusOr<NlSocket> Subscribe(int protocol, int group, const char* what) {
  NlSocket sock(nl_socket_alloc());
  if (!sock) return absl::ResourceExhaustedError("cannot allocate a netlink socket");
  nl_socket_disable_seq_check(sock.get());
  nl_socket_disable_auto_ack(sock.get());
  // Join before connecting so no event between connect and join is lost.
  nl_join_groups(sock.get(), 1 << (group - 1));
  if (int rc = nl_connect(sock.get(), protocol); rc < 0) {
    return absl::UnavailableError(Cat("cannot subscribe to ", what, ": ", nl_geterror(rc)));
  }
  nl_socket_set_nonblocking(sock.get());
  // A burst (driver reload on a big node) must not overflow into ENOBUFS.
  nl_socket_set_buffer_size(sock.get(), 1 << 20, 0);
  return sock;
}

}  // namespace

std::optional<Uevent> ParseUevent(std::span<const char> datagram) {
  std::string_view all(datagram.data(), datagram.size());
  const auto first_end = all.find('\0');
  const std::string_view header = all.substr(0, first_end);
  if (header.find('@') == std::string_view::npos || header.starts_with("libudev")) {
    return std::nullopt;
  }
  Uevent ev;
  size_t pos = first_end == std::string_view::npos ? all.size() : first_end + 1;
  while (pos < all.size()) {
    auto end = all.find('\0', pos);
    if (end == std::string_view::npos) end = all.size();
    const std::string_view kv = all.substr(pos, end - pos);
    pos = end + 1;
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = kv.substr(0, eq);
    const std::string_view value = kv.substr(eq + 1);
    if (key == "ACTION") ev.action = value;
    if (key == "SUBSYSTEM") ev.subsystem = value;
    if (key == "DEVPATH") ev.devpath = value;
  }
  if (ev.action.empty() || ev.subsystem.empty()) return std::nullopt;
  return ev;
}

bool UeventTriggersRescan(const Uevent& e) {
  const bool rdma = e.subsystem == "infiniband" || e.subsystem == "infiniband_verbs" ||
                    e.subsystem == "infiniband_mad";
  const bool device = rdma || e.subsystem == "pci" || e.subsystem == "net";
  if (!device) return false;
  // CNI's veth pairs, bridges, tunnels: no PCI function behind them, nothing to rescan for.
  if (e.devpath.rfind("/devices/virtual/", 0) == 0) return false;
  if (e.action == "add" || e.action == "remove" || e.action == "bind" || e.action == "unbind" ||
      e.action == "move") {
    return true;
  }
  return rdma && e.action == "change";
}

absl::StatusOr<LinkEventSocket> LinkEventSocket::Open() {
  auto sock = Subscribe(NETLINK_ROUTE, RTNLGRP_LINK, "link events (RTNLGRP_LINK)");
  if (!sock.ok()) return sock.status();
  return LinkEventSocket(std::move(*sock));
}

int LinkEventSocket::fd() const { return nl_socket_get_fd(sock_.get()); }

std::vector<std::string> ParseLinkNames(std::span<const uint8_t> bytes) {
  std::vector<std::string> names;
  const auto* p = bytes.data();
  size_t left = bytes.size();
  while (left >= sizeof(nlmsghdr)) {
    nlmsghdr hdr;
    std::memcpy(&hdr, p, sizeof(hdr));  // no alignment assumptions on foreign bytes
    if (hdr.nlmsg_len < sizeof(nlmsghdr) || hdr.nlmsg_len > left) break;
    if ((hdr.nlmsg_type == RTM_NEWLINK || hdr.nlmsg_type == RTM_DELLINK) &&
        hdr.nlmsg_len >= NLMSG_LENGTH(sizeof(ifinfomsg))) {
      std::string name;
      size_t offset = NLMSG_LENGTH(sizeof(ifinfomsg));
      offset = NLMSG_ALIGN(offset);
      while (offset + sizeof(nlattr) <= hdr.nlmsg_len) {
        nlattr attr;
        std::memcpy(&attr, p + offset, sizeof(attr));
        if (attr.nla_len < sizeof(nlattr) || offset + attr.nla_len > hdr.nlmsg_len) break;
        if ((attr.nla_type & NLA_TYPE_MASK) == IFLA_IFNAME) {
          const char* value = reinterpret_cast<const char*>(p + offset + NLA_HDRLEN);
          const size_t value_len = attr.nla_len - NLA_HDRLEN;
          name.assign(value, strnlen(value, value_len));
          break;
        }
        offset += NLA_ALIGN(attr.nla_len);
      }
      names.push_back(std::move(name));
    }
    const size_t step = NLMSG_ALIGN(hdr.nlmsg_len);
    if (step >= left) break;
    p += step;
    left -= step;
  }
  return names;
}

std::vector<std::string> LinkEventSocket::Drain() {
  std::vector<std::string> names;
  while (true) {
    sockaddr_nl peer{};
    unsigned char* buf = nullptr;
    const int n = nl_recv(sock_.get(), &peer, &buf, nullptr);
    if (n <= 0) break;  // -NLE_AGAIN once drained
    for (auto& name : ParseLinkNames(std::span<const uint8_t>(buf, static_cast<size_t>(n)))) {
      names.push_back(std::move(name));
    }
    std::free(buf);
  }
  return names;
}

absl::StatusOr<UeventSocket> UeventSocket::Open() {
  auto sock = Subscribe(NETLINK_KOBJECT_UEVENT, 1, "kernel uevents");
  if (!sock.ok()) return sock.status();
  return UeventSocket(std::move(*sock));
}

int UeventSocket::fd() const { return nl_socket_get_fd(sock_.get()); }

std::vector<Uevent> UeventSocket::Drain() {
  std::vector<Uevent> out;
  while (true) {
    sockaddr_nl peer{};
    unsigned char* buf = nullptr;
    const int n = nl_recv(sock_.get(), &peer, &buf, nullptr);
    if (n <= 0) break;
    // Only the kernel (port id 0) sends real uevents.
    if (peer.nl_pid == 0) {
      if (auto ev = ParseUevent({reinterpret_cast<const char*>(buf), static_cast<size_t>(n)})) {
        out.push_back(std::move(*ev));
      }
    }
    std::free(buf);
  }
  return out;
}

}  // namespace rdmadp::netlink
