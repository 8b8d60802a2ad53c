#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/metrics/prometheus.h"

namespace rdmadp::metrics {
namespace {

using ::testing::HasSubstr;

View Sample() {
  View v;
  v.version = "1.2.3";
  v.registration_mode = "kubelet";
  ResourceView r;
  r.resource = "rdma/hca_a";
  r.hcas = 2;
  r.slots = 1000;
  r.healthy_slots = 1000;
  r.registered = true;
  r.open_streams = 1;
  r.allocations = 7;
  r.registrations = 2;
  v.resources.push_back(r);
  v.counters.rescans = 4;
  v.counters.rescan_seconds_sum = 0.002;
  return v;
}

TEST(Prometheus, FamiliesAndSamples) {
  const std::string text = FormatPrometheus(Sample());
  EXPECT_THAT(text, HasSubstr("# TYPE rdma_shared_dp_slots gauge\n"));
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_slots{resource=\"rdma/hca_a\"} 1000\n"));
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_healthy_slots{resource=\"rdma/hca_a\"} 1000\n"));
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_allocations_total{resource=\"rdma/hca_a\"} 7\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE rdma_shared_dp_allocations_total counter\n"));
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_rescan_duration_seconds_count 4\n"));
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_rescan_duration_seconds_sum 0.002\n"));
  EXPECT_THAT(text, HasSubstr("process_resident_memory_bytes "));
  EXPECT_THAT(text, HasSubstr("process_start_time_seconds "));
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_build_info{version=\"1.2.3\",mode=\"kubelet\"} 1"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("rdma_shared_dp_last_error_info{")));
}

TEST(Prometheus, LabelValuesAreEscaped) {
  View v = Sample();
  v.skipped_entries.push_back({3, "bad \"quote\" \\ and\nnewline"});
  const std::string text = FormatPrometheus(v);
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_config_entry_skipped{entry=\"configList[3]\","
                              "resource_name=\"bad \\\"quote\\\" \\\\ and\\nnewline\"} 1"));
}

