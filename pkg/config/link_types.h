// ARPHRD link-layer numbers (sysfs class/net/<if>/type) and the names the Go plugin's netlink
// library gives them, which are what `linkTypes` selectors are written in. Pure.
#pragma once

#include <string_view>

namespace rdmadp::config {

// Name for an ARPHRD number, or "" when unknown.
std::string_view LinkTypeName(int arphrd);

// Whether `name` is a link type a device can have.
bool IsKnownLinkType(std::string_view name);

}  // namespace rdmadp::config
