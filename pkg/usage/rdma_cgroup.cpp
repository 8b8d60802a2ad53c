#include "pkg/usage/rdma_cgroup.h"

#include <charconv>
#include <vector>

#include "pkg/text/cat.h"

namespace rdmadp::usage {
namespace {

constexpr size_t kMaxDeviceName = 63;  // IB_DEVICE_NAME_MAX - 1

// The line's whitespace-separated words: the kernel ends each pair with a space; the
// documentation's examples do not; both read the same.
std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

bool ParseValue(std::string_view text, int64_t& out) {
  if (text == "max") {
    out = kRdmaCgroupMax;
    return true;
  }
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && out >= 0 && out <= kRdmaCgroupMax;
}

}  // namespace

absl::StatusOr<std::map<std::string, RdmaCgroupCounts>> ParseRdmaCgroupFile(std::string_view text) {
  std::map<std::string, RdmaCgroupCounts> out;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    const std::vector<std::string_view> words = Words(line);
    if (words.empty()) continue;
    auto problem = [&](std::string_view why) {
      return absl::InvalidArgumentError(Cat("line ", line_no, ": ", why));
    };
    const std::string_view device = words[0];
    if (device.find('=') != std::string_view::npos) return problem("no device name");
    if (device.size() > kMaxDeviceName) {
      return problem(Cat("a device name of ", device.size(), " bytes (the kernel's are <= 63)"));
    }
    if (out.size() == kMaxRdmaCgroupDevices) {
      return problem(Cat("more than ", kMaxRdmaCgroupDevices, " devices"));
    }
    RdmaCgroupCounts counts;
    for (size_t w = 1; w < words.size(); ++w) {
      const size_t eq = words[w].find('=');
      if (eq == std::string_view::npos) return problem(Cat("\"", words[w], "\" is not key=value"));
      const std::string_view key = words[w].substr(0, eq);
      int64_t value = 0;
      if (!ParseValue(words[w].substr(eq + 1), value)) {
        return problem(Cat(key, "=", words[w].substr(eq + 1), " is not a count"));
      }
      if (key == "hca_handle") counts.hca_handle = value;
      if (key == "hca_object") counts.hca_object = value;
    }
    if (!out.emplace(std::string(device), counts).second) {
      return problem(Cat("device ", device, " twice"));
    }
  }
  return out;
}

}  // namespace rdmadp::usage
