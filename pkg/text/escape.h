// Text from outside (sysfs names and contents, config values) for output a human reads on a
// terminal, one value per line or per table cell.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace rdmadp {

// `s` with each control character (below 0x20, and DEL) written as \xNN, the daemon's log's
// escape (pkg/log/log.cpp), so the value stays on its line: a line break cannot start a
// forged line or table row, ESC cannot reach the terminal, NUL cannot cut the output. Unlike
// the log, which makes a line break an indented continuation and keeps tabs, both are
// escaped here: a table cell is one line, and a tab would break its columns. Every other
// byte, UTF-8 included, is kept as it is.
inline std::string EscapeControls(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", b);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace rdmadp