// A Unix timestamp printed with %.6g was off by up to an hour; errors carry a class label,
// never free text (a new series per message).
TEST(Prometheus, ExactTimestampsAndBoundedErrorLabels) {
  View v = Sample();
  v.counters.errors = 3;
  v.counters.errors_by_class = {{"cdi", 1}, {"registration", 2}};
  v.counters.last_error_unix_seconds = 1795400123.25;
  v.counters.rescans_by_trigger = {{"periodic", 3}, {"link", 1}};
  const std::string text = FormatPrometheus(v);
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_last_error_timestamp_seconds 1795400123.25\n"));
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_errors_by_class_total{class=\"registration\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_rescans_total{trigger=\"link\"} 1\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("message=")));
}

// A DRA pool published in another model than configured is a gauge and a line in a ready
// /readyz body, never silent (docs/dra.md, "What the plugin does about it").
TEST(Prometheus, AModelFallbackIsAGaugeAndAReadyNote) {
  View v = Sample();
  EXPECT_EQ(ReadyNotes(v), "");
  v.dra.emplace();
  v.dra->driver = "rdma.example.com";
  v.dra->model_fallbacks.push_back({"rdma/x", "perHca", "slots"});
  EXPECT_THAT(FormatPrometheus(v),
              HasSubstr("rdma_shared_dp_dra_model_fallback{driver=\"rdma.example.com\","
                        "resource=\"rdma/x\",configured=\"perHca\",published=\"slots\"} 1\n"));
  EXPECT_EQ(ReadyNotes(v),
            "DRA pool rdma/x is published as slots, not perHca: this API server does not keep "
            "consumable capacity (feature gate DRAConsumableCapacity)\n");
}

// A resource's notes (perHca's shares cut, IDs of the other deviceModel held) are lines of a
// ready /readyz body.
TEST(Prometheus, AResourcesNotesAreReadyNotes) {
  View v = Sample();
  ASSERT_FALSE(v.resources.empty());
  v.resources[0].notes = {"rdma/a: advertising 3000 of the 100000 shares", "rdma/a: second"};
  EXPECT_EQ(ReadyNotes(v), "rdma/a: advertising 3000 of the 100000 shares\nrdma/a: second\n");
}

// Claims' device status that is not written is never silent: a refusal and a server that
// drops status.devices are lines of a ready /readyz body, the applies a counter by code, the
// backlog a gauge (docs/dra.md, "Device status in the claim").
TEST(Prometheus, ClaimStatusNotWrittenIsAReadyNoteAndSeries) {
  View v = Sample();
  v.dra.emplace();
  v.dra->driver = "rdma.example.com";
  v.dra->claim_status_applies = {{200, 5}, {403, 1}};
  v.dra->claim_status_pending = 2;
  v.dra->claim_status_given_up = 1;
  v.dra->claim_status_problem = "ResourceClaim ml/a: device status not written (RBAC)";
  v.dra->dropped_fields.emplace_back("ResourceClaim status.devices",
                                     "DRAResourceClaimDeviceStatus");
  const std::string text = FormatPrometheus(v);
  EXPECT_THAT(text,
              HasSubstr("rdma_shared_dp_dra_claim_status_applies_total{driver=\"rdma.example.com\","
                        "code=\"403\"} 1\n"));
  EXPECT_THAT(
      text, HasSubstr("rdma_shared_dp_dra_claim_status_pending{driver=\"rdma.example.com\"} 2\n"));
  EXPECT_EQ(ReadyNotes(v),
            "DRA driver rdma.example.com: ResourceClaim ml/a: device status not written (RBAC)\n"
            "DRA driver rdma.example.com: the device status of 1 prepared claim(s) is not "
            "written: the API server refused it (the log names each claim)\n"
            "DRA driver rdma.example.com: the API server does not keep ResourceClaim "
            "status.devices (feature gate DRAResourceClaimDeviceStatus): claims' device status "
            "is not reported\n");
}

// Per-container series: one line per label set. Two containers of one name (a finished pod
// and its namesake, which a kubelet before 1.34 lists both) would make Prometheus refuse
// the whole page; the first is kept.
TEST(Prometheus, PerContainerSeriesNeverRepeatALabelSet) {
  View v;
  v.rdma_use.emplace();
  ContainerRdmaView c{.pod_namespace = "ns",
                      .pod = "web-0",
                      .container = "c",
                      .resources = {"rdma/a"},
                      .unused = true,
                      .objects = {{"mlx5_0", "hca_handle", 1}}};
  v.rdma_use->containers = {c, c};
  v.rdma_use->containers[1].unused = false;
  v.rdma_use->containers[1].objects[0].count = 7;
  v.rdma_use->foreign = {c, c};
  const std::string text = FormatPrometheus(v);
  const std::string unused =
      "rdma_shared_dp_pod_rdma_unused{namespace=\"ns\",pod=\"web-0\",container=\"c\","
      "resource=\"rdma/a\"} ";
  EXPECT_THAT(text, HasSubstr(unused + "1\n"));
  EXPECT_THAT(text, Not(HasSubstr(unused + "0\n")));
  const std::string objects =
      "{namespace=\"ns\",pod=\"web-0\",container=\"c\",device=\"mlx5_0\",type=\"hca_handle\"} ";
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_pod_rdma_objects" + objects + "1\n"));
  EXPECT_THAT(text, Not(HasSubstr("rdma_shared_dp_pod_rdma_objects" + objects + "7\n")));
  size_t foreign = 0;
  for (size_t at = 0;
       (at = text.find("rdma_shared_dp_foreign_rdma_objects{", at)) != std::string::npos; ++at) {
    ++foreign;
  }
  EXPECT_EQ(foreign, 1u);
}

TEST(Readiness, NeedsRegistrationAndAStream) {
  View v = Sample();
  EXPECT_EQ(NotReadyReason(v), "");
  v.resources[0].open_streams = 0;
  EXPECT_EQ(NotReadyReason(v), "rdma/hca_a has no ListAndWatch stream open");
  v.resources[0].registered = false;
  EXPECT_EQ(NotReadyReason(v), "rdma/hca_a is not registered with the kubelet");
  v.resources[0].problem = "its CDI spec could not be written: No space left on device";
  EXPECT_EQ(NotReadyReason(v),
            "rdma/hca_a: its CDI spec could not be written: No space left on device");
}

}  // namespace
}  // namespace rdmadp::metrics
