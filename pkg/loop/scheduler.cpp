#include "pkg/loop/scheduler.h"

#include <cstdio>
#include <cstdlib>

namespace rdmadp::loop {

void AssertOnLoop(const Scheduler& scheduler, const char* file, int line) {
  if (scheduler.OnLoop()) return;
  std::fprintf(stderr, "%s:%d: a loop-thread-only function ran on another thread\n", file, line);
  std::abort();
}

}  // namespace rdmadp::loop
