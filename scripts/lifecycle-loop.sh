#!/usr/bin/env bash
# Runs the lifecycle end-to-end group (every kubelet era) RUNS times in a row on copies of
# the binaries, with the machine's other cores kept busy, and prints each run and the total
# failures (want 0). Usage: scripts/lifecycle-loop.sh [RUNS=20] [PARALLEL=1]
# PARALLEL>1 runs that many loops side by side instead of busy-looping the other cores.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-20}
PARALLEL=${2:-1}
BUILD_DIR=${BUILD_DIR:-build}
[ -x "$BUILD_DIR/test/lifecycle_e2e_test" ] || ./scripts/build.sh >/dev/null
work=$(mktemp -d /tmp/rdmadp-loop-XXXXXX)
cp "$BUILD_DIR/test/lifecycle_e2e_test" "$BUILD_DIR/k8s-rdma-shared-dp" "$work/"
export TEST_PLUGIN_BINARY="$work/k8s-rdma-shared-dp"
hogs=()
if [ "$PARALLEL" -le 1 ]; then
  for _ in $(seq 2 "$(nproc)"); do (while :; do :; done) & hogs+=($!); done
fi
trap 'for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done' EXIT
run() {  # run <index>
  local log="$work/run-$1.log" start=$SECONDS
  if "$work/lifecycle_e2e_test" >"$log" 2>&1; then
    echo "run $1: ok ($((SECONDS - start)) s)"
  else
    echo "run $1: FAILED ($((SECONDS - start)) s): $(grep -E '^\[  FAILED  \] Eras' "$log" | head -n 3 | sed 's/, where.*//' | tr '\n' ' ')"
  fi
}
seq 1 "$RUNS" | xargs -P "$PARALLEL" -I{} bash -c "$(declare -f run); work=$work; run {}" | tee "$work/summary"
failed=$(grep -c FAILED "$work/summary" || true)
echo "lifecycle e2e loop: $RUNS runs, $failed failed (logs in $work)"
[ "$failed" -eq 0 ]
