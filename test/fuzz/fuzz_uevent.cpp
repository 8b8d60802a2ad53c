// Kernel uevent datagrams as the netlink socket delivers them.
#include <cstddef>
#include <cstdint>
#include <span>

#include "pkg/netlink/kernel_events.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)rdmadp::netlink::ParseUevent(
      std::span<const char>(reinterpret_cast<const char*>(data), size));
  return 0;
}
