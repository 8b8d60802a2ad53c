#include "pkg/loop/malloc_setup.h"

#include <malloc.h>

#include <cstdlib>

namespace rdmadp::loop {

void SetUpMalloc() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) ::mallopt(M_ARENA_MAX, 1);
}

}  // namespace rdmadp::loop
