#include "pkg/sysfs/port_counters.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "pkg/fd/files.h"
#include "pkg/text/cat.h"

namespace rdmadp::sysfs {
namespace {

constexpr size_t kMaxValueBytes = 32;

void ReadDir(const std::string& dir, std::map<std::string, uint64_t>& out,
             std::vector<std::string>& problems) {
  std::vector<std::string> names = fd::ListDir(dir);
  std::sort(names.begin(), names.end());
  if (names.size() > kMaxPortCounters) {
    problems.push_back(Cat(dir, ": more than ", kMaxPortCounters, " counters; the rest left out"));
    names.resize(kMaxPortCounters);
  }
  for (const std::string& name : names) {
    std::optional<std::string> text = fd::ReadFile(Cat(dir, "/", name), kMaxValueBytes);
    if (!text) continue;  // a directory (hw_counters/lifespan is a file; others may not be)
    std::string_view v = *text;
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
      problems.push_back(Cat(dir, "/", name, " is not a counter"));
      continue;
    }
    out[name] = value;
  }
}

}  // namespace

PortCounters ReadPortCounters(const std::string& sysfs_root, const std::string& hca, int port) {
  PortCounters out{.hca = hca, .port = port, .counters = {}, .hw_counters = {}, .problems = {}};
  const std::string base = Cat(sysfs_root, "/class/infiniband/", hca, "/ports/", port);
  ReadDir(base + "/counters", out.counters, out.problems);
  ReadDir(base + "/hw_counters", out.hw_counters, out.problems);
  out.hw_counters.erase("lifespan");  // how long the driver caches them, not a counter
  return out;
}

}  // namespace rdmadp::sysfs
