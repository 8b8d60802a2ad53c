#include "pkg/loop/heap_trimmer.h"

#include <malloc.h>

namespace rdmadp::loop {

HeapTrimmer::HeapTrimmer(Scheduler& loop, std::chrono::milliseconds delay)
    : loop_(loop), delay_(delay), timer_(loop.NewAlarm([this] { Trim(); })) {}

void HeapTrimmer::Activity() {
  if (armed_.exchange(true, std::memory_order_acq_rel)) return;
  loop_.Post([this] { timer_->ArmOnce(delay_); });
}

void HeapTrimmer::Trim() {
  // Cleared first: work that frees memory during the trim arms the next one.
  armed_.store(false, std::memory_order_release);
  ::malloc_trim(0);
  trims_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace rdmadp::loop
