#!/usr/bin/env bash
# Builds in Release mode and runs every benchmark. Each prints its figures against a
# baseline measured in the same run; at the end all figures are printed as one table and
# written to bench/results.json.
#   BENCH_IDLE_SECONDS=60   idle-CPU measurement window (default 60)
#   BENCH_SOAK_SECONDS=7200 also run the soak (hours; off by default): RSS slope, fds, threads
#
# scripts/bench.sh fleet: only the fleet against one API server (test/bench/fleet_bench.cpp,
# docs/performance.md), at FLEET_SIZES nodes (default "100 1000 5000": about 4, 4.5 and 6 min
# on 2 cores); each run's figures go to bench/fleet-<nodes>.txt. The script fails when any
# wave's budget is broken, naming the wave and the figure.
# FLEET_WAVES, FLEET_BUDGET, FLEET_*_S, FLEET_STEADY_RATE: see fleet_bench.cpp.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh >/dev/null
BUILD_DIR=${BUILD_DIR:-build-release}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ "${1:-}" = fleet ]; then
  cmake --build "$BUILD_DIR" -j"${JOBS:-2}" --target fleet_bench
  mkdir -p bench
  status=0
  for nodes in ${FLEET_SIZES:-100 1000 5000}; do
    echo "== fleet: $nodes nodes"
    "$BUILD_DIR/test/fleet_bench" "$nodes" | tee "bench/fleet-$nodes.txt" || status=1
  done
  exit $status
fi
cmake --build "$BUILD_DIR" -j"${JOBS:-2}" --target k8s-rdma-shared-dp alloc_bench rescan_bench \
  usage_bench lifecycle_bench registration_bench soak_bench lifecycle_e2e_test dra_bench \
  share_bench

mkdir -p bench
results=$(mktemp)
trap 'rm -f "$results"' EXIT
export BENCH_RESULTS="$results"

echo "== rescan (fake sysfs trees on tmpfs, as sysfs is in memory)"
TMPDIR=/dev/shm "$BUILD_DIR/test/rescan_bench"
echo "== per-container RDMA use: one sample (cgroup tree and links on tmpfs, as cgroupfs is in memory)"
TMPDIR=/dev/shm "$BUILD_DIR/test/usage_bench"
echo "== start, recovery, change propagation, big pools"
"$BUILD_DIR/test/lifecycle_bench"
echo "== registrations per kubelet restart and zero-allocatable time, per kubelet era and mode"
"$BUILD_DIR/test/registration_bench"
echo "== lifecycle e2e group, ${BENCH_LIFECYCLE_RUNS:-20} runs in a row (other cores busy)"
if BUILD_DIR="$BUILD_DIR" ./scripts/lifecycle-loop.sh "${BENCH_LIFECYCLE_RUNS:-20}" | tee /dev/stderr |
    tail -n 1 | grep -q ', 0 failed'; then loop_verdict=ok; else loop_verdict=MISSED; fi
loop_failed=$(grep -c FAILED "$(ls -td /tmp/rdmadp-loop-* | head -n 1)/summary" || true)
printf 'lifecycle e2e	failed runs of %s	%s			0	%s\n' "${BENCH_LIFECYCLE_RUNS:-20}" \
  "$loop_failed" "$loop_verdict" >>"$results"
echo "== Allocate latency and footprint (idle window ${BENCH_IDLE_SECONDS:-60} s)"
"$BUILD_DIR/test/alloc_bench"
echo "== DRA front end: wipe -> slices back, Prepare latency, idle API writes"
"$BUILD_DIR/test/dra_bench"
echo "== 8,000 shares on a node (8 HCAs x 1,000): both front ends"
"$BUILD_DIR/test/share_bench"
if [ -n "${BENCH_SOAK_SECONDS:-}" ]; then
  echo "== soak, ${BENCH_SOAK_SECONDS} s of mixed load"
  "$BUILD_DIR/test/soak_bench" "$BENCH_SOAK_SECONDS"
fi

machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), \
$(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r)"
date=$(date -u +%Y-%m-%d)
echo
echo "k8s-rdma-shared-dp benchmarks, $date, $machine, Release build"
{
  printf 'benchmark\tmetric\tvalue\tunit\tbaseline (same run)\ttarget\tverdict\n'
  cat "$results"
} | awk -F'\t' 'BEGIN { OFS = " | " } { print "| " $1, $2, $3 " " $4, $5, $6, $7 " |" }
               NR == 1 { print "|---|---|---|---|---|---|" }'

# JSON: one object per figure.
awk -F'\t' -v date="$date" -v machine="$machine" '
  function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
  BEGIN { printf "{\n  \"date\": \"%s\",\n  \"machine\": \"%s\",\n  \"results\": [", date, esc(machine) }
  { printf "%s\n    {\"benchmark\": \"%s\", \"metric\": \"%s\", \"value\": %s, \"unit\": \"%s\", \"baseline\": \"%s\", \"target\": \"%s\", \"verdict\": \"%s\"}",
      (NR > 1 ? "," : ""), esc($1), esc($2), $3, esc($4), esc($5), esc($6), esc($7) }
  END { print "\n  ]\n}" }' "$results" > bench/results.json
echo
echo "wrote bench/results.json ($(grep -c '"benchmark"' bench/results.json) figures)"
