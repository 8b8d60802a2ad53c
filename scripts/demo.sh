#!/usr/bin/env bash
# Runs the plugin's main job on a built-in demo node: a fake sysfs with four ConnectX HCAs
# and a kubelet simulator. Prints what the kubelet saw: registrations, capacity, one
# allocation (device nodes and environment), and a clean SIGTERM shutdown.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
exec ./build/rdmadp-demo
