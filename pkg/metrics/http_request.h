// HTTP/1.x for the metrics and probe endpoint, as pure functions: parse one request head
// from the bytes received so far, and decide the response. No I/O; the endpoint
// (http_endpoint.h) feeds bytes in and writes what comes out.
//
// Only what node-local scrapers and kubelet probes need: GET and HEAD, no request bodies.
// Anything else is answered with a status and the connection closed, before a single body
// byte is read (a hostile Content-Length can never make us buffer anything):
//   405 other methods, 413 a request with a body, 431 a head over kMaxHeadBytes or with more
//   than kMaxHeaders lines, 400 malformed, 505 not HTTP/1.0 or 1.1, 404 unknown paths.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rdmadp::metrics {

inline constexpr size_t kMaxHeadBytes = 8192;
inline constexpr size_t kMaxHeaders = 64;

struct HttpRequest {
  std::string method;
  std::string path;  // the target without its query
  bool http10 = false;
  bool keep_alive = true;  // HTTP/1.1 default unless "Connection: close"
  bool has_body = false;   // a non-zero Content-Length or any Transfer-Encoding
};

struct HeadParse {
  enum class State { kIncomplete, kComplete, kError };
  State state = State::kIncomplete;
  size_t consumed = 0;  // kComplete: bytes of the head, including its blank line
  HttpRequest request;  // kComplete
  int status = 0;       // kError: the status to answer with (then close)
  std::string reason;   // kError: one line for the body
};

// Parses the head at the start of `buffer`. kIncomplete: more bytes are needed (the buffer
// never needs to hold more than kMaxHeadBytes). Lines end in CRLF or a bare LF.
HeadParse ParseHead(std::string_view buffer);

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  bool close = false;         // the connection ends after this response
  bool allow_header = false;  // 405: "Allow: GET, HEAD"
};

// The wire form. `head_only` (HEAD): the headers of the full response, no body.
std::string Serialize(const HttpResponse& response, bool head_only);

// An error answer: `reason` as the body, and the connection closes.
HttpResponse Reject(int status, std::string_view reason);

// 405 or 413 for a parsed request that is not a plain GET or HEAD; nullopt: route it.
std::optional<HttpResponse> Screen(const HttpRequest& request);

}  // namespace rdmadp::metrics
