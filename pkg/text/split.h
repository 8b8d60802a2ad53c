// Splitting on one separator, keeping empty parts: "a//b" -> {"a", "", "b"}, "" -> {""}.
// The parts view `s`: it must outlive them.
#pragma once

#include <string_view>
#include <vector>

namespace rdmadp {

inline std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

}  // namespace rdmadp
