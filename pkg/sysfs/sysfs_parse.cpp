#include "pkg/sysfs/sysfs_parse.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

#include "absl/strings/ascii.h"

namespace rdmadp::sysfs {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

template <typename T>
std::optional<T> ParseNumber(std::string_view s, int base) {
  T value{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

std::optional<int> TrailingNumber(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  return ParseNumber<int>(name.substr(prefix.size()), 10);
}

}  // namespace

std::vector<std::string> NodeInventory::AllProblems() const {
  std::vector<std::string> all;
  for (const auto& [address, list] : problems) all.insert(all.end(), list.begin(), list.end());
  return all;
}

bool HasUsablePort(const PciFunction& fn) {
  bool any_port = false;
  for (const auto& dev : fn.rdma_devices) {
    for (const auto& port : dev.ports) {
      any_port = true;
      if (port.state == PortState::kActive) return true;
    }
  }
  return !any_port;
}

std::string ParsePciId(std::string_view contents) {
  std::string_view s = Trim(contents);
  if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
  if (s.size() != 4) return "";
  std::string out;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return "";
    out += absl::ascii_tolower(static_cast<unsigned char>(c));
  }
  return out;
}

std::optional<uint32_t> ParsePciClass(std::string_view contents) {
  std::string_view s = Trim(contents);
  if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
  return ParseNumber<uint32_t>(s, 16);
}

int ParseNumaNode(std::string_view contents) {
  auto v = ParseNumber<int>(Trim(contents), 10);
  return v && *v >= 0 ? *v : -1;
}

PortState ParsePortState(std::string_view contents) {
  // The kernel writes "<number>: <NAME>"; the number is authoritative.
  std::string_view s = Trim(contents);
  const auto colon = s.find(':');
  auto number = ParseNumber<int>(s.substr(0, colon), 10);
  if (!number) return PortState::kUnknown;
  switch (*number) {
    case 1:
      return PortState::kDown;
    case 2:
      return PortState::kInit;
    case 3:
      return PortState::kArmed;
    case 4:
      return PortState::kActive;
    case 5:
      return PortState::kActiveDefer;
    default:
      return PortState::kUnknown;
  }
}

std::string_view PortStateName(PortState state) {
  switch (state) {
    case PortState::kDown:
      return "DOWN";
    case PortState::kInit:
      return "INIT";
    case PortState::kArmed:
      return "ARMED";
    case PortState::kActive:
      return "ACTIVE";
    case PortState::kActiveDefer:
      return "ACTIVE_DEFER";
    case PortState::kUnknown:
      break;
  }
  return "UNKNOWN";
}

bool IsNonZeroGid(std::string_view contents) {
  return std::any_of(contents.begin(), contents.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0 && c != '0';
  });
}

bool IsIpv4MappedGid(std::string_view contents) {
  const std::string_view gid = Trim(contents);
  constexpr std::string_view kPrefix = "0000:0000:0000:0000:0000:ffff:";
  if (gid.size() != 39 || !gid.starts_with(kPrefix)) return false;
  const std::string_view v4 = gid.substr(kPrefix.size());  // "c0a8:0101"
  for (size_t i = 0; i < v4.size(); ++i) {
    if (i == 4 ? v4[i] != ':' : std::isxdigit(static_cast<unsigned char>(v4[i])) == 0) {
      return false;
    }
  }
  return true;
}

bool IsRoceV2GidType(std::string_view contents) { return Trim(contents) == "RoCE v2"; }

std::optional<int> ParseGlobalTrafficClass(std::string_view contents) {
  constexpr std::string_view kPrefix = "Global tclass=";
  const std::string_view line = contents.substr(0, contents.find('\n'));
  if (!line.starts_with(kPrefix)) return std::nullopt;
  auto value = ParseNumber<int>(Trim(line.substr(kPrefix.size())), 10);
  if (!value || *value < 0 || *value > 255) return std::nullopt;
  return value;
}

std::optional<int> ParseArphrd(std::string_view contents) {
  return ParseNumber<int>(Trim(contents), 10);
}

std::string ParseHardwareAddress(std::string_view contents) {
  constexpr size_t kMaxPairs = 42;  // 42 * 3 - 1 = 125 bytes
  const std::string_view mac = Trim(contents);
  if (mac.empty() || (mac.size() + 1) % 3 != 0 || (mac.size() + 1) / 3 > kMaxPairs) return "";
  for (size_t i = 0; i < mac.size(); ++i) {
    const char c = mac[i];
    const bool ok = i % 3 == 2 ? c == ':' : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    if (!ok) return "";
  }
  return std::string(mac);
}

std::optional<PciUevent> ParsePciUevent(std::string_view contents) {
  PciUevent ev;
  while (!contents.empty()) {
    const auto nl = contents.find('\n');
    const std::string_view line = contents.substr(0, nl);
    contents = nl == std::string_view::npos ? std::string_view() : contents.substr(nl + 1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, eq);
    const std::string_view value = line.substr(eq + 1);
    if (key == "DRIVER") {
      ev.driver = std::string(value);
    } else if (key == "PCI_CLASS") {
      ev.class_code = ParseNumber<uint32_t>(value, 16);
    } else if (key == "PCI_ID") {
      const auto colon = value.find(':');
      if (colon == std::string_view::npos) return std::nullopt;
      ev.vendor = ParsePciId(value.substr(0, colon));
      ev.device = ParsePciId(value.substr(colon + 1));
    }
  }
  if (!ev.class_code || ev.vendor.empty() || ev.device.empty()) return std::nullopt;
  return ev;
}

