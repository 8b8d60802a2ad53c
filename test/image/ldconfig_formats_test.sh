#!/usr/bin/env bash
# scripts/copy-closure.sh picks the libraries it loads with dlopen() from `ldconfig -p` by
# the ABI tag of the binary's libc, on any architecture (it once kept x86-64 only, so no
# arm64 image could be built). Listings as glibc prints them: Debian's multiarch
# layout (with a 32-bit copy listed first) and RHEL/UBI's, whose tags carry "OS ABI".
set -euo pipefail
pick="$(cd "$(dirname "$0")/../.." && pwd)/scripts/copy-closure.sh"
fail=0
expect() {  # expect NAME LIBC WANT <<< LISTING
  local got
  got=$("$pick" --pick libcurl.so.4 "$2")
  if [ "$got" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: got '$got', want '$3'"; fail=1; fi
}
expect "debian amd64, 32-bit copy listed first" /lib/x86_64-linux-gnu/libc.so.6 \
  /lib/x86_64-linux-gnu/libcurl.so.4 <<'L'
1234 libs found in cache `/etc/ld.so.cache'
	libcurl.so.4 (libc6) => /lib/i386-linux-gnu/libcurl.so.4
	libcurl.so.4 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcurl.so.4
	libc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6
	libc.so.6 (libc6) => /lib32/libc.so.6
L
expect "debian arm64" /lib/aarch64-linux-gnu/libc.so.6 /lib/aarch64-linux-gnu/libcurl.so.4 <<'L'
	libcurl.so.4 (libc6,AArch64) => /lib/aarch64-linux-gnu/libcurl.so.4
	libc.so.6 (libc6,AArch64) => /lib/aarch64-linux-gnu/libc.so.6
L
expect "ubi arm64, OS ABI in the tag" /lib64/libc.so.6 /lib64/libcurl.so.4 <<'L'
	libcurl.so.4 (libc6,AArch64, OS ABI: Linux 3.7.0) => /lib64/libcurl.so.4
	libc.so.6 (libc6,AArch64, OS ABI: Linux 3.7.0) => /lib64/libc.so.6
L
expect "ubi amd64, OS ABI in the tag" /lib64/libc.so.6 /lib64/libcurl.so.4 <<'L'
	libcurl.so.4 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib64/libcurl.so.4
	libc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib64/libc.so.6
	libc.so.6 (libc6, OS ABI: Linux 3.2.0) => /lib/libc.so.6
L
expect "not installed: nothing picked" /lib/x86_64-linux-gnu/libc.so.6 "" <<'L'
	libcurl.so.4 (libc6) => /lib/i386-linux-gnu/libcurl.so.4
	libc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6
L
exit $fail
