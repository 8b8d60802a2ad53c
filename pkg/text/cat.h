// String building without absl::StrCat: Debian's abseil is built with its own
// absl::string_view, which does not accept std::string_view.
#pragma once

#include <concepts>
#include <string>
#include <string_view>
#include <vector>

namespace rdmadp {

namespace detail {
inline void AppendOne(std::string& out, std::string_view s) { out.append(s); }
inline void AppendOne(std::string& out, char c) { out.push_back(c); }
template <std::integral T>
requires(!std::same_as<T, char> && !std::same_as<T, bool>) void AppendOne(std::string& out, T v) {
  out.append(std::to_string(v));
}
}  // namespace detail

template <typename... Args>
std::string Cat(const Args&... args) {
  std::string out;
  (detail::AppendOne(out, args), ...);
  return out;
}

template <typename... Args>
void Append(std::string& out, const Args&... args) {
  (detail::AppendOne(out, args), ...);
}

template <typename Range>
std::string Join(const Range& items, std::string_view sep) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out.append(sep);
    first = false;
    detail::AppendOne(out, item);
  }
  return out;
}

}  // namespace rdmadp
