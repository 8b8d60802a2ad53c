// Kernel event sources that can change what a scan finds, as non-blocking sockets for the
// event loop: rtnetlink link events (RTNLGRP_LINK) and kobject uevents (PCI, InfiniBand and
// net devices appearing, going, binding). Uevent parsing is pure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pkg/netlink/nl_socket.h"

namespace rdmadp::netlink {

struct Uevent {
  std::string action;     // add, remove, bind, unbind, change, move, online, offline
  std::string subsystem;  // pci, infiniband, infiniband_verbs, infiniband_mad, net, ...
  std::string devpath;
};

// Parses one kernel uevent datagram: "action@devpath\0KEY=VALUE\0...". Returns nullopt for
// anything else (udev's re-broadcasts start with "libudev").
std::optional<Uevent> ParseUevent(std::span<const char> datagram);

// Whether a uevent can change the RDMA inventory.
bool UeventTriggersRescan(const Uevent& event);

// The names of the links that rtnetlink messages in `bytes` (one datagram) add, remove or
// change; "" for a link message without a name. Other messages are skipped. Pure.
std::vector<std::string> ParseLinkNames(std::span<const uint8_t> bytes);

// Subscribed to RTNLGRP_LINK; readable whenever a link is added, removed or changes state.
class LinkEventSocket {
 public:
  static absl::StatusOr<LinkEventSocket> Open();
  int fd() const;
  // Reads every queued message; returns the names of the links they are about (a name
  // may repeat). CNI's veth churn arrives here too: the caller filters.
  std::vector<std::string> Drain();

 private:
  explicit LinkEventSocket(NlSocket sock) : sock_(std::move(sock)) {}
  NlSocket sock_;
};

// Bound to the kernel's uevent multicast group.
class UeventSocket {
 public:
  static absl::StatusOr<UeventSocket> Open();
  int fd() const;
  // Reads every queued datagram and returns the ones that parsed.
  std::vector<Uevent> Drain();

 private:
  explicit UeventSocket(NlSocket sock) : sock_(std::move(sock)) {}
  NlSocket sock_;
};

}  // namespace rdmadp::netlink
