#include "pkg/config/link_types.h"

#include <array>
#include <utility>

namespace rdmadp::config {
namespace {

// Mirrors vishvananda/netlink's EncapType strings (used by the Go plugin), which follow
// iproute2's ll_types except 0 ("generic").
constexpr std::array<std::pair<int, std::string_view>, 48> kTypes = {{
    {0, "generic"},    {1, "ether"},     {2, "eether"},    {3, "ax25"},     {4, "pronet"},
    {5, "chaos"},      {6, "ieee802"},   {7, "arcnet"},    {8, "appletlk"}, {15, "dlci"},
    {19, "atm"},       {23, "metricom"}, {24, "ieee1394"}, {27, "eui64"},   {32, "infiniband"},
    {256, "slip"},     {257, "cslip"},   {258, "slip6"},   {259, "cslip6"}, {260, "rsrvd"},
    {264, "adapt"},    {270, "rose"},    {271, "x25"},     {272, "hwx25"},  {280, "can"},
    {512, "ppp"},      {513, "hdlc"},    {516, "lapb"},    {517, "ddcmp"},  {518, "rawhdlc"},
    {768, "ipip"},     {769, "tunnel6"}, {770, "frad"},    {771, "skip"},   {772, "loopback"},
    {773, "localtlk"}, {774, "fddi"},    {775, "bif"},     {776, "sit"},    {777, "ipddp"},
    {778, "gre"},      {779, "pimreg"},  {780, "hippi"},   {781, "ash"},    {782, "econet"},
    {783, "irda"},     {823, "ip6gre"},  {0xFFFE, "none"},
}};

}  // namespace

std::string_view LinkTypeName(int arphrd) {
  for (const auto& [number, name] : kTypes) {
    if (number == arphrd) return name;
  }
  return "";
}

bool IsKnownLinkType(std::string_view name) {
  for (const auto& entry : kTypes) {
    if (entry.second == name) return true;
  }
  return false;
}

}  // namespace rdmadp::config
