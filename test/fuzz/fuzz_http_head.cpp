// Request heads for the metrics endpoint, which any client on the node network can reach.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pkg/metrics/http_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmadp::metrics;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const HeadParse parse = ParseHead(text);
  if (parse.state == HeadParse::State::kComplete) {
    if (parse.consumed == 0 || parse.consumed > text.size() || parse.consumed > kMaxHeadBytes) {
      __builtin_trap();
    }
    auto rejected = Screen(parse.request);
    (void)Serialize(rejected ? *rejected : HttpResponse{}, parse.request.method == "HEAD");
  } else if (parse.state == HeadParse::State::kError) {
    (void)Serialize(Reject(parse.status, parse.reason), false);
  } else if (text.size() >= kMaxHeadBytes) {
    __builtin_trap();  // an incomplete head must never need more than the limit
  }
  return 0;
}
