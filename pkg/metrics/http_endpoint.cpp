#include "pkg/metrics/http_endpoint.h"

// Debian ships cpp-httplib as a compiled library; its pkg-config flags (TLS, zlib, brotli)
// must match the header's view of the classes, so they come from CMake, not from here.
// The endpoint itself serves plain HTTP: node-local scrapes and kubelet probes.
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>

#include "absl/status/status.h"
#include "pkg/text/cat.h"

namespace rdmadp::metrics {
namespace {

absl::Status ParseAddress(const std::string& address, std::string& host, int& port) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        Cat("--metrics-address \"", address, "\": use HOST:PORT or :PORT"));
  }
  host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "::";  // both stacks (IPV6_V6ONLY off); "0.0.0.0" without IPv6
  const std::string p = address.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc() || ptr != p.data() + p.size() || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        Cat("--metrics-address \"", address, "\": port must be 0..65535"));
  }
  return absl::OkStatus();
}

bool Ipv6Available() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(const std::string& address,
                                                                  const Collect& collect) {
  std::unique_ptr<HttpEndpoint> ep(new HttpEndpoint());
  int port = 0;
  if (auto s = ParseAddress(address, ep->host_, port); !s.ok()) return s;
  ep->server_ = std::make_unique<httplib::Server>();
  auto& srv = *ep->server_;
  srv.new_task_queue = [] { return new httplib::ThreadPool(2); };  // scrapes are rare
  // cpp-httplib defaults to SO_REUSEPORT, which would let a second instance share the port
  // and answer this one's probes. A conflict must be an error instead.
  srv.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    int no = 0;  // a "::" socket also accepts IPv4 (fails harmlessly on IPv4 sockets)
    ::setsockopt(sock, IPPROTO_IPV6, IPV6_V6ONLY, &no, sizeof(no));
  });
  srv.Get("/metrics", [collect](const httplib::Request&, httplib::Response& res) {
    auto view = collect();
    if (!view) {
      res.status = 503;
      res.set_content("event loop did not answer within 1 s\n", "text/plain");
      return;
    }
    res.set_content(FormatPrometheus(*view), "text/plain; version=0.0.4; charset=utf-8");
  });
  srv.Get("/healthz", [collect](const httplib::Request&, httplib::Response& res) {
    const bool alive = collect().has_value();
    res.status = alive ? 200 : 503;
    res.set_content(alive ? "ok\n" : "event loop did not answer within 1 s\n", "text/plain");
  });
  srv.Get("/readyz", [collect](const httplib::Request&, httplib::Response& res) {
    auto view = collect();
    const std::string why = view ? NotReadyReason(*view) : "event loop did not answer";
    res.status = why.empty() ? 200 : 503;
    res.set_content(why.empty() ? "ready\n" : why + "\n", "text/plain");
  });
  auto bind = [&] {
    return port == 0 ? srv.bind_to_any_port(ep->host_)
                     : (srv.bind_to_port(ep->host_, port) ? port : -1);
  };
  ep->port_ = bind();
  if (ep->port_ <= 0 && ep->host_ == "::" && !Ipv6Available()) {  // a kernel without IPv6
    ep->host_ = "0.0.0.0";
    ep->port_ = bind();
  }
  if (ep->port_ <= 0) {
    return absl::UnavailableError(
        Cat("cannot listen on ", address, " for metrics (in use? pick another --metrics-address)"));
  }
  ep->thread_ = std::thread([s = ep->server_.get()] { s->listen_after_bind(); });
  return ep;
}

HttpEndpoint::~HttpEndpoint() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace rdmadp::metrics
