#include "pkg/dra/status/interface_addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>

#include "pkg/text/cat.h"

namespace rdmadp::dra {

std::string Ipv4Cidr(const std::array<uint8_t, 4>& a, int prefix) {
  return Cat(int{a[0]}, ".", int{a[1]}, ".", int{a[2]}, ".", int{a[3]}, "/", prefix);
}

std::string Ipv6Cidr(const std::array<uint8_t, 16>& a, int prefix) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(a.data(), kMapped, sizeof(kMapped)) == 0) return "";
  uint16_t groups[8];
  for (size_t i = 0; i < 8; ++i) groups[i] = static_cast<uint16_t>(a[2 * i] << 8 | a[2 * i + 1]);
  // The longest run of zero groups, two or more; the first of equal runs.
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (groups[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && groups[j] == 0) ++j;
    if (j - i >= 2 && j - i > best_len) {
      best = i;
      best_len = j - i;
    }
    i = j;
  }
  std::string out;
  char hex[8];
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    std::snprintf(hex, sizeof(hex), "%x", groups[i]);
    out += hex;
  }
  return Cat(out, "/", prefix);
}

int PrefixLength(const uint8_t* mask, size_t bytes) {
  int ones = 0;
  bool zero_seen = false;
  for (size_t i = 0; i < bytes; ++i) {
    for (int bit = 7; bit >= 0; --bit) {
      const bool one = (mask[i] >> bit) & 1;
      if (one && zero_seen) return -1;
      if (one) ++ones;
      zero_seen = zero_seen || !one;
    }
  }
  return ones;
}

InterfaceAddresses ReadInterfaceAddresses() {
  InterfaceAddresses out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_netmask == nullptr || i->ifa_name == nullptr) continue;
    std::string cidr;
    if (i->ifa_addr->sa_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      const auto* mask = reinterpret_cast<const sockaddr_in*>(i->ifa_netmask);
      std::array<uint8_t, 4> a{};
      std::memcpy(a.data(), &in->sin_addr, 4);
      const int prefix = PrefixLength(reinterpret_cast<const uint8_t*>(&mask->sin_addr), 4);
      if (prefix >= 0) cidr = Ipv4Cidr(a, prefix);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      const auto* in = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      const auto* mask = reinterpret_cast<const sockaddr_in6*>(i->ifa_netmask);
      std::array<uint8_t, 16> a{};
      std::memcpy(a.data(), &in->sin6_addr, 16);
      const int prefix = PrefixLength(reinterpret_cast<const uint8_t*>(&mask->sin6_addr), 16);
      if (prefix >= 0) cidr = Ipv6Cidr(a, prefix);
    }
    if (!cidr.empty()) out[i->ifa_name].push_back(std::move(cidr));
  }
  freeifaddrs(list);
  return out;
}

}  // namespace rdmadp::dra
