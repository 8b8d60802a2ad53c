// The addresses of this node's netdevs, as a ResourceClaim's networkData.ips carries them:
// "address/prefix" in the canonical form kube-apiserver checks (apimachinery's
// IsValidInterfaceAddress: the address as Go prints it, then its prefix length, the host bits
// kept). Read with getifaddrs(3) in the daemon's network namespace, the host's
// (hostNetwork: true in every manifest).
//
// Threads: any; ReadInterfaceAddresses makes its own netlink request each call.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "pkg/dra/status/claim_status.h"

namespace rdmadp::dra {

// "10.0.0.5/24".
std::string Ipv4Cidr(const std::array<uint8_t, 4>& address, int prefix);
// "fe80::b8ce:f6ff:fe0a:b0c/64": RFC 5952 as Go's net.IP.String prints it (the longest run
// of two or more zero groups compressed, the first of equal runs; lowercase, no leading
// zeros); "" for an IPv4-mapped address (Go prints it as IPv4, which is not what the
// interface holds).
std::string Ipv6Cidr(const std::array<uint8_t, 16>& address, int prefix);
// The prefix length of a netmask's bytes; -1 when its ones are not contiguous.
int PrefixLength(const uint8_t* mask, size_t bytes);

// Every IPv4 and IPv6 address of every netdev, by netdev name; empty when getifaddrs fails.
InterfaceAddresses ReadInterfaceAddresses();

}  // namespace rdmadp::dra
