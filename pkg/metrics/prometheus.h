// The plugin's state as Prometheus text exposition format (version 0.0.4). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rdmadp::metrics {

struct ResourceView {
  std::string resource;  // rdma/hca_shared_devices_a
  int64_t hcas = 0;
  int64_t slots = 0;
  int64_t healthy_slots = 0;
  bool registered = false;
  int64_t open_streams = 0;
  uint64_t allocations = 0;
  uint64_t registrations = 0;
};

// Process-wide counters; the manager keeps one and copies it into each View.
struct Counters {
  uint64_t kubelet_restarts = 0;
  uint64_t reloads = 0;
  uint64_t rescans = 0;
  double rescan_seconds_sum = 0;
  double last_rescan_seconds = 0;
  uint64_t errors = 0;
  std::string last_error;  // "" when none
  double last_error_unix_seconds = 0;
};

// A config entry left out at start because it is invalid on its own.
struct SkippedView {
  size_t index = 0;
  std::string resource_name;
};

struct View {
  std::string version;
  std::string registration_mode;
  std::vector<ResourceView> resources;
  std::vector<SkippedView> skipped_entries;
  Counters counters;
};

std::string FormatPrometheus(const View& view);

// Why the plugin is not ready ("" when ready): no config entry skipped, and every resource
// registered with the kubelet, holding an open ListAndWatch stream.
std::string NotReadyReason(const View& view);

}  // namespace rdmadp::metrics
