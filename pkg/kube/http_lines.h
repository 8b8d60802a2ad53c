// Pure parsers for what an API server (or a proxy in front of it) sends: a watch stream cut
// into lines at arbitrary chunk boundaries, and a Retry-After header. No I/O; any bytes are
// safe (fuzzed: test/fuzz/fuzz_http_lines.cpp). Not thread-safe: one splitter per stream.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace rdmadp::kube {

// Cuts a byte stream into '\n'-terminated lines, handing each non-empty one to `on_line`.
// Only new bytes are searched, so a line arriving in many chunks costs linear time (the old
// search restarted at 0 for every chunk: docs/reliability.md, "Crash, hang, flood"); a line
// longer than `max_line` ends the stream instead of growing without bound.
class LineSplitter {
 public:
  enum class Result { kMore, kStopped, kTooLong };
  explicit LineSplitter(size_t max_line) : max_line_(max_line) {}
  // kStopped: on_line returned false. kTooLong: an unfinished line passed max_line.
  Result Feed(std::string_view chunk, const std::function<bool(std::string_view)>& on_line);
  // The unfinished line so far (a stream's last line may lack its '\n').
  const std::string& rest() const { return partial_; }

 private:
  const size_t max_line_;
  std::string partial_;
  size_t scanned_ = 0;  // bytes of partial_ already searched for '\n'
};

// Seconds from a Retry-After value (" 5\r\n"): digits are read and capped at `cap`, an
// HTTP date or anything else means 1 s (back off a little, not not at all).
int ParseRetryAfter(std::string_view value, int cap);

}  // namespace rdmadp::kube
