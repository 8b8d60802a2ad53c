#!/usr/bin/env bash
# Prints the project's version: the one number in the tree, CMakeLists.txt's
# `project(k8s-rdma-shared-dp VERSION x.y.z ...)`. The binary, the image's labels and tag,
# the manifests and the docs follow it (scripts/version-check.sh); the release workflow
# tags v<x.y.z> from it.
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
version=$(sed -n 's/^project(k8s-rdma-shared-dp VERSION \([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)[ )].*/\1/p' \
  "$root/CMakeLists.txt")
[ -n "$version" ] || { echo "version.sh: no project(k8s-rdma-shared-dp VERSION x.y.z) in $root/CMakeLists.txt" >&2; exit 1; }
echo "$version"
