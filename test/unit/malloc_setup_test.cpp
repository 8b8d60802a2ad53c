// The GLIBC_TUNABLES value the plugin restarts itself with: glibc's per-thread caches off,
// every other setting kept, and no restart when the operator has chosen a cache size.
#include "pkg/manager/malloc_setup.h"

#include <gtest/gtest.h>

namespace rdmadp::manager {
namespace {

TEST(MallocSetup, UnsetOrEmptyGetsTheCachesOff) {
  EXPECT_EQ(TunablesWithoutThreadCaches(nullptr), "glibc.malloc.tcache_count=0");
  EXPECT_EQ(TunablesWithoutThreadCaches(""), "glibc.malloc.tcache_count=0");
}

TEST(MallocSetup, OtherSettingsAreKeptInFront) {
  EXPECT_EQ(TunablesWithoutThreadCaches("glibc.malloc.mmap_threshold=65536"),
            "glibc.malloc.mmap_threshold=65536:glibc.malloc.tcache_count=0");
  EXPECT_EQ(TunablesWithoutThreadCaches("glibc.malloc.check=3:glibc.rtld.nns=8"),
            "glibc.malloc.check=3:glibc.rtld.nns=8:glibc.malloc.tcache_count=0");
}

TEST(MallocSetup, TheOperatorsCacheSizeWinsWherever) {
  EXPECT_EQ(TunablesWithoutThreadCaches("glibc.malloc.tcache_count=7"), std::nullopt);
  EXPECT_EQ(TunablesWithoutThreadCaches("glibc.malloc.check=3:glibc.malloc.tcache_count=0"),
            std::nullopt);
  EXPECT_EQ(TunablesWithoutThreadCaches("glibc.malloc.tcache_count=2:glibc.rtld.nns=8"),
            std::nullopt);
}

TEST(MallocSetup, SimilarNamesAreNotTheCacheCount) {
  // Another tunable whose name starts the same is not the setting: the restart still comes.
  EXPECT_EQ(TunablesWithoutThreadCaches("glibc.malloc.tcache_count_x=1"),
            "glibc.malloc.tcache_count_x=1:glibc.malloc.tcache_count=0");
  EXPECT_EQ(TunablesWithoutThreadCaches("glibc.malloc.tcache_max=64"),
            "glibc.malloc.tcache_max=64:glibc.malloc.tcache_count=0");
}

}  // namespace
}  // namespace rdmadp::manager
