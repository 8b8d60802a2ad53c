// Minimal JSON output helpers (we only ever write JSON, never parse it here).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace rdmadp {

// Length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), or 0 if it is not one.
inline size_t Utf8SequenceLength(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

// Appends `s` as a quoted JSON string. Text from outside (sysfs, requests) may be any bytes:
// control characters are escaped and invalid UTF-8 becomes U+FFFD, so the output is always
// one valid JSON string.
inline void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  while (!s.empty()) {
    const char c = s.front();
    const size_t n = Utf8SequenceLength(s);
    if (n == 0) {
      out += "\\ufffd";
      s.remove_prefix(1);
      continue;
    }
    if (n > 1) {
      out.append(s.substr(0, n));
      s.remove_prefix(n);
      continue;
    }
    s.remove_prefix(1);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

inline std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

// Untrusted text (a request's device ID) for a log line or an error message: quoted as JSON
// and cut to `max_bytes`, with the full length said, so it can neither forge lines nor
// make a line (or a gRPC status) as long as the request.
inline std::string QuotedExcerpt(std::string_view s, size_t max_bytes = 64) {
  if (s.size() <= max_bytes) return JsonString(s);
  return JsonString(s.substr(0, max_bytes)) + "... (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace rdmadp
