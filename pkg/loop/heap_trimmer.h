// Gives the heap pages freed by a burst of work back to the system once the burst is over.
// glibc keeps freed memory inside its arenas and returns only the top of each heap: a soak
// measured 1.9 MiB kept free beside 1.2 MiB in use (rdma_shared_dp_heap_free_bytes).
// malloc_trim(0) also returns the whole free pages inside every arena.
//
// Threads: Activity() from any thread (one atomic exchange; the first call since the last
// trim posts to the loop); the trim itself runs on the loop thread, `delay` after that first
// call. An idle process never wakes for it; a busy one trims at most once per `delay`.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "pkg/loop/scheduler.h"

namespace rdmadp::loop {

class HeapTrimmer {
 public:
  HeapTrimmer(Scheduler& loop, std::chrono::milliseconds delay);
  HeapTrimmer(const HeapTrimmer&) = delete;
  HeapTrimmer& operator=(const HeapTrimmer&) = delete;

  void Activity();
  uint64_t trims() const { return trims_.load(std::memory_order_relaxed); }

 private:
  void Trim();  // loop thread

  Scheduler& loop_;
  const std::chrono::milliseconds delay_;
  std::unique_ptr<Alarm> timer_;
  std::atomic<bool> armed_{false};
  std::atomic<uint64_t> trims_{0};
};

}  // namespace rdmadp::loop
