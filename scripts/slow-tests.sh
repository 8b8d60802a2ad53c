#!/usr/bin/env bash
# The suites that wait out real timeouts or repeat for every release (label "slow", ~5 min):
# the DRA publisher and driver suites against the fake kube-apiserver of every release
# (test/CMakeLists.txt).
# CI runs them beside scripts/test.sh, on the build it made first (BUILT=1: nothing is built
# here, so the two never run the build at once in one directory).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${BUILT:-}" = 1 ] || ./scripts/build.sh
cd build
# Two at a time, as scripts/test.sh runs the rest: these suites mostly wait on the fake API
# server's and the plugin's real seconds, not on the cores.
ctest --output-on-failure -j2 -L slow "$@"
