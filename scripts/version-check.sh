#!/usr/bin/env bash
# Checks that every file naming the project's version names the one in CMakeLists.txt
# (scripts/version.sh): the image's build arguments and labels, the DaemonSet's image tag,
# the README's build line, network-operator's `version:`, the CHANGELOG's top entry,
# docs/upgrading.md, the release workflow, and (given) the binary's --version. Prints one
# line per disagreement, naming the file, and exits 1 if there is any.
#   scripts/version-check.sh [ROOT] [BINARY]
set -uo pipefail
root=${1:-"$(dirname "$0")/.."}
binary=${2:-}
version=$("$(dirname "$0")/version.sh" "$root") || exit 1
bad=0
say() { echo "version-check: $1 (the version is $version, from CMakeLists.txt)"; bad=1; }
# Every match of `pattern` (an extended regex whose first group is a version) in `file`
# must be $version, and there must be at least `min` of them.
every() {
  local file=$1 pattern=$2 min=$3 what=$4 found n=0
  [ -f "$root/$file" ] || { say "$file is missing"; return; }
  while IFS= read -r found; do
    n=$((n + 1))
    [ "$found" = "$version" ] || say "$file: $what is $found"
  done < <(grep -oE -- "$pattern" "$root/$file" | sed -E "s|$pattern|\\1|")
  [ "$n" -ge "$min" ] || say "$file: $what not found"
}
num='([0-9]+\.[0-9]+\.[0-9]+[^ "'\''\\]*)'
every Dockerfile.ubi "ARG VERSION=$num" 2 "ARG VERSION"
every Dockerfile.ubi "--build-arg VERSION=$num" 1 "the build line's VERSION"
every Dockerfile.ubi "k8s-rdma-shared-dp:$num" 1 "the build line's image tag"
grep -q 'org.opencontainers.image.version="${VERSION}"' "$root/Dockerfile.ubi" ||
  say "Dockerfile.ubi: org.opencontainers.image.version is not \${VERSION}"
every images/base/daemonset.yaml "ghcr.io/k8s-rdma-shared-dp/k8s-rdma-shared-dp:$num" 1 "the image tag"
every README.md "--build-arg VERSION=$num" 1 "the build line's VERSION"
every README.md "k8s-rdma-shared-dp:$num" 1 "the build line's image tag"
every README.md "\`version: $num\`" 1 "network-operator's version"
every docs/network-operator.md "version: $num" 2 "network-operator's version:"
every docs/network-operator.md "\"version\":\"$num\"" 1 "network-operator's \"version\""
top=$(grep -m1 -E '^## ' "$root/CHANGELOG.md" | sed -E 's/^## ([^ ]+).*/\1/')
[ "$top" = "$version" ] || say "CHANGELOG.md: the top entry is $top"
grep -q "## From the Go plugin to $version" "$root/docs/upgrading.md" ||
  say "docs/upgrading.md: no \"From the Go plugin to $version\""
grep -q './scripts/version.sh' "$root/.github/workflows/release.yml" ||
  say ".github/workflows/release.yml: does not read the version with scripts/version.sh"
# No release that never existed: 0.1.0 had no tag and no image.
for f in README.md Dockerfile.ubi images docs .github; do
  [ -e "$root/$f" ] || continue
  while IFS= read -r hit; do
    say "${hit#"$root/"} names 0.1.0, which was never released"
  done < <(grep -rlE '(^|[^0-9.])0\.1\.0([^0-9.]|$)' "$root/$f")
done
if [ -n "$binary" ]; then
  out=$("$binary" --version 2>&1)
  case "$out" in
    "k8s-rdma-shared-dp version:$version, "*) ;;
    *) say "$binary --version says: $out" ;;
  esac
fi
[ "$bad" = 0 ] && echo "version-check: $version everywhere"
exit "$bad"
