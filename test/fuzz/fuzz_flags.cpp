// Command lines: NUL-separated arguments.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "pkg/cli/flags.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string_view> args;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty() && args.size() < 64) {
    const size_t nul = rest.find('\0');
    args.push_back(rest.substr(0, nul));
    if (nul == std::string_view::npos) break;
    rest.remove_prefix(nul + 1);
  }
  (void)rdmadp::cli::ParseFlags(args);
  return 0;
}
