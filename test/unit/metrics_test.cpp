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
  EXPECT_THAT(text, HasSubstr("rdma_shared_dp_build_info{version=\"1.2.3\",mode=\"kubelet\"} 1"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("rdma_shared_dp_last_error_info{")));
}

TEST(Prometheus, LabelValuesAreEscaped) {
  View v = Sample();
  v.counters.last_error = "bad \"quote\" \\ and\nnewline";
  v.counters.errors = 1;
  const std::string text = FormatPrometheus(v);
  EXPECT_THAT(
      text,
      HasSubstr(
          "rdma_shared_dp_last_error_info{message=\"bad \\\"quote\\\" \\\\ and\\nnewline\"} 1"));
}

TEST(Readiness, NeedsRegistrationAndAStream) {
  View v = Sample();
  EXPECT_EQ(NotReadyReason(v), "");
  v.resources[0].open_streams = 0;
  EXPECT_EQ(NotReadyReason(v), "rdma/hca_a has no ListAndWatch stream open");
  v.resources[0].registered = false;
  EXPECT_EQ(NotReadyReason(v), "rdma/hca_a is not registered with the kubelet");
}

}  // namespace
}  // namespace rdmadp::metrics
