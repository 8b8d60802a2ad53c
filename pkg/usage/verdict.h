// The verdict on whether a container uses the HCAs it was given (docs/observability.md,
// "The verdict"). A container that has held an allocation longer than a grace period and
// whose processes hold no queue pair on any of its HCAs is *allocated but unused*: the job
// fell back to TCP, or never meant to use RDMA. Contexts alone never count as use: NCCL
// opens one on every HCA it sees, and keeps it while it runs on sockets.
//
// Two sources, the better first:
//  - queue pairs by owner, from the kernel's resource tracking (NETLINK_RDMA QP dumps),
//    which needs the container's PIDs as the host numbers them (the host PID namespace) and
//    does not see QPs made through mlx5 DevX;
//  - the cgroup's rdma counts (rdma.current): `hca_object` counts every verbs object,
//    DevX's too, but not by kind, so under this source any object beyond the contexts
//    counts as use (a job that only registered memory reads as using RDMA).
// Use seen by either is use (a DevX QP shows only in the cgroup); *unused* needs every
// source there is to show none. With neither, the verdict is unknown, never a guess. Pure:
// the caller passes the time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rdmadp::usage {

using Clock = std::chrono::steady_clock;

// What one sample saw of one container, summed over the HCAs of its allocations.
struct UseSample {
  std::optional<int64_t> qps;          // nullopt: no source saw its processes' QPs
  std::optional<int64_t> hca_handles;  // nullopt: no rdma controller in its cgroup
  std::optional<int64_t> hca_objects;
  // How long the container has run (since its kubelet log link was made), where known: a
  // container first seen starts its grace that far back, so a restart of ours does not
  // restart every container's grace.
  Clock::duration age{};
};

enum class Verdict { kInGrace, kUsed, kUnused, kUnknown };
enum class UseSource { kQueuePairs, kCgroupObjects, kNone };
std::string_view VerdictName(Verdict verdict);     // "in grace", "used", "unused", "unknown"
std::string_view UseSourceName(UseSource source);  // "qp", "cgroup", "none"

struct Judgement {
  Verdict verdict = Verdict::kUnknown;
  UseSource source = UseSource::kNone;
  bool operator==(const Judgement&) const = default;
};

// `held`: how long the container has held the allocation.
Judgement Judge(const UseSample& sample, Clock::duration held, Clock::duration grace);

// Verdicts over time, by container (any stable key: usage_view.h's UseKey). Each
// sampling round hands in every container that holds an allocation now; a container seen
// for the first time starts its grace then (less its age); one missing from a round is forgotten
// (its pod went, and its series with it). Memory: one entry per container of the last round.
class VerdictBook {
 public:
  struct Change {
    std::string key;
    std::optional<Judgement> before;  // nullopt: first seen
    Judgement after;
  };
  struct Entry {
    Clock::time_point since;  // holding the allocation since (first seen, less its age)
    Judgement judgement;
  };

  // The verdicts that changed (a container's first verdict included), in key order; each
  // is a warning line at most, never one per sample.
  // `graces`: a grace of its own for some keys (their entries'), `grace` for the rest.
  std::vector<Change> Round(Clock::time_point now, const std::map<std::string, UseSample>& round,
                            Clock::duration grace,
                            const std::map<std::string, Clock::duration>& graces = {});
  const std::map<std::string, Entry>& entries() const { return entries_; }

 private:
  std::map<std::string, Entry> entries_;
};

}  // namespace rdmadp::usage
