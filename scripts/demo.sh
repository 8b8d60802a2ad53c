#!/usr/bin/env bash
# Runs the plugin's main job on a built-in demo node: a fake sysfs with four ConnectX HCAs
# and a kubelet simulator. Prints what the kubelet saw: registrations, capacity, one
# allocation (device nodes and environment), and a clean SIGTERM shutdown.
# Builds only what the demo needs (the plugin and the demo program, not the tests,
# benchmarks and fuzzers): on a fresh machine its output is minutes away, not ten.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --demo
# Its own directory, built without optimisation or debug info (the demo's speed is not the
# point; the compiler's is): scripts/test.sh's build/ is left as it is.
BUILD_DIR=${BUILD_DIR:-build-demo}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-None}" >/dev/null
cmake --build "$BUILD_DIR" -j"${JOBS:-$(nproc)}" --target rdmadp-demo k8s-rdma-shared-dp
exec "$BUILD_DIR/rdmadp-demo"  # a relative or an absolute BUILD_DIR
