// This daemon's own metrics endpoint (pkg/metrics/http_endpoint.h) under the same slow
// clients as the library candidates (slow_clients.h): the baseline of scripts/library-check.sh.
#include <cstdlib>

#include "pkg/metrics/http_endpoint.h"
#include "slow_clients.h"

int main(int argc, char** argv) {
  auto endpoint = rdmadp::metrics::HttpEndpoint::Start(
      "127.0.0.1:0", [] { return std::optional<rdmadp::metrics::View>(rdmadp::metrics::View{}); });
  if (!endpoint.ok()) return 1;
  libcheck::SlowClientsThenScrape((*endpoint)->port(), argc > 1 ? atoi(argv[1]) : 8);
}
