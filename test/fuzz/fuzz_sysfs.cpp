// The parsers of sysfs file contents (a hostile or corrupt tree must never crash a scan).
// The first byte picks the parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pkg/sysfs/sysfs_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  using namespace rdmadp::sysfs;
  switch (data[0] % 8) {
    case 0:
      (void)ParsePciId(text);
      break;
    case 1:
      (void)ParsePciClass(text);
      break;
    case 2:
      (void)ParseNumaNode(text);
      break;
    case 3:
      (void)ParsePortState(text);
      break;
    case 4:
      (void)ParseArphrd(text);
      break;
    case 5:
      (void)ParsePciUevent(text);
      break;
    case 6:
      (void)ClassifyCharDev(text);
      break;
    default: {
      const size_t half = text.size() / 2;
      const bool ab = CharDevLess(text.substr(0, half), text.substr(half));
      const bool ba = CharDevLess(text.substr(half), text.substr(0, half));
      if (ab && ba) __builtin_trap();  // a strict weak order is never both ways
    }
  }
  return 0;
}
