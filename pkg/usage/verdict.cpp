#include "pkg/usage/verdict.h"

namespace rdmadp::usage {

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kInGrace:
      return "in grace";
    case Verdict::kUsed:
      return "used";
    case Verdict::kUnused:
      return "unused";
    case Verdict::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view UseSourceName(UseSource source) {
  switch (source) {
    case UseSource::kQueuePairs:
      return "qp";
    case UseSource::kCgroupObjects:
      return "cgroup";
    case UseSource::kNone:
      break;
  }
  return "none";
}

Judgement Judge(const UseSample& sample, Clock::duration held, Clock::duration grace) {
  // Use seen by either source is use: the QP dumps miss DevX QPs (UCX's default on mlx5),
  // which the cgroup's objects count.
  if (sample.qps && *sample.qps > 0) return {Verdict::kUsed, UseSource::kQueuePairs};
  if (sample.hca_objects && *sample.hca_objects > 0) {
    return {Verdict::kUsed, UseSource::kCgroupObjects};  // contexts are hca_handle, not objects
  }
  if (!sample.qps && !sample.hca_objects) return {Verdict::kUnknown, UseSource::kNone};
  // No use in every source there is. A verdict only once the grace has passed: a job loads,
  // meets its peers and sets up its communicators first.
  const UseSource source = sample.qps ? UseSource::kQueuePairs : UseSource::kCgroupObjects;
  return {held >= grace ? Verdict::kUnused : Verdict::kInGrace, source};
}

std::vector<VerdictBook::Change> VerdictBook::Round(
    Clock::time_point now, const std::map<std::string, UseSample>& round, Clock::duration grace,
    const std::map<std::string, Clock::duration>& graces) {
  std::vector<Change> changes;
  std::map<std::string, Entry> next;
  for (const auto& [key, sample] : round) {
    auto old = entries_.find(key);
    const Clock::time_point since = old == entries_.end() ? now - sample.age : old->second.since;
    const auto own = graces.find(key);
    const Judgement judgement =
        Judge(sample, now - since, own == graces.end() ? grace : own->second);
    if (old == entries_.end()) {
      changes.push_back({key, std::nullopt, judgement});
    } else if (!(old->second.judgement == judgement)) {
      changes.push_back({key, old->second.judgement, judgement});
    }
    next.emplace(key, Entry{since, judgement});
  }
  entries_ = std::move(next);
  return changes;
}

}  // namespace rdmadp::usage
