// JSON escaping of untrusted text (sysfs names, IDs) for logs and `discover --output json`:
// the output must be one valid JSON string, whatever the input bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pkg/text/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string out =
      rdmadp::JsonString(std::string_view(reinterpret_cast<const char*>(data), size));
  if (out.size() < 2 || out.front() != '"' || out.back() != '"') __builtin_trap();
  for (size_t i = 1; i + 1 < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    if (c < 0x20) __builtin_trap();  // control characters must be escaped
    const size_t n = rdmadp::Utf8SequenceLength(std::string_view(out).substr(i));
    if (n == 0) __builtin_trap();  // invalid UTF-8 must have become U+FFFD
    if (n > 1) {
      i += n - 1;
      continue;
    }
    if (c == '\\') {
      ++i;  // the escaped character
    } else if (c == '"') {
      __builtin_trap();  // an unescaped quote ends the string early
    }
  }
  return 0;
}
