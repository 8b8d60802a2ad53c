#include "pkg/metrics/prometheus.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>

#include "pkg/text/cat.h"

namespace rdmadp::metrics {
namespace {

// Label values escape backslash, double quote and newline.
std::string Label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// Exact: %.17g round-trips a double (a Unix timestamp needs 10+ significant digits).
std::string Number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

void Family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  Append(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

template <typename Fn>
void PerResource(std::string& out, const View& v, std::string_view name, std::string_view type,
                 std::string_view help, Fn value) {
  Family(out, name, type, help);
  for (const auto& r : v.resources) {
    Append(out, name, "{resource=\"", Label(r.resource), "\"} ", value(r), "\n");
  }
}

// The DRA front end's series (present while some entry uses it). Names follow the
// driver-neutral pattern of other DRA drivers (dranet's "..._dra_..." families): a count of
// Prepare calls and failures, their latency, slice writes by verb and HTTP code.
void FormatDra(std::string& out, const DraView& d) {
  const std::string driver = Cat("driver=\"", Label(d.driver), "\"");
  Family(out, "rdma_shared_dp_dra_registered", "gauge",
         "1 when the kubelet's plugin watcher has accepted the DRA driver.");
  Append(out, "rdma_shared_dp_dra_registered{", driver, "} ", d.registered ? 1 : 0, "\n");
  Family(out, "rdma_shared_dp_dra_registrations_total", "counter",
         "Registrations of the DRA driver with the kubelet.");
  Append(out, "rdma_shared_dp_dra_registrations_total{", driver, "} ", d.registrations, "\n");
  Family(out, "rdma_shared_dp_dra_api_reachable", "gauge",
         "1 when the API client exists and its last list or watch worked.");
  Append(out, "rdma_shared_dp_dra_api_reachable{", driver, "} ", d.api_problem.empty() ? 1 : 0,
         "\n");
  Family(out, "rdma_shared_dp_dra_slices_in_sync", "gauge",
         "1 when this node's ResourceSlices say what the plugin wants published.");
  Append(out, "rdma_shared_dp_dra_slices_in_sync{", driver, "} ",
         d.slices_synced && d.slices_in_sync ? 1 : 0, "\n");
  Family(out, "rdma_shared_dp_dra_slice_writes_total", "counter",
         "ResourceSlice writes by verb and HTTP code (0: no answer).");
  for (const auto& [key, n] : d.slice_writes) {
    Append(out, "rdma_shared_dp_dra_slice_writes_total{", driver, ",verb=\"", Label(key.first),
           "\",code=\"", key.second, "\"} ", n, "\n");
  }
  Family(out, "rdma_shared_dp_dra_slice_write_budget_waits_total", "counter",
         "Writes that waited for the write budget (32 at once, then one a second).");
  Append(out, "rdma_shared_dp_dra_slice_write_budget_waits_total{", driver, "} ",
         d.write_budget_waits, "\n");
  Family(out, "rdma_shared_dp_dra_api_failures_total", "counter",
         "Lists, watches and writes to the API server that failed.");
  Append(out, "rdma_shared_dp_dra_api_failures_total{", driver, "} ", d.api_failures, "\n");
  Family(out, "rdma_shared_dp_dra_dropped_field", "gauge",
         "1 for each field this cluster's API server does not keep: ResourceSlice fields, "
         "and ResourceClaim status.devices.");
  for (const auto& [field, gate] : d.dropped_fields) {
    Append(out, "rdma_shared_dp_dra_dropped_field{", driver, ",field=\"", Label(field),
           "\",feature_gate=\"", Label(gate), "\"} 1\n");
  }
  Family(out, "rdma_shared_dp_dra_model_fallback", "gauge",
         "1 for each DRA pool published in another device model than its config says, "
         "because this API server cannot honour that one.");
  for (const auto& f : d.model_fallbacks) {
    Append(out, "rdma_shared_dp_dra_model_fallback{", driver, ",resource=\"", Label(f.resource),
           "\",configured=\"", Label(f.configured), "\",published=\"", Label(f.published),
           "\"} 1\n");
  }
  Family(out, "rdma_shared_dp_dra_prepared_claims_total", "counter",
         "Claims in NodePrepareResources calls, by result.");
  Append(out, "rdma_shared_dp_dra_prepared_claims_total{", driver, ",result=\"ok\"} ",
         d.prepares - d.prepare_failures, "\n");
  Append(out, "rdma_shared_dp_dra_prepared_claims_total{", driver, ",result=\"error\"} ",
         d.prepare_failures, "\n");
  Family(out, "rdma_shared_dp_dra_prepare_duration_seconds", "summary",
         "Time to answer NodePrepareResources.");
  Append(out, "rdma_shared_dp_dra_prepare_duration_seconds_sum{", driver, "} ",
         Number(d.prepare_seconds_sum), "\n", "rdma_shared_dp_dra_prepare_duration_seconds_count{",
         driver, "} ", d.prepare_calls, "\n");
  Family(out, "rdma_shared_dp_dra_unprepared_claims_total", "counter",
         "Claims in NodeUnprepareResources calls.");
  Append(out, "rdma_shared_dp_dra_unprepared_claims_total{", driver, "} ", d.unprepares, "\n");
  Family(out, "rdma_shared_dp_dra_claim_status_applies_total", "counter",
         "Server-side applies of prepared claims' status.devices, by HTTP code (0: no answer).");
  for (const auto& [code, n] : d.claim_status_applies) {
    Append(out, "rdma_shared_dp_dra_claim_status_applies_total{", driver, ",code=\"", code, "\"} ",
           n, "\n");
  }
  Family(out, "rdma_shared_dp_dra_claim_status_pending", "gauge",
         "Prepared claims whose status.devices waits to be checked or written (the write "
         "budget, a retry wait, or a server that drops the field).");
  Append(out, "rdma_shared_dp_dra_claim_status_pending{", driver, "} ", d.claim_status_pending,
         "\n");
  Family(out, "rdma_shared_dp_dra_claim_status_given_up", "gauge",
         "Prepared claims whose status.devices the API server refused (400, 404, 409, 422): "
         "not written until prepared again.");
  Append(out, "rdma_shared_dp_dra_claim_status_given_up{", driver, "} ", d.claim_status_given_up,
         "\n");
}

std::string ContainerLabels(const ContainerRdmaView& c) {
  return Cat("namespace=\"", Label(c.pod_namespace), "\",pod=\"", Label(c.pod), "\",container=\"",
             Label(c.container), "\"");
}

// One line per label set: the same names twice (a finished pod and its namesake, listed by
// a kubelet before 1.34; a restarted container with two cgroups) would make Prometheus
// refuse the whole page. The first wins.
void Line(std::string& out, std::set<std::string>& seen, std::string_view name,
          const std::string& labels, int64_t value) {
  if (seen.insert(labels).second) Append(out, name, "{", labels, "} ", value, "\n");
}

void FormatObjects(std::string& out, std::string_view name,
                   const std::vector<ContainerRdmaView>& containers) {
  std::set<std::string> seen;
  for (size_t i = 0; i < containers.size() && i < kMaxRdmaUseContainers; ++i) {
    for (const auto& o : containers[i].objects) {
      Line(out, seen, name,
           Cat(ContainerLabels(containers[i]), ",device=\"", Label(o.device), "\",type=\"",
               Label(o.type), "\""),
           o.count);
    }
  }
}

// Per-container RDMA use (docs/observability.md, "Per-container RDMA use").
void FormatRdmaUse(std::string& out, const RdmaUseView& u) {
  Family(out, "rdma_shared_dp_pod_rdma_unused", "gauge",
         "1 for a container that has held the resource past the grace with no QP and no verbs "
         "object beyond contexts on its HCAs; 0 otherwise.");
  std::set<std::string> seen;
  for (size_t i = 0; i < u.containers.size() && i < kMaxRdmaUseContainers; ++i) {
    const ContainerRdmaView& c = u.containers[i];
    for (const std::string& resource : c.resources) {
      Line(out, seen, "rdma_shared_dp_pod_rdma_unused",
           Cat(ContainerLabels(c), ",resource=\"", Label(resource), "\""), c.unused ? 1 : 0);
    }
  }
  Family(out, "rdma_shared_dp_pod_rdma_objects", "gauge",
         "RDMA objects a container's processes hold on the HCAs its allocations give it, by "
         "type: hca_handle (contexts) and hca_object (other verbs objects) from its cgroup.");
  FormatObjects(out, "rdma_shared_dp_pod_rdma_objects", u.containers);
  Family(out, "rdma_shared_dp_pod_rdma_containers", "gauge",
         "Containers holding this plugin's devices, by verdict (used, unused, in grace, "
         "unknown: a source could not be read).");
  for (const auto& [verdict, n] : u.verdicts) {
    Append(out, "rdma_shared_dp_pod_rdma_containers{verdict=\"", Label(verdict), "\"} ", n, "\n");
  }
  Family(out, "rdma_shared_dp_foreign_rdma_objects", "gauge",
         "RDMA objects on this plugin's HCAs held by a container without its devices.");
  FormatObjects(out, "rdma_shared_dp_foreign_rdma_objects", u.foreign);
  // Per-port traffic: bytes from the 4-octet-word counters, and every counter as sysfs has
  // it (a saturating counter stays at its ceiling: a gauge, not a Prometheus counter).
  const size_t ports = std::min(u.ports.size(), kMaxPortSeries);
  for (const auto& [file, direction, name] :
       {std::tuple{"port_xmit_data", "xmit", "rdma_shared_dp_port_xmit_bytes_total"},
        std::tuple{"port_rcv_data", "rcv", "rdma_shared_dp_port_rcv_bytes_total"}}) {
    Family(out, name, "counter",
           Cat("Bytes the port ", direction == std::string_view("xmit") ? "sent" : "received",
               " (sysfs counters/", file, " times 4), read with each sample."));
    for (size_t i = 0; i < ports; ++i) {
      const PortCountersView& p = u.ports[i];
      if (auto it = p.counters.find(file); it != p.counters.end()) {
        Append(out, name, "{hca=\"", Label(p.hca), "\",port=\"", p.port, "\"} ", it->second * 4,
               "\n");
      }
    }
  }
  Family(out, "rdma_shared_dp_port_counter", "gauge",
         "Every counter of the port as sysfs shows it (counters/ and hw_counters/), read with "
         "each sample; 8-bit and 4-bit error counters and 32-bit data counters stop at their "
         "ceiling.");
  for (size_t i = 0; i < ports; ++i) {
    const PortCountersView& p = u.ports[i];
    for (const auto& [dir, values] :
         {std::pair{"counters", &p.counters}, std::pair{"hw_counters", &p.hw_counters}}) {
      for (const auto& [counter, value] : *values) {
        Append(out, "rdma_shared_dp_port_counter{hca=\"", Label(p.hca), "\",port=\"", p.port,
               "\",source=\"", dir, "\",counter=\"", Label(counter), "\"} ", value, "\n");
      }
    }
  }
  if (!u.events.empty()) {
    Family(out, "rdma_shared_dp_pod_events_total", "counter",
           "RDMAUnused Events on pods: created, exists (told before), failed (refused or not "
           "delivered), dropped (more waiting than the API server's budget lets out).");
    for (const auto& [result, n] : u.events) {
      Append(out, "rdma_shared_dp_pod_events_total{reason=\"RDMAUnused\",result=\"", result, "\"} ",
             n, "\n");
    }
  }
  Family(out, "rdma_shared_dp_rdma_use_samples_total", "counter",
         "Samples of per-container RDMA use taken.");
  Append(out, "rdma_shared_dp_rdma_use_samples_total ", u.samples, "\n");
  Family(out, "rdma_shared_dp_rdma_use_failed_samples_total", "counter",
         "Samples in which the kubelet's pod-resources API could not be read.");
  Append(out, "rdma_shared_dp_rdma_use_failed_samples_total ", u.failed_samples, "\n");
  Family(out, "rdma_shared_dp_rdma_use_last_sample_duration_seconds", "gauge",
         "Wall time the last sample took.");
  Append(out, "rdma_shared_dp_rdma_use_last_sample_duration_seconds ",
         Number(u.last_sample_seconds), "\n");
  Family(out, "rdma_shared_dp_rdma_use_last_sample_timestamp_seconds", "gauge",
         "When the last sample was taken (Unix time).");
  Append(out, "rdma_shared_dp_rdma_use_last_sample_timestamp_seconds ",
         Number(u.last_sample_unix_seconds), "\n");
}

}  // namespace

std::string FormatPrometheus(const View& v) {
  const Counters& c = v.counters;
  std::string out;
  Family(out, "rdma_shared_dp_build_info", "gauge", "Version and registration mode.");
  Append(out, "rdma_shared_dp_build_info{version=\"", Label(v.version), "\",mode=\"",
         Label(v.registration_mode), "\"} 1\n");
  PerResource(out, v, "rdma_shared_dp_hcas", "gauge", "RDMA HCAs in the resource's pool.",
              [](const ResourceView& r) { return std::to_string(r.hcas); });
  PerResource(out, v, "rdma_shared_dp_slots", "gauge", "Share slots advertised to the kubelet.",
              [](const ResourceView& r) { return std::to_string(r.slots); });
  PerResource(out, v, "rdma_shared_dp_healthy_slots", "gauge", "Advertised slots reported Healthy.",
              [](const ResourceView& r) { return std::to_string(r.healthy_slots); });
  PerResource(out, v, "rdma_shared_dp_registered", "gauge",
              "1 when the kubelet has accepted the resource's registration.",
              [](const ResourceView& r) { return std::string(r.registered ? "1" : "0"); });
  PerResource(out, v, "rdma_shared_dp_open_streams", "gauge",
              "Open ListAndWatch streams from the kubelet.",
              [](const ResourceView& r) { return std::to_string(r.open_streams); });
  PerResource(out, v, "rdma_shared_dp_allocations_total", "counter",
              "Allocate calls answered successfully.",
              [](const ResourceView& r) { return std::to_string(r.allocations); });
  PerResource(out, v, "rdma_shared_dp_allocate_rejections_total", "counter",
              "Allocate calls rejected (an ID the pool does not advertise).",
              [](const ResourceView& r) { return std::to_string(r.allocate_rejections); });
  PerResource(out, v, "rdma_shared_dp_pod_env_not_set", "gauge",
              "RoCE settings the entry asks for (trafficClass, gidIndex) that its pods do not "
              "get: the HCAs' ports disagree or have none.",
              [](const ResourceView& r) { return std::to_string(r.env_not_set.size()); });
  PerResource(out, v, "rdma_shared_dp_registrations_total", "counter",
              "Successful registrations with the kubelet.",
              [](const ResourceView& r) { return std::to_string(r.registrations); });
  PerResource(out, v, "rdma_shared_dp_registration_failures_total", "counter",
              "Registrations that failed or that the kubelet rejected.",
              [](const ResourceView& r) { return std::to_string(r.registration_failures); });
  PerResource(out, v, "rdma_shared_dp_socket_recreations_total", "counter",
              "Times the resource's socket was served again (for the kubelet's plugin watcher, "
              "or after it was deleted).",
              [](const ResourceView& r) { return std::to_string(r.socket_recreations); });
  Family(out, "rdma_shared_dp_registration_retries_total", "counter",
         "Back-off waits before trying again, by what failed: serve (the resource's socket) "
         "or register (the Register call).");
  for (const auto& r : v.resources) {
    Append(out, "rdma_shared_dp_registration_retries_total{resource=\"", Label(r.resource),
           "\",reason=\"serve\"} ", r.serve_retries, "\n");
    Append(out, "rdma_shared_dp_registration_retries_total{resource=\"", Label(r.resource),
           "\",reason=\"register\"} ", r.register_retries, "\n");
  }
  Family(out, "rdma_shared_dp_port_state", "gauge",
         "State of each port of the HCAs in a pool: 1 DOWN, 2 INIT (waiting for the subnet "
         "manager), 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER, 0 unknown.");
  for (size_t i = 0; i < v.ports.size() && i < kMaxPortSeries; ++i) {
    Append(out, "rdma_shared_dp_port_state{hca=\"", Label(v.ports[i].hca), "\",port=\"",
           v.ports[i].port, "\"} ", v.ports[i].state, "\n");
  }
  Family(out, "rdma_shared_dp_kubelet_restarts_total", "counter",
         "Kubelet restarts detected (kubelet.sock re-created).");
  Append(out, "rdma_shared_dp_kubelet_restarts_total ", c.kubelet_restarts, "\n");
  Family(out, "rdma_shared_dp_reloads_total", "counter", "Config reloads applied.");
  Append(out, "rdma_shared_dp_reloads_total ", c.reloads, "\n");
  Family(out, "rdma_shared_dp_rescan_duration_seconds", "summary",
         "Time to scan sysfs and rebuild every pool.");
  Append(out, "rdma_shared_dp_rescan_duration_seconds_sum ", Number(c.rescan_seconds_sum), "\n",
         "rdma_shared_dp_rescan_duration_seconds_count ", c.rescans, "\n");
  Family(out, "rdma_shared_dp_rescans_total", "counter", "Rescans by what triggered them.");
  for (const auto& [trigger, n] : c.rescans_by_trigger) {
    Append(out, "rdma_shared_dp_rescans_total{trigger=\"", Label(trigger), "\"} ", n, "\n");
  }
  Family(out, "rdma_shared_dp_sysfs_functions_read_total", "counter",
         "PCI functions read from sysfs (a full scan reads all; an event only its function).");
  Append(out, "rdma_shared_dp_sysfs_functions_read_total ", c.functions_read, "\n");
  Family(out, "rdma_shared_dp_last_rescan_duration_seconds", "gauge",
         "Duration of the latest rescan.");
  Append(out, "rdma_shared_dp_last_rescan_duration_seconds ", Number(c.last_rescan_seconds), "\n");
  Family(out, "rdma_shared_dp_errors_total", "counter",
         "Errors and warnings that need an operator's attention.");
  Append(out, "rdma_shared_dp_errors_total ", c.errors, "\n");
  Family(out, "rdma_shared_dp_errors_by_class_total", "counter",
         "Errors and warnings by class; the text of each is in the log.");
  for (const auto& [cls, n] : c.errors_by_class) {
    Append(out, "rdma_shared_dp_errors_by_class_total{class=\"", Label(cls), "\"} ", n, "\n");
  }
  Family(out, "rdma_shared_dp_last_error_timestamp_seconds", "gauge",
         "When the last error happened (0: never); its text is in the log.");
  Append(out, "rdma_shared_dp_last_error_timestamp_seconds ", Number(c.last_error_unix_seconds),
         "\n");
  Family(out, "rdma_shared_dp_config_entries_skipped", "gauge",
         "Config entries left out at start because they are invalid on their own.");
  Append(out, "rdma_shared_dp_config_entries_skipped ", v.skipped_entries.size(), "\n");
  if (!v.skipped_entries.empty()) {
    Family(out, "rdma_shared_dp_config_entry_skipped", "gauge",
           "1 for each config entry left out at start.");
    for (const auto& e : v.skipped_entries) {
      Append(out, "rdma_shared_dp_config_entry_skipped{entry=\"configList[", e.index,
             "]\",resource_name=\"", Label(e.resource_name), "\"} 1\n");
    }
  }
  Family(out, "rdma_shared_dp_config_last_reload_successful", "gauge",
         "1 when the last load or reload applied the whole config file; 0 when it was rejected "
         "or an entry of it was skipped.");
  Append(out, "rdma_shared_dp_config_last_reload_successful ", v.config.last_load_complete ? 1 : 0,
         "\n");
  Family(out, "rdma_shared_dp_config_last_reload_success_timestamp_seconds", "gauge",
         "When a load or reload last applied the whole config file (0: never).");
  Append(out, "rdma_shared_dp_config_last_reload_success_timestamp_seconds ",
         Number(v.config.last_complete_unix_seconds), "\n");
  Family(out, "rdma_shared_dp_config_hash", "gauge",
         "A hash of the config in force (48 bits): nodes that differ run different configs.");
  Append(out, "rdma_shared_dp_config_hash ", v.config.hash, "\n");
  if (!v.memlock.empty()) {
    Family(out, "rdma_shared_dp_memlock_applied", "gauge",
           "1 for an entry whose memlock its containers get; 0 when it is configured and not "
           "applied (/readyz says why).");
    for (const auto& m : v.memlock) {
      Append(out, "rdma_shared_dp_memlock_applied{resource=\"", Label(m.resource), "\"} ",
             m.not_applied.empty() ? 1 : 0, "\n");
    }
  }
  if (v.dra) FormatDra(out, *v.dra);
  if (v.rdma_use) FormatRdmaUse(out, *v.rdma_use);
  const ProcessView& p = v.process;
  Family(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  Append(out, "process_resident_memory_bytes ", Number(p.resident_memory_bytes), "\n");
  Family(out, "process_cpu_seconds_total", "counter", "User and system CPU time in seconds.");
  Append(out, "process_cpu_seconds_total ", Number(p.cpu_seconds), "\n");
  Family(out, "process_open_fds", "gauge", "Open file descriptors.");
  Append(out, "process_open_fds ", Number(p.open_fds), "\n");
  Family(out, "process_start_time_seconds", "gauge", "Start time since the Unix epoch.");
  Append(out, "process_start_time_seconds ", Number(p.start_time_seconds), "\n");
  Family(out, "rdma_shared_dp_heap_in_use_bytes", "gauge",
         "Bytes malloc has handed out and not had back, over every arena.");
  Append(out, "rdma_shared_dp_heap_in_use_bytes ", Number(p.heap_in_use_bytes), "\n");
  Family(out, "rdma_shared_dp_heap_free_bytes", "gauge",
         "Bytes malloc holds free without returning them to the system, over every arena.");
  Append(out, "rdma_shared_dp_heap_free_bytes ", Number(p.heap_free_bytes), "\n");
  return out;
}

std::string NotReadyReason(const View& v) {
  // An entry whose running version keeps serving is a detail line (ReadyNotes), as a
  // reload rejected as a whole is: everything the node served before still serves.
  for (const auto& e : v.skipped_entries) {
    if (e.running_version_kept) continue;
    return Cat("config entry configList[", e.index, "] (", e.resource_name,
               ") is invalid and was skipped; fix it in the ConfigMap (the plugin's log names "
               "the field)");
  }
  for (const auto& m : v.memlock) {
    if (!m.not_applied.empty()) {
      return Cat(m.resource, ": memlock is configured and not applied: ", m.not_applied);
    }
  }
  for (const auto& r : v.resources) {
    if (!r.problem.empty()) return Cat(r.resource, ": ", r.problem);
    if (!r.registered) return Cat(r.resource, " is not registered with the kubelet");
    if (r.open_streams == 0) return Cat(r.resource, " has no ListAndWatch stream open");
  }
  if (v.dra) {
    const DraView& d = *v.dra;
    if (!d.registered) return Cat("DRA driver ", d.driver, " is not registered with the kubelet");
    if (!d.cdi_problem.empty()) return Cat("DRA driver ", d.driver, ": ", d.cdi_problem);
    if (!d.api_problem.empty()) {
      return Cat("DRA driver ", d.driver, " cannot reach the API server: ", d.api_problem);
    }
    if (!d.slices_synced || !d.slices_in_sync) {
      return Cat("DRA driver ", d.driver, " has not published its ResourceSlices yet");
    }
  }
  return "";
}

std::string ReadyNotes(const View& v) {
  std::string notes;
  if (!v.config.rejected.empty()) Append(notes, v.config.rejected, "\n");
  for (const auto& e : v.skipped_entries) {
    if (!e.running_version_kept) continue;
    Append(notes, "config entry configList[", e.index, "] (", e.resource_name,
           ") is invalid and was skipped at the last reload; its running version keeps serving: "
           "fix it in the ConfigMap\n");
  }
  for (const auto& r : v.resources) {
    for (const auto& line : r.env_not_set) Append(notes, line, "\n");
    for (const auto& line : r.notes) Append(notes, line, "\n");
  }
  if (!v.dra) return notes;
  if (!v.dra->claim_status_problem.empty()) {
    Append(notes, "DRA driver ", v.dra->driver, ": ", v.dra->claim_status_problem, "\n");
  }
  if (v.dra->claim_status_given_up > 0) {
    Append(notes, "DRA driver ", v.dra->driver, ": the device status of ",
           v.dra->claim_status_given_up,
           " prepared claim(s) is not written: the API server refused it (the log names "
           "each claim)\n");
  }
  for (const auto& [field, gate] : v.dra->dropped_fields) {
    if (field.starts_with("ResourceClaim ")) {
      Append(notes, "DRA driver ", v.dra->driver, ": the API server does not keep ", field,
             " (feature gate ", gate, "): claims' device status is not reported\n");
    }
  }
  for (const auto& f : v.dra->model_fallbacks) {
    Append(notes, "DRA pool ", f.resource, " is published as ", f.published, ", not ", f.configured,
           ": this API server does not keep consumable capacity "
           "(feature gate DRAConsumableCapacity)\n");
  }
  return notes;
}

}  // namespace rdmadp::metrics
