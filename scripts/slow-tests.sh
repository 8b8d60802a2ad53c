#!/usr/bin/env bash
# The suites that wait out real timeouts or repeat for every release (label "slow", ~10 min):
# the DRA publisher and driver suites against the fake kube-apiserver of every release
# (test/CMakeLists.txt).
# CI runs them after scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
cd build
# Two at a time, as scripts/test.sh runs the rest: these suites mostly wait on the fake API
# server's and the retry grid's real seconds, not on the cores.
ctest --output-on-failure -j2 -L slow "$@"
