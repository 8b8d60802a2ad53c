#!/usr/bin/env bash
# One version everywhere (issue 52): scripts/version-check.sh passes on the tree and the
# built binary, and fails, naming the file, when any one file disagrees.
#   test/version_test.sh SOURCE_ROOT BINARY
set -euo pipefail
src=$1
binary=$2
check="$src/scripts/version-check.sh"
"$check" "$src" "$binary"
# The build's date is its commit's (CMakeLists.txt): a date taken at configure time changed
# at every configure and relinked the binary on every build, under running tests.
stamp=$("$binary" --version)
commit=$(sed -n 's/.*commit:\([^,]*\),.*/\1/p' <<< "$stamp")
if git -C "$src" cat-file -e "$commit^{commit}" 2>/dev/null; then
  want=$(TZ=UTC git -C "$src" log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd "$commit")
  [ "$stamp" = "${stamp%date:*}date:$want" ] ||
    { echo "FAIL: --version says '$stamp'; the date of commit $commit is $want"; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=(CMakeLists.txt Dockerfile.ubi images/base/daemonset.yaml README.md CHANGELOG.md
       docs/network-operator.md docs/upgrading.md .github/workflows/release.yml)
fresh() {
  rm -rf "$tmp/t" && mkdir -p "$tmp/t"
  for f in "${files[@]}"; do mkdir -p "$tmp/t/$(dirname "$f")" && cp "$src/$f" "$tmp/t/$f"; done
}
fresh
"$check" "$tmp/t" > /dev/null || { echo "FAIL: the copy of the tree does not pass"; exit 1; }
version=$("$src/scripts/version.sh" "$src")
other=9.9.9
fails=0
# Each: the file, then a sed expression that makes it disagree.
mutations=(
  "Dockerfile.ubi|0,/ARG VERSION=$version/s//ARG VERSION=$other/"
  "Dockerfile.ubi|s/--build-arg VERSION=$version/--build-arg VERSION=v$version/"
  "Dockerfile.ubi|s/org.opencontainers.image.version=\"\${VERSION}\"/org.opencontainers.image.version=\"v\${VERSION}\"/"
  "images/base/daemonset.yaml|s/k8s-rdma-shared-dp:$version/k8s-rdma-shared-dp:$other/"
  "README.md|s/--build-arg VERSION=$version/--build-arg VERSION=$other/"
  "README.md|s/\`version: $version\`/\`version: $other\`/"
  "CHANGELOG.md|0,/^## $version/s//## $other/"
  "docs/network-operator.md|0,/version: $version/s//version: $other/"
  "docs/upgrading.md|s/From the Go plugin to $version/From the Go plugin to $other/"
  ".github/workflows/release.yml|s/scripts\/version.sh/scripts\/other.sh/"
  "docs/upgrading.md|\$a Rolling back to 0.1.0 works too."
)
for m in "${mutations[@]}"; do
  file=${m%%|*}
  fresh
  sed -i -e "${m#*|}" "$tmp/t/$file"
  if cmp -s "$src/$file" "$tmp/t/$file"; then
    echo "FAIL: the mutation of $file changed nothing: ${m#*|}"; fails=1; continue
  fi
  if out=$("$check" "$tmp/t" 2>&1); then
    echo "FAIL: passes with $file changed by ${m#*|}"; fails=1
  elif ! grep -qF "$file" <<< "$out"; then
    echo "FAIL: $file changed by ${m#*|}; the check does not name it: $out"; fails=1
  fi
done
# The version itself changed in CMakeLists.txt: every other file disagrees.
fresh
sed -i "s/^project(k8s-rdma-shared-dp VERSION $version/project(k8s-rdma-shared-dp VERSION $other/" \
  "$tmp/t/CMakeLists.txt"
if "$check" "$tmp/t" > /dev/null 2>&1; then echo "FAIL: passes with CMakeLists.txt at $other"; fails=1; fi
# A binary that says another version.
fresh
printf '#!/bin/sh\necho "k8s-rdma-shared-dp version:%s-dev, commit:x, date:y"\n' "$version" > "$tmp/bin"
chmod +x "$tmp/bin"
if "$check" "$tmp/t" "$tmp/bin" > /dev/null 2>&1; then echo "FAIL: passes with a $version-dev binary"; fails=1; fi
[ "$fails" = 0 ] && echo "version_test: ${#mutations[@]} + 2 disagreements each found"
exit "$fails"
