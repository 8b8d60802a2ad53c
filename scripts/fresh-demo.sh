#!/usr/bin/env bash
# Measures the README's first command the way a newcomer meets it: a fresh Debian 12 root
# (debootstrap bookworm, the default variant, plus git and sudo), this commit cloned into
# it, and `time ./scripts/demo.sh` run inside it with chroot: apt's update and installs,
# the build and the demo's output all counted. Needs root and a Debian mirror; the root
# takes ~1 GiB under $FRESH_DIR (default /var/tmp/rdmadp-fresh-demo, removed at the end).
#   MIRROR=http://deb.debian.org/debian   where debootstrap and apt fetch from
#   KEEP=1                                leave the root behind
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "fresh-demo: needs root (debootstrap, chroot)" >&2; exit 1; }
mirror=${MIRROR:-http://deb.debian.org/debian}
dir=${FRESH_DIR:-/var/tmp/rdmadp-fresh-demo}
root="$dir/root"
command -v debootstrap >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
}
# Never delete through a mount: the host's /dev and /sys are bound into the root.
mounted() { findmnt -rn -o TARGET | grep -q "^$root/"; }
remove_root() {
  for m in proc sys dev; do umount -R "$root/$m" 2>/dev/null || true; done
  if mounted; then
    echo "fresh-demo: $root still has mounts (a process left in the chroot?); not removed" >&2
    return 1
  fi
  rm -rf --one-file-system "$dir"
}
cleanup() { [ -n "${KEEP:-}" ] || remove_root; }
trap cleanup EXIT
remove_root && mkdir -p "$dir"
echo "fresh-demo: debootstrap bookworm into $root (not counted)"
debootstrap --include=git,ca-certificates,sudo bookworm "$root" "$mirror" >"$dir/debootstrap.log"
# What a Debian 12 machine's sources say, and nothing apt has read yet.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${mirror%/debian}/debian-security bookworm-security main
EOF
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
# Slaves: unmounting the copies never propagates back to the host's mounts.
mount --make-rslave "$root/sys"
mount --make-rslave "$root/dev"
git clone -q "$PWD" "$root/root/k8s-rdma-shared-dp"
echo "fresh-demo: ./scripts/demo.sh on the fresh root (counted from here)"
start=$(date +%s.%N)
chroot "$root" /bin/bash -lc 'cd /root/k8s-rdma-shared-dp && ./scripts/demo.sh' >"$dir/demo.log" 2>&1 ||
  { tail -n 30 "$dir/demo.log"; echo "fresh-demo: demo.sh failed" >&2; exit 1; }
end=$(date +%s.%N)
tail -n 3 "$dir/demo.log"
awk -v s="$start" -v e="$end" 'BEGIN { t = int(e - s + 0.5); printf "fresh-demo: %d min %d s from a fresh Debian 12 to the demo'"'"'s last line, apt included (%d cores)\n", t / 60, t % 60, '"$(nproc)"' }'
