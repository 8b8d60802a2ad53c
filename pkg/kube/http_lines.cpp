#include "pkg/kube/http_lines.h"

#include <algorithm>

namespace rdmadp::kube {

LineSplitter::Result LineSplitter::Feed(std::string_view chunk,
                                        const std::function<bool(std::string_view)>& on_line) {
  partial_.append(chunk);
  size_t start = 0;
  for (size_t nl; (nl = partial_.find('\n', std::max(start, scanned_))) != std::string::npos;
       start = nl + 1) {
    scanned_ = nl + 1;
    if (nl > start && !on_line(std::string_view(partial_).substr(start, nl - start))) {
      partial_.erase(0, nl + 1);
      scanned_ = 0;
      return Result::kStopped;
    }
  }
  partial_.erase(0, start);
  scanned_ = partial_.size();
  return partial_.size() > max_line_ ? Result::kTooLong : Result::kMore;
}

int ParseRetryAfter(std::string_view value, int cap) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
    value.remove_prefix(1);
  }
  if (value.empty() || value.front() < '0' || value.front() > '9') return 1;
  long long seconds = 0;
  for (char c : value) {
    if (c < '0' || c > '9') break;
    seconds = std::min<long long>(seconds * 10 + (c - '0'), cap);
  }
  return static_cast<int>(seconds);
}

}  // namespace rdmadp::kube
