#!/usr/bin/env bash
# The image's runtime stage without a Docker engine: the binary's library closure, copied
# by scripts/copy-closure.sh (the Dockerfile's own step) into an empty root, must run
# --version and discover under chroot, with no file outside that root.
set -euo pipefail
binary=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
root=$(mktemp -d /tmp/rdmadp-closure-XXXXXX)
trap 'rm -rf "$root"' EXIT
"$here/scripts/copy-closure.sh" "$binary" "$root" --with-base
ldconfig -r "$root"  # what the Dockerfile's `RUN ldconfig` does in the image
version=$(chroot "$root" /usr/bin/k8s-rdma-shared-dp --version)
[[ $version == "k8s-rdma-shared-dp version:"* ]] || { echo "bad --version: $version"; exit 1; }
# No /sys in the root: discover reports an empty node, and must still run to the end.
out=$(chroot "$root" /usr/bin/k8s-rdma-shared-dp discover --config-file=/none 2>&1)
grep -q "PCI network function" <<<"$out" || { echo "discover output: $out"; exit 1; }
# Libraries loaded with dlopen() (libcurl by the DRA front end, libibverbs where uverbs
# devices exist): the loader must resolve each and all it needs inside the root.
loader=$(ldd "$binary" | awk '/ld-linux/ && !n++ {print $1}')
for lib in libcurl.so.4 libibverbs.so.1; do
  chroot "$root" "$loader" --list "/usr/lib64/k8s-rdma-shared-dp/$lib" >/dev/null ||
    { echo "$lib does not resolve inside the image root"; exit 1; }
done
if [ -n "$(find "$root" -xtype l)" ]; then echo "dangling links"; exit 1; fi
echo "closure: $(find "$root" -type f | wc -l) files, $(du -sh "$root" | cut -f1); --version and discover ran under chroot"
