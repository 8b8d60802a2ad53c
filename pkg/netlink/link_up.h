// Sets network links administratively up through rtnetlink (libnl-3), as the Go
// plugin does for every selected HCA's netdev at start. Blocking, short; event-loop thread.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rdmadp::netlink {

// Sets (or clears) IFF_UP on `ifname` in the caller's network namespace. The error names
// the link and the kernel's reason.
absl::Status SetLinkAdminState(const std::string& ifname, bool up);
inline absl::Status SetLinkUp(const std::string& ifname) { return SetLinkAdminState(ifname, true); }

// Whether `ifname` has IFF_UP set.
absl::StatusOr<bool> IsLinkUp(const std::string& ifname);

}  // namespace rdmadp::netlink