CharDevKind ClassifyCharDev(std::string_view name) {
  if (TrailingNumber(name, "uverbs")) return CharDevKind::kUverbs;
  if (TrailingNumber(name, "umad")) return CharDevKind::kUmad;
  if (TrailingNumber(name, "issm")) return CharDevKind::kIssm;
  return CharDevKind::kNone;
}

bool CharDevLess(std::string_view a, std::string_view b) {
  auto key = [](std::string_view n) {
    const CharDevKind kind = ClassifyCharDev(n);
    std::string_view prefix = kind == CharDevKind::kUverbs ? "uverbs"
                              : kind == CharDevKind::kUmad ? "umad"
                                                           : "issm";
    return std::pair(static_cast<int>(kind), TrailingNumber(n, prefix).value_or(-1));
  };
  auto ka = key(a);
  auto kb = key(b);
  return ka != kb ? ka < kb : a < b;
}

bool IsPciAddress(std::string_view name) {
  auto hex = [](char c) { return absl::ascii_isxdigit(static_cast<unsigned char>(c)); };
  const size_t colon = name.find(':');
  if (colon < 4 || colon > 8 || name.size() != colon + 8) return false;  // "dddd" ":bb:dd.f"
  for (size_t i = 0; i < name.size(); ++i) {
    const size_t k = i < colon ? 0 : i - colon;  // position within ":bb:dd.f"
    const bool ok = i < colon          ? hex(name[i])
                    : k == 0 || k == 3 ? name[i] == ':'
                    : k == 6           ? name[i] == '.'
                    : k == 7           ? name[i] >= '0' && name[i] <= '7'
                                       : hex(name[i]);
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> PciAddressOfDevpath(std::string_view devpath) {
  std::optional<std::string> last;
  size_t pos = 0;
  while (pos <= devpath.size()) {
    const size_t slash = std::min(devpath.find('/', pos), devpath.size());
    const std::string_view segment = devpath.substr(pos, slash - pos);
    if (IsPciAddress(segment)) last = std::string(segment);
    pos = slash + 1;
  }
  return last;
}

std::string PcieRootOfLink(std::string_view target) {
  constexpr std::string_view kDevices = "devices/";
  size_t at = target.find(kDevices);
  while (at != std::string_view::npos && at != 0 && target[at - 1] != '/') {
    at = target.find(kDevices, at + 1);  // "xdevices/" is not the directory
  }
  if (at == std::string_view::npos) return "";
  std::string_view rest = target.substr(at + kDevices.size());
  rest = rest.substr(0, rest.find('/'));
  return rest.starts_with("pci") ? std::string(rest) : "";
}

std::string LinkTypeOfLinkLayer(std::string_view contents) {
  while (!contents.empty() && (contents.back() == '\n' || contents.back() == ' ')) {
    contents.remove_suffix(1);
  }
  if (contents == "InfiniBand") return "infiniband";
  if (contents == "Ethernet") return "ether";
  return "";
}

std::string UnservedReason(std::string_view target, std::string_view sfnum, std::string& where) {
  std::vector<std::string_view> parts;
  for (size_t pos = 0; pos <= target.size();) {
    const size_t slash = std::min(target.find('/', pos), target.size());
    if (slash > pos) parts.push_back(target.substr(pos, slash - pos));
    pos = slash + 1;
  }
  // .../<parent>/infiniband/<ibdev>
  const size_t n = parts.size();
  const std::string_view parent = n >= 3 ? parts[n - 3] : std::string_view();
  const std::string_view grandparent = n >= 4 ? parts[n - 4] : std::string_view();
  if (std::find(parts.begin(), parts.end(), "virtual") != parts.end()) {
    where = "virtual";
    return "a virtual RDMA device (software RDMA such as rxe or siw, or a driver that "
           "registers it without a parent device, as upstream erdma does): no PCI function "
           "to select it by or to take its NUMA node from; not served";
  }
  if (parent.find(".sf.") != std::string_view::npos && IsPciAddress(grandparent)) {
    where = std::string(grandparent) + "/" + std::string(parent);
    return "a sub-function (" + std::string(parent) +
           (sfnum.empty() ? "" : ", sfnum " + std::string(sfnum)) + ") of " +
           std::string(grandparent) +
           ": sub-functions are not served; the PF's own RDMA device is, and SR-IOV VFs are "
           "PCI functions of their own";
  }
  if (IsPciAddress(parent)) {
    where = std::string(parent);
    return "on PCI function " + std::string(parent) +
           ", which is not a network controller (PCI class 02): not served";
  }
  where = std::string(parent);
  return "its parent device " + std::string(parent.empty() ? target : parent) +
         " is not a PCI function: not served";
}

}  // namespace rdmadp::sysfs
