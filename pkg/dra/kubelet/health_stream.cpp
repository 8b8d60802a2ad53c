#include "pkg/dra/kubelet/health_stream.h"

#include <algorithm>

namespace rdmadp::dra {

HealthPayload HealthHub::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

void HealthHub::Publish(const HealthPayload& next) {
  std::vector<std::shared_ptr<HealthStreamBase>> streams;
  {
    std::lock_guard lock(mu_);
    current_ = next;
    streams = streams_;
  }
  for (const auto& s : streams) s->Offer(next);
}

void HealthHub::EndAll() {
  std::vector<std::shared_ptr<HealthStreamBase>> streams;
  {
    std::lock_guard lock(mu_);
    ending_ = true;
    streams = streams_;
  }
  for (const auto& s : streams) s->End();
}

size_t HealthHub::open_streams() const {
  std::lock_guard lock(mu_);
  return streams_.size();
}

uint64_t HealthHub::streams_opened() const {
  std::lock_guard lock(mu_);
  return opened_;
}

void HealthHub::Opened(const std::shared_ptr<HealthStreamBase>& s) {
  HealthPayload first;
  bool ending = false;
  std::shared_ptr<HealthStreamBase> evicted;
  {
    std::lock_guard lock(mu_);
    ++opened_;
    ending = ending_;
    if (!ending) {
      if (streams_.size() >= kMaxHealthStreams) {
        evicted = streams_.front();
        streams_.erase(streams_.begin());
      }
      streams_.push_back(s);
    }
    first = current_;
  }
  if (evicted) evicted->End();
  if (ending) {
    s->End();
  } else {
    s->Offer(first);  // the full list on connect
  }
}

void HealthHub::Closed(const HealthStreamBase* s) {
  std::lock_guard lock(mu_);
  streams_.erase(
      std::remove_if(streams_.begin(), streams_.end(), [s](const auto& p) { return p.get() == s; }),
      streams_.end());
}

}  // namespace rdmadp::dra
