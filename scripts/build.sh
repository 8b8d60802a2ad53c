#!/usr/bin/env bash
# Configures and builds everything (plugin, tests, demo) into build/ (or $BUILD_DIR).
# Environment: BUILD_TYPE (RelWithDebInfo), JOBS (2), WERROR=ON (warnings are errors),
# SANITIZE (e.g. address,undefined: every target built with those sanitizers; CI builds so,
# docs/development.md "CI"), OPT_FLAGS (the build type's optimisation and debug flags
# instead of CMake's; "-O1 -g1" by default with SANITIZE, as the sanitizers' documentation
# suggests), LINKER (e.g. lld: -fuse-ld=lld for every program; CI links so), UNITY_TESTS=ON
# (each test target's sources compiled as one; CI builds so).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
./scripts/install-deps.sh
# Not RDMADP_*: the plugin reads those as its flags and warns of unknown ones.
flags=()
[ -z "${SANITIZE:-}" ] || flags+=("-DRDMADP_SANITIZE=$SANITIZE")
[ -z "${LINKER:-}" ] || flags+=("-DRDMADP_LINKER=$LINKER")
[ -z "${UNITY_TESTS:-}" ] || flags+=("-DRDMADP_UNITY_TESTS=$UNITY_TESTS")
opt=${OPT_FLAGS:-${SANITIZE:+-O1 -g1}}
if [ -n "$opt" ]; then
  upper=$(printf '%s' "$BUILD_TYPE" | tr '[:lower:]' '[:upper:]')
  flags+=("-DCMAKE_CXX_FLAGS_$upper=$opt -DNDEBUG")
fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  ${WERROR:+-DRDMADP_WERROR="$WERROR"} ${flags[@]+"${flags[@]}"} "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"${JOBS:-2}"
