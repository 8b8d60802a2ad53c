// What `k8s-rdma-shared-dp pods` prints: each container holding our devices, the HCAs its
// allocations give it, what its processes hold on them and where that was read, how long it
// has run, and the verdict (docs/observability.md, "Per-container RDMA use"); then the
// containers holding objects on our HCAs without our devices, what could not be read, and
// how to make a missing source readable. Pure: a view and its verdicts in, text out.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "pkg/usage/usage_view.h"
#include "pkg/usage/verdict.h"

namespace rdmadp::report {

struct PodsReport {
  const usage::UsageView& view;
  const std::vector<usage::Judgement>& judgements;  // one per view.containers, in order
  std::chrono::seconds grace;
  std::string list_error;  // why the kubelet's pod-resources API could not be read ("" if it was)
  bool qps_read = false;   // QPs by owner were counted (--rdma-usage-qps, and it could be)
};

std::string PodsTable(const PodsReport& report);
// {"graceSeconds": N, "containers": [...], "foreign": [...], "problems": [...],
//  "hints": [...]}
std::string PodsJson(const PodsReport& report);

// "45s", "12m", "3h4m", "2d3h".
std::string ShortDuration(std::chrono::seconds d);

}  // namespace rdmadp::report
