#!/usr/bin/env bash
# Copies a binary and every shared library it loads into a root directory, as the image's
# runtime stage needs them: <root>/usr/bin/<binary>, libraries in <root>/usr/lib64/
# k8s-rdma-shared-dp (+ an ld.so.conf.d entry), and the libibverbs provider plugins with
# links resolved (no dangling symlink). Used by Dockerfile.ubi and test/image.
#   copy-closure.sh BINARY ROOT [--with-base]
# libcurl (dlopen()ed by the DRA front end) and libibverbs (dlopen()ed where uverbs devices
# exist) are not listed by ldd: they and their own closures come along too.
# --with-base also copies what the UBI minimal base already has (glibc, libstdc++, the
# dynamic loader) into their own paths, for a root that is otherwise empty (the test).
set -euo pipefail
binary=$1 root=$2 with_base=${3:-}
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
  lib=$(/sbin/ldconfig -p | awk -v so="$1" '$1 == so && /x86-64|x86_64/ && !n++ {print $NF}')
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
for providers in /usr/lib64/libibverbs /usr/lib/x86_64-linux-gnu/libibverbs; do
  [ -d "$providers" ] || continue
  mkdir -p "$root/usr/lib64/libibverbs"
  cp -rL "$providers/." "$root/usr/lib64/libibverbs/"
done
for conf in /etc/libibverbs.d; do [ -d "$conf" ] && cp -rL "$conf" "$root/etc/"; done
if [ -n "$(find "$root" -xtype l)" ]; then
  echo "copy-closure: dangling links: $(find "$root" -xtype l)" >&2
  exit 1
fi
