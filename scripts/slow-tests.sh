#!/usr/bin/env bash
# The suites that wait out real timeouts (label "slow", ~3 min): the DRA health stream's
# 30 s "Unknown" timeout and a minute without the API server (test/e2e/dra_slow_test.cpp).
# CI runs them after scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
cd build
ctest --output-on-failure -L slow "$@"
