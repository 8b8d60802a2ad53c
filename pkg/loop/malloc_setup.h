// How the process sets glibc's allocator up, first thing in main, before any thread exists.
//
// One arena, not one per thread that allocates (M_ARENA_MAX 1): each arena keeps its own free
// and partly used pages, ~0.7 MiB over the gRPC threads of four resources, while the threads
// seldom allocate at the same moment. The image and the DaemonSet set MALLOC_ARENA_MAX=1 (and
// GLIBC_TUNABLES=glibc.malloc.tcache_count=0: glibc's per-thread caches keep freed blocks for
// good in a thread that seldom allocates that size, and glibc reads that only at start), where
// an operator sees and can change them; this is the fallback for a binary started without
// them. An operator's MALLOC_ARENA_MAX wins.
//
// Threads: main thread only, before any other thread starts.
#pragma once

namespace rdmadp::loop {

void SetUpMalloc();

}  // namespace rdmadp::loop
