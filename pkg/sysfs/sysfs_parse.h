// Pure parsers for the contents of individual sysfs files. No I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pkg/sysfs/inventory.h"

namespace rdmadp::sysfs {

// "0x15b3\n" -> "15b3"; "" when malformed.
std::string ParsePciId(std::string_view contents);
// "0x020000\n" -> 0x020000.
std::optional<uint32_t> ParsePciClass(std::string_view contents);
// "1\n" -> 1; "-1\n" or malformed -> -1.
int ParseNumaNode(std::string_view contents);
// "4: ACTIVE\n" -> kActive.
PortState ParsePortState(std::string_view contents);
std::string_view PortStateName(PortState state);
// A GID file ("fe80:0000:...:0001\n"): true unless every digit is zero.
bool IsNonZeroGid(std::string_view contents);
// A GID file as the kernel prints it (%pI6: eight groups of four hex digits) holding an
// IPv4-mapped address, ::ffff:a.b.c.d ("0000:0000:0000:0000:0000:ffff:c0a8:0101"): the GID
// the kernel makes for an IPv4 address of a RoCE netdev.
bool IsIpv4MappedGid(std::string_view contents);
// A gid_attrs/types/<i> file: "RoCE v2" (drivers/infiniband/core/cache.c gid_type_str; the
// other is "IB/RoCE v1").
bool IsRoceV2GidType(std::string_view contents);
// A tc/<port>/traffic_class file (MLNX_OFED mlx5_ib traffic_class_show): "Global tclass=N"
// on its first line when the admin set a class for the port, followed by per-destination
// rules (not read); empty when none. N in 0..255, else nullopt.
std::optional<int> ParseGlobalTrafficClass(std::string_view contents);
// "32\n" -> 32.
std::optional<int> ParseArphrd(std::string_view contents);
// A net/<if>/address file (net/core/net-sysfs.c address_show: the bytes as lowercase hex
// pairs joined by ':', 6 for Ethernet, 20 for IPoIB): as shown, trimmed; "" when it is not
// that form (API validation caps a hardwareAddress at 128 bytes: at most 42 pairs here).
std::string ParseHardwareAddress(std::string_view contents);
// An RDMA port's link_layer file ("InfiniBand\n", "Ethernet\n": drivers/infiniband/core/
// sysfs.c link_layer_show) as a netdev's link type ("infiniband", "ether"); "" otherwise.
std::string LinkTypeOfLinkLayer(std::string_view contents);
// Why the RDMA device whose class/infiniband link is `target` is not served, when no
// network function's directory holds it: a virtual device (software RDMA, or a driver that
// registers without a parent, as upstream erdma does), a sub-function (`sfnum` as read, ""
// when unknown), a function that is not a network controller, or another parent. Also
// fills `where` ("virtual", "<pf>/<aux device>", "<pci address>", the parent's path).
std::string UnservedReason(std::string_view target, std::string_view sfnum, std::string& where);

// What a PCI device's uevent file says ("DRIVER=mlx5_core\nPCI_CLASS=20000\n
// PCI_ID=15B3:1017\n..."): one read instead of class, vendor, device and the driver link.
struct PciUevent {
  std::optional<uint32_t> class_code;
  std::string vendor;  // 15b3
  std::string device;  // 1017
  std::string driver;  // "" when unbound (no DRIVER= line)
};
// nullopt unless the class and the IDs are all present and well formed.
std::optional<PciUevent> ParsePciUevent(std::string_view contents);

enum class CharDevKind { kNone, kIssm, kUmad, kUverbs };
// Kind of a /dev/infiniband entry by name: "umad3" -> kUmad; "abi_version" -> kNone.
CharDevKind ClassifyCharDev(std::string_view name);
// Orders char devices issm < umad < uverbs, then by number (umad2 < umad10).
bool CharDevLess(std::string_view a, std::string_view b);

// A PCI function address as sysfs names it: domain (4 to 8 hex digits; VMD domains have 5),
// bus, device, function: "0000:3b:00.1".
bool IsPciAddress(std::string_view name);
// The PCI function a kernel devpath belongs to: its last segment that is a PCI address
// ("/devices/pci0000:00/0000:00:03.0/0000:3b:00.0/net/ib0" -> "0000:3b:00.0"); nullopt when
// none (virtual devices, or a path the kernel layout does not explain).
std::optional<std::string> PciAddressOfDevpath(std::string_view devpath);
// The PCIe root complex in the target of a bus/pci/devices/<address> link
// ("../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0" -> "pci0000:3a"); "" if none.
std::string PcieRootOfLink(std::string_view target);

}  // namespace rdmadp::sysfs
