#!/usr/bin/env bash
# Builds and runs every test: unit tests per module and the end-to-end suite (the real
# binary against the kubelet simulator on fake nodes). The suites labelled "slow" (minutes of
# the kubelet's and the API server's own time) run in scripts/slow-tests.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
cd build
ctest --output-on-failure -j2 -LE slow "$@"
