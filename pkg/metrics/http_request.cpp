#include "pkg/metrics/http_request.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "pkg/text/cat.h"

namespace rdmadp::metrics {
namespace {

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// RFC 9110 token characters (header names, methods).
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           std::string_view("!#$%&'*+-.^_`|~").find(char(c)) != std::string_view::npos;
  });
}

// True if the comma-separated `list` holds `token` (case-insensitive).
bool ListHas(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (IEquals(TrimOws(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

HeadParse Error(int status, std::string reason) {
  HeadParse p;
  p.state = HeadParse::State::kError;
  p.status = status;
  p.reason = std::move(reason);
  return p;
}

const char* StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

}  // namespace

HeadParse ParseHead(std::string_view buffer) {
  // Find the blank line that ends the head, never looking past the limit.
  const std::string_view window = buffer.substr(0, kMaxHeadBytes);
  size_t end = std::string_view::npos;  // index just past the blank line
  size_t line_start = 0;
  size_t lines = 0;
  for (size_t i = 0; i < window.size(); ++i) {
    if (window[i] != '\n') continue;
    const size_t len = i - line_start - (i > line_start && window[i - 1] == '\r' ? 1 : 0);
    if (len == 0 && lines > 0) {
      end = i + 1;
      break;
    }
    if (len > 0 || lines > 0) ++lines;  // leading empty lines are tolerated (RFC 9112 2.2)
    if (lines > kMaxHeaders + 1) return Error(431, "too many header lines");
    line_start = i + 1;
  }
  if (end == std::string_view::npos) {
    if (buffer.size() >= kMaxHeadBytes) {
      return Error(431, Cat("request head over ", kMaxHeadBytes, " bytes"));
    }
    return {};
  }
  HeadParse parse;
  HttpRequest& req = parse.request;
  std::string_view head = window.substr(0, end);
  bool first = true;
  bool seen_length = false;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      if (first) continue;  // a leading empty line
      break;                // the end of the head
    }
    if (first) {
      first = false;
      const size_t sp1 = line.find(' ');
      const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
      if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
        return Error(400, "malformed request line");
      }
      const std::string_view method = line.substr(0, sp1);
      const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
      const std::string_view version = line.substr(sp2 + 1);
      if (!IsToken(method) || target.empty() || target.front() != '/') {
        return Error(400, "malformed request line");
      }
      if (version == "HTTP/1.0") {
        req.http10 = true;
        req.keep_alive = false;
      } else if (version != "HTTP/1.1") {
        return Error(505, "only HTTP/1.0 and HTTP/1.1 are served");
      }
      req.method = std::string(method);
      req.path = std::string(target.substr(0, target.find('?')));
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') return Error(400, "folded header line");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Error(400, "malformed header line");
    }
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = TrimOws(line.substr(colon + 1));
    if (IEquals(name, "Content-Length")) {
      uint64_t length = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
      if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || seen_length) {
        return Error(400, "invalid Content-Length");
      }
      seen_length = true;
      if (length > 0) req.has_body = true;
    } else if (IEquals(name, "Transfer-Encoding")) {
      req.has_body = true;
    } else if (IEquals(name, "Connection")) {
      if (ListHas(value, "close")) req.keep_alive = false;
      if (req.http10 && ListHas(value, "keep-alive")) req.keep_alive = true;
    }
  }
  parse.state = HeadParse::State::kComplete;
  parse.consumed = end;
  return parse;
}

HttpResponse Reject(int status, std::string_view reason) {
  HttpResponse r;
  r.status = status;
  r.body = Cat(reason, "\n");
  r.close = true;
  return r;
}

std::optional<HttpResponse> Screen(const HttpRequest& request) {
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse r = Reject(405, "only GET and HEAD are served");
    r.allow_header = true;
    return r;
  }
  if (request.has_body) return Reject(413, "request bodies are not accepted");
  return std::nullopt;
}

std::string Serialize(const HttpResponse& response, bool head_only) {
  std::string out = Cat("HTTP/1.1 ", response.status, " ", StatusText(response.status),
                        "\r\nContent-Type: ", response.content_type,
                        "\r\nContent-Length: ", response.body.size(), "\r\n");
  if (response.allow_header) out += "Allow: GET, HEAD\r\n";
  out += response.close ? "Connection: close\r\n\r\n" : "\r\n";
  if (!head_only) out += response.body;
  return out;
}

}  // namespace rdmadp::metrics
