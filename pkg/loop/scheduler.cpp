#include "pkg/loop/scheduler.h"

#include <cstdio>
#include <cstdlib>

namespace rdmadp::loop {

void AssertOnLoop(const Scheduler& scheduler, std::source_location where) {
  if (scheduler.OnLoop()) return;
  std::fprintf(stderr, "%s:%u: %s ran off the loop thread\n", where.file_name(), where.line(),
               where.function_name());
  std::abort();
}

}  // namespace rdmadp::loop
