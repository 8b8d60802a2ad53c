#!/usr/bin/env bash
# Installs every build and test dependency of k8s-rdma-shared-dp from Debian packages.
# Safe to run repeatedly; skips apt entirely when everything is already present.
# --demo: only what scripts/demo.sh builds (the plugin and the demo): no Go, runc, Node.js.
set -euo pipefail
demo=false
[ "${1:-}" = "--demo" ] && demo=true

build_packages=(
  build-essential cmake pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libnl-3-dev libnl-route-3-dev
  libibverbs-dev
  libyaml-cpp-dev
  # The DRA front end's API objects (ResourceSlice, DeviceClass) are JSON.
  nlohmann-json3-dev
  # The DRA front end's HTTPS client to the API server: libcurl, loaded (dlopen) only when a
  # resource uses the DRA front end, so the device-plugin front end never pays for TLS.
  libcurl4-openssl-dev
  libgtest-dev libgmock-dev
  # The metrics tests' HTTP client (the plugin serves HTTP itself); the demo's kubelet
  # simulator links it too.
  libcpp-httplib-dev
)

packages=(
  "${build_packages[@]}"
  iproute2 util-linux procps
  # The CDI consumer test: the reference CDI Go library, as containerd/CRI-O/podman embed it.
  golang-go golang-github-container-orchestrated-devices-container-device-interface-dev
  # The metrics test: Prometheus's own text-format parser.
  golang-github-prometheus-common-dev
  # The benchmark's Go baseline: a bare grpc-go server.
  golang-google-grpc-dev
  # The DaemonSet's container created by the real runtime (runc_daemonset_test).
  runc
  # scripts/lint.sh (CI): the tree is formatted with Debian 12's clang-format 14.
  clang-format clang-tidy
  # CI links its sanitizer builds with lld (LINKER=lld, scripts/build.sh).
  lld
)

# The manifest tests run on Node.js (kubernetes-models validates against the API schema).
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
$demo && packages=("${build_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages already installed"
else
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

$demo && exit 0
# Node modules for test/manifests, exactly as locked.
manifests="$(dirname "$0")/../test/manifests"
if [ ! -f "$manifests/node_modules/.package-lock.json" ] ||
   [ "$manifests/package-lock.json" -nt "$manifests/node_modules/.package-lock.json" ]; then
  echo "install-deps: npm ci in test/manifests"
  (cd "$manifests" && npm ci --no-audit --no-fund --loglevel=error)
fi
