// cpp-httplib (Debian's libcpp-httplib) as the metrics endpoint, under slow clients.
#define CPPHTTPLIB_USE_POLL
#include <httplib.h>

#include <cstdlib>

#include "slow_clients.h"

int main(int argc, char** argv) {
  httplib::Server server;
  server.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("rdmadp_up 1\n", "text/plain; version=0.0.4");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { server.listen_after_bind(); });
  libcheck::SlowClientsThenScrape(port, argc > 1 ? atoi(argv[1]) : 8);
  server.stop();
  serving.join();
}
