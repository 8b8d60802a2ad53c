// How the process sets glibc's allocator up, first thing in main, before any thread exists.
//
// - glibc's per-thread caches (tcache) off. Each thread keeps up to 7 freed blocks of every
//   small size for itself, and a thread that frees a size it seldom allocates keeps those
//   blocks for good: in a 45-minute soak the bytes malloc counts as in use grew 0.10 MiB/h
//   with the caches and 0.00 without (same build, same load, same window; RSS 0.13 against
//   0.03 MiB/h), and the heap after 100,000 Allocates was 0.25 MiB smaller without them,
//   Allocate p99 unchanged (alloc_bench). glibc reads this setting only when a program starts
//   (GLIBC_TUNABLES), so the process executes its own file again with it set: same pid, name,
//   arguments and environment otherwise. An operator's own glibc.malloc.tcache_count wins.
// - One arena, not one per thread that allocates (M_ARENA_MAX 1): each arena keeps its own
//   free and partly used pages, ~0.7 MiB over the gRPC threads of four resources, while the
//   threads seldom allocate at the same moment. An operator's MALLOC_ARENA_MAX wins.
//
// Threads: main thread only, before any other thread starts.
#pragma once

#include <optional>
#include <string>

namespace rdmadp::manager {

// The GLIBC_TUNABLES value that turns the per-thread caches off while keeping every other
// setting in `current` (nullptr: unset), or nullopt when `current` already sets
// glibc.malloc.tcache_count (whatever the value).
std::optional<std::string> TunablesWithoutThreadCaches(const char* current);

// Executes the program's own file (/proc/self/exe resolved) again with argv when GLIBC_TUNABLES
// needs the setting above (does not return then), and sets the arena limit. If that execution
// fails, prints a one-line warning and goes on with glibc's caches.
void SetUpMalloc(char** argv);

}  // namespace rdmadp::manager
