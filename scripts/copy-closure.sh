#!/usr/bin/env bash
# Copies a binary and every shared library it loads into a root directory, as the image's
# runtime stage needs them: <root>/usr/bin/<binary>, libraries in <root>/usr/lib64/
# k8s-rdma-shared-dp (+ an ld.so.conf.d entry), and the libibverbs provider plugins with
# links resolved (no dangling symlink). Used by Dockerfile.ubi and test/image.
#   copy-closure.sh BINARY ROOT [--with-base]
#   copy-closure.sh --pick SONAME LIBC < LISTING   (prints the path chosen; for the tests)
# libcurl (dlopen()ed by the DRA front end) and libibverbs (dlopen()ed where uverbs devices
# exist) are not listed by ldd: they and their own closures come along too.
# --with-base also copies what the UBI minimal base already has (glibc, libstdc++, the
# dynamic loader) into their own paths, for a root that is otherwise empty (the test).
set -euo pipefail

# Any architecture: a library loaded with dlopen() is taken from `ldconfig -p` with the ABI
# tag of the binary's own libc ("libc6,x86-64", "libc6,AArch64", "libc6,x32", plain "libc6"
# for 32-bit x86), so a 32-bit copy is never picked on a multilib host. Both layouts of a
# line are read: "(libc6,x86-64)" and, from older glibc or with hwcaps,
# "(libc6,AArch64, OS ABI: Linux 3.7.0)".
#   pick SONAME LIBC: reads an `ldconfig -p` listing on stdin.
pick() {
  awk -v so="$1" -v libc="$2" '
    function abi(line,   t, parts, n) {  # "libc6,x86-64" of "(libc6,x86-64, OS ABI: ...)"
      if (!match(line, /\([^)]*\)/)) return ""
      t = substr(line, RSTART + 1, RLENGTH - 2)
      n = split(t, parts, /, */)
      return n >= 2 && parts[2] !~ /OS ABI|hwcap/ ? parts[1] "," parts[2] : parts[1]
    }
    { lines[NR] = $0; if ($NF == libc && $1 ~ /^libc\.so/) want = abi($0) }
    END {
      for (i = 1; i <= NR; i++) {
        split(lines[i], f, " ")
        if (f[1] == so && abi(lines[i]) == want && !found) { print f[length(f)]; found = 1 }
      }
    }'
}
if [ "${1:-}" = --pick ]; then
  pick "$2" "$3"
  exit 0
fi

binary=$1 root=$2 with_base=${3:-}
libc=$(ldd "$binary" | awk '$1 ~ /^libc\.so/ {print $3}')
libdir=/usr/lib64/k8s-rdma-shared-dp
mkdir -p "$root/usr/bin" "$root$libdir" "$root/etc/ld.so.conf.d"
cp "$binary" "$root/usr/bin/"
base='/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so'
copy_libs() {  # the shared libraries ldd lists for $1
  ldd "$1" | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}' | while read -r lib; do
    if [[ $lib =~ $base ]]; then
      [ "$with_base" = --with-base ] || continue
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    else
      cp -L "$lib" "$root$libdir/"
    fi
  done
}
copy_libs "$binary"
# No `exit` in awk: ldconfig would die of SIGPIPE, which pipefail turns into a failure.
copy_dlopened() {  # copy_dlopened SONAME WHAT-NEEDS-IT PACKAGE
  local lib
  lib=$(/sbin/ldconfig -p | pick "$1" "$libc")
  if [ -z "$lib" ]; then
    echo "copy-closure: $1 not found ($2 needs it): install $3" >&2
    exit 1
  fi
  cp -L "$lib" "$root$libdir/$1"
  copy_libs "$lib"
}
copy_dlopened libcurl.so.4 "the DRA front end" libcurl
copy_dlopened libibverbs.so.1 "verbs async events on RDMA nodes" rdma-core
echo "$libdir" >"$root/etc/ld.so.conf.d/k8s-rdma-shared-dp.conf"
if [ "$with_base" = --with-base ] && [ ! -f "$root/etc/ld.so.conf" ]; then
  echo 'include /etc/ld.so.conf.d/*.conf' >"$root/etc/ld.so.conf"  # as UBI has it
fi
# libibverbs loads its providers at run time (dlopen), so ldd does not list them. Their
# files are often symlinks into /usr/lib*: copy the targets, never the links.
for providers in /usr/lib64/libibverbs "$(dirname "$libc")/libibverbs"; do
  [ -d "$providers" ] || continue
  mkdir -p "$root/usr/lib64/libibverbs"
  cp -rL "$providers/." "$root/usr/lib64/libibverbs/"
done
for conf in /etc/libibverbs.d; do [ -d "$conf" ] && cp -rL "$conf" "$root/etc/"; done
if [ -n "$(find "$root" -xtype l)" ]; then
  echo "copy-closure: dangling links: $(find "$root" -xtype l)" >&2
  exit 1
fi
