// /metrics, /healthz and /readyz over plain HTTP/1.1: one thread, one epoll set, non-blocking
// sockets. The port is open on every node IP (host network), so everything a client can make
// us hold is bounded (see HttpLimits and http_request.h): a request head of at most 8 KiB,
// never a body, a total deadline per head (a header line every few seconds does not keep a
// connection), a connection cap that evicts the longest-waiting connection so a new probe is
// always served. No TLS and no library: nothing initialises OpenSSL in the process.
//
// The handlers never read plugin state directly: `collect` asks the event loop for a View
// and gives up after a deadline, so /healthz failing means the loop itself is stuck.
//
// Threads: Start() and the destructor on any one thread; `collect` is called on the
// endpoint's thread; open_connections() from anywhere.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "pkg/fd/unique_fd.h"
#include "pkg/metrics/prometheus.h"

namespace rdmadp::metrics {

struct HttpLimits {
  size_t max_connections = 64;
  // From a request's first byte (or the accept) to the end of its head.
  std::chrono::milliseconds head_timeout{5000};
  // Keep-alive: how long a connection may wait for the first byte of its next request.
  std::chrono::milliseconds idle_timeout{30000};
  // To deliver a response (a client that does not read).
  std::chrono::milliseconds write_timeout{10000};
};

class HttpEndpoint {
 public:
  // Returns nullopt when the event loop did not answer in time.
  using Collect = std::function<std::optional<View>()>;

  // `address` is HOST:PORT, :PORT or [V6]:PORT; port 0 picks a free one (see port()).
  // `flag` names the address in errors (--metrics-address, --health-address).
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(
      const std::string& address, Collect collect, std::string_view flag = "--metrics-address",
      HttpLimits limits = {});
  ~HttpEndpoint();  // closes every connection and joins the thread

  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const { return port_; }
  const std::string& host() const { return host_; }
  size_t open_connections() const { return open_connections_.load(); }

 private:
  class Connections;
  HttpEndpoint() = default;
  void Run();

  Collect collect_;
  HttpLimits limits_;
  UniqueFd listen_fd_;
  UniqueFd stop_fd_;  // eventfd: the destructor wakes the thread
  std::string host_;
  int port_ = 0;
  std::atomic<size_t> open_connections_{0};
  std::thread thread_;
};

}  // namespace rdmadp::metrics
