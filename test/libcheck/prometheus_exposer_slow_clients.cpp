// prometheus-cpp's pull exposer (civetweb) as the metrics endpoint, under slow clients.
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdlib>

#include "slow_clients.h"

int main(int argc, char** argv) {
  prometheus::Exposer exposer{"127.0.0.1:0"};
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge().Name("rdmadp_up").Help("up").Register(*registry).Add({}).Set(1);
  exposer.RegisterCollectable(registry);
  libcheck::SlowClientsThenScrape(exposer.GetListeningPorts().at(0), argc > 1 ? atoi(argv[1]) : 8);
}
