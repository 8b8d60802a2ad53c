#!/usr/bin/env bash
# Configures and builds everything (plugin, tests, demo) into build/ (or $BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
./scripts/install-deps.sh
# WERROR=ON in the environment makes warnings errors (CI does; off by default for other
# compilers). Not RDMADP_*: the plugin reads those as its flags and warns of unknown ones.
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  ${WERROR:+-DRDMADP_WERROR="$WERROR"} "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"${JOBS:-2}"
