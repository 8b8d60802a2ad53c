// Config text (JSON or YAML, the same parser) through parse and validate. Every problem
// must come back as a status, never a crash, a hang or unbounded memory (alias bombs).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pkg/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto loaded =
      rdmadp::config::ParseConfig(std::string_view(reinterpret_cast<const char*>(data), size));
  if (loaded.ok()) {
    for (const auto& skipped : loaded->skipped) {
      for (const auto& problem : skipped.problems) (void)rdmadp::config::EntryOf(problem);
    }
  }
  return 0;
}
