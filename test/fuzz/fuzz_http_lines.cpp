// The API client's stream parsers (docs/reliability.md, "Crash, hang, flood"): any bytes,
// cut into chunks anywhere, give exactly the lines a plain split gives, never a line past
// the limit, and a Retry-After that is always within [0, cap].
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/kube/http_lines.h"

using rdmadp::kube::LineSplitter;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t max_line = 1 + data[0] % 64;  // small, so inputs reach the limit
  const size_t chunk = 1 + data[1] % 16;
  const std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);

  // The reference: split the whole input at once.
  std::vector<std::string_view> want;
  size_t start = 0;
  for (size_t nl; (nl = input.find('\n', start)) != std::string_view::npos; start = nl + 1) {
    if (nl > start) want.push_back(input.substr(start, nl - start));
  }

  LineSplitter splitter(max_line);
  std::vector<std::string> got;
  LineSplitter::Result last = LineSplitter::Result::kMore;
  for (size_t at = 0; at < input.size() && last == LineSplitter::Result::kMore; at += chunk) {
    last = splitter.Feed(input.substr(at, chunk), [&](std::string_view line) {
      got.emplace_back(line);
      return true;
    });
    if (last == LineSplitter::Result::kMore && splitter.rest().size() > max_line) {
      std::abort();  // what is kept stays bounded
    }
  }
  if (last == LineSplitter::Result::kMore) {
    // Every line came through, in order, unchanged (no limit was passed mid-line).
    if (got.size() != want.size()) std::abort();
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) std::abort();
    }
  } else {
    // It stopped for a long line: what came before it is a prefix of the reference.
    if (got.size() > want.size()) std::abort();
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) std::abort();
    }
  }

  const int cap = 30;
  const int seconds = rdmadp::kube::ParseRetryAfter(input, cap);
  if (seconds < 0 || seconds > cap) std::abort();
  return 0;
}
