#!/usr/bin/env bash
# Regenerates cmd/k8s-rdma-shared-dp/hot-code.ld, the plugin's code layout.
#
# Every page of code the plugin touches is resident, and the kernel maps its neighbours with it
# (fault-around, 64 KiB), so code that runs is cheapest when it sits together. This script runs
# the Release binary under callgrind through the plugin's life as the benchmarks drive it, in
# two parts:
#   1. every day: start on a fake node, registration, ListAndWatch, 100,000 Allocates, idle
#      (alloc_bench);
#   2. events: kubelet restarts, SIGHUP reloads, port flaps, rescans and /metrics scrapes
#      (soak_bench, PROFILE_SOAK_SECONDS of it).
# The sections of the functions that ran are listed in a linker script, part 1 first, then
# what only part 2 ran, so a plugin that never sees an event never pages in its code
# (scripts/hot-code-layout.py finds the sections; cmd/k8s-rdma-shared-dp/CMakeLists.txt links
# with the script). A function missing from the list still works: it is only placed with the
# cold code. Re-run after large code changes; the figures these runs print are meaningless
# (the plugin runs ~50x slower under callgrind).
#
#   scripts/profile-link-order.sh      (~10 min; needs valgrind and python3)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-release}
PROFILE_SOAK_SECONDS=${PROFILE_SOAK_SECONDS:-150}
for tool in valgrind python3; do
  command -v $tool >/dev/null || { echo "profile-link-order: needs $tool (apt-get install $tool)" >&2; exit 1; }
done
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j"${JOBS:-2}" --target k8s-rdma-shared-dp alloc_bench soak_bench \
  >/dev/null

work=$(mktemp -d /tmp/rdmadp-profile-XXXXXX)
trap 'rm -rf "$work"' EXIT
binary=$(readlink -f "$BUILD_DIR/k8s-rdma-shared-dp")
for part in every-day events; do
  mkdir -p "$work/$part"
  # GLIBC_TUNABLES as the plugin sets it for itself: otherwise it would execute itself again
  # (malloc_setup.h), outside callgrind.
  cat >"$work/$part/plugin" <<WRAPPER
#!/bin/sh
exec env GLIBC_TUNABLES=glibc.malloc.tcache_count=0 valgrind --tool=callgrind --dump-instr=no --demangle=no \
  --callgrind-out-file=$work/$part/callgrind.%p $binary "\$@"
WRAPPER
  chmod +x "$work/$part/plugin"
done

echo "profile-link-order: every day (alloc_bench) under callgrind"
RDMADP_PLUGIN_BINARY="$work/every-day/plugin" BENCH_IDLE_SECONDS=5 BENCH_RESULTS=/dev/null \
  "$BUILD_DIR/test/alloc_bench" >"$work/every-day/log" 2>&1
echo "profile-link-order: events (soak_bench, ${PROFILE_SOAK_SECONDS} s) under callgrind"
RDMADP_PLUGIN_BINARY="$work/events/plugin" BENCH_RESULTS=/dev/null \
  "$BUILD_DIR/test/soak_bench" "$PROFILE_SOAK_SECONDS" >"$work/events/log" 2>&1

# Callgrind names each function once per file as "fn=(id) name" or "cfn=(id) name" (without
# its recursion suffix '2); the layout script finds the section of each by its address.
# The lists and the profiled link stay in $BUILD_DIR/profile, to lay out again by hand.
kept="$BUILD_DIR/profile"
mkdir -p "$kept"
cp "$binary" "$kept/k8s-rdma-shared-dp"
cp "$BUILD_DIR/k8s-rdma-shared-dp.map" "$kept/k8s-rdma-shared-dp.map"
for part in every-day events; do
  cat "$work/$part"/callgrind.* | sed -n 's/^c\{0,1\}fn=([0-9]*) //p' | sed "s/'[0-9]*\$//" |
    sort -u >"$kept/$part.ran"
done
python3 scripts/hot-code-layout.py "$kept/k8s-rdma-shared-dp" "$kept/k8s-rdma-shared-dp.map" \
  cmd/k8s-rdma-shared-dp/hot-code.ld "$kept/every-day.ran" "$kept/events.ran"
echo "profile-link-order: wrote cmd/k8s-rdma-shared-dp/hot-code.ld; rebuild to use it"
