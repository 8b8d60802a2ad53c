// prometheus-cpp core's text serializer on what our endpoint renders: hostile label values
// (a resource name is config text; a problem line quotes the kernel), counters and gauges.
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <iostream>
#include <vector>

int main() {
  using namespace prometheus;
  MetricFamily up{
      "rdmadp_resource_registered", "Whether the kubelet has the resource.", MetricType::Gauge, {}};
  ClientMetric m;
  m.label = {{"resource", "rdma/a\"b\\c\nd"}};
  m.gauge.value = 1;
  up.metric.push_back(m);
  MetricFamily allocs{
      "rdmadp_allocations_total", "Allocate calls answered.", MetricType::Counter, {}};
  ClientMetric c;
  c.label = {{"resource", "rdma/a"}};
  c.counter.value = 12345678901234.0;
  allocs.metric.push_back(c);
  MetricFamily nan{"rdmadp_odd", "A NaN and an infinity.", MetricType::Gauge, {}};
  ClientMetric n1, n2;
  n1.label = {{"k", "nan"}};
  n1.gauge.value = std::nan("");
  n2.label = {{"k", "inf"}};
  n2.gauge.value = INFINITY;
  nan.metric = {n1, n2};
  TextSerializer s;
  std::cout << s.Serialize({up, allocs, nan});
}
