// /metrics, /healthz and /readyz over HTTP (cpp-httplib, on its own threads).
// The handlers never read plugin state directly: `collect` asks the event loop for a View
// and gives up after a deadline, so /healthz failing means the loop itself is stuck.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "pkg/metrics/prometheus.h"

namespace httplib {
class Server;
}

namespace rdmadp::metrics {

class HttpEndpoint {
 public:
  // Returns nullopt when the event loop did not answer in time. Called on HTTP threads.
  using Collect = std::function<std::optional<View>()>;

  // `address` is HOST:PORT, :PORT or [V6]:PORT; port 0 picks a free one (see port()).
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(const std::string& address,
                                                             const Collect& collect);
  ~HttpEndpoint();  // stops listening and joins the thread

  int port() const { return port_; }
  const std::string& host() const { return host_; }

 private:
  HttpEndpoint() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string host_;
  int port_ = 0;
};

}  // namespace rdmadp::metrics
