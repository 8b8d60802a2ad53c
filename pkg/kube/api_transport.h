// The calls a component makes of the API server: one request, and one streaming GET (a
// watch). RestClient (rest_client.h) makes them over HTTPS; a test can hand a component an
// in-process server instead (test/support/fake_slice_api.h), whose waits are on a clock the
// test holds. What a component does with an answer (409 relist, 410 relist, 429 back off) is
// the component's, whichever transport carries it.
//
// Threads: one transport per thread at a time; only Cancel() and Shutdown() may be called
// from another thread.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace rdmadp::kube {

// What a peer can make us hold: an answer (a list of this node's slices is a few MiB at
// most), one watch line (etcd stores objects of at most 1.5 MiB), an error answer, a token.
inline constexpr std::chrono::milliseconds kCallTimeout{20000};

struct HttpResponse {
  long code = 0;
  std::string body;
  int retry_after_seconds = 0;  // from Retry-After (429, 503), 0 if absent
};

class ApiTransport {
 public:
  virtual ~ApiTransport() = default;
  // One request to `path` ("/apis/...?..."), `body` sent as JSON when not empty (a PATCH's
  // as a JSON patch when it is an array, application/json-patch+json, else as server-side
  // apply, application/apply-patch+yaml), ended after `timeout`. Transport failures (nothing
  // listening, TLS) are errors; every HTTP answer, 4xx and 5xx included, is a response.
  virtual absl::StatusOr<HttpResponse> Call(std::string_view method, const std::string& path,
                                            const std::string& body = "",
                                            std::chrono::milliseconds timeout = kCallTimeout) = 0;
  // A streaming GET (a watch): `on_line` gets each complete line as it arrives and returns
  // false to end the stream. Returns the HTTP code once the stream ends (the server closed
  // it, `on_line` said stop, or Cancel()); a non-200 answer's body goes to `on_line` whole.
  // `on_open` (optional) runs once the server has answered 200, before any line: a watch
  // with nothing to report yet is already a working connection. A stream that carries
  // nothing for the transport's idle limit (ApiConfig::watch_idle) is an error.
  virtual absl::StatusOr<long> Stream(const std::string& path,
                                      const std::function<bool(std::string_view line)>& on_line,
                                      const std::function<void()>& on_open = nullptr) = 0;
  // Any thread: ends the running Stream() (or the next one) promptly.
  virtual void Cancel() = 0;
  // Undoes a Cancel() for the next call, never a Shutdown().
  virtual void ResetCancel() = 0;
  // Any thread: Cancel() for good. A loop that resets its cancel before each call cannot
  // lose this one, whatever the order.
  virtual void Shutdown() = 0;
  // The Retry-After (seconds, 0 if none) of the last Stream() answer that was not 200.
  virtual int stream_retry_after_seconds() const = 0;
};

}  // namespace rdmadp::kube
