#!/bin/sh
# The house rules that a compiler does not check (docs/architecture.md, "Rooms"):
#  - the two front ends never include each other;
#  - the manager is wiring: no gRPC, no kubelet API, neither front end (main builds them),
#    at most 900 lines with its headers;
#  - the shared rooms (rpc, frontend) include neither front end;
#  - only main reads the command line: no room of pkg/ but pkg/cli includes pkg/cli;
#  - no room holds more than 15 % of pkg/'s lines (a room: a directory's own .h and .cpp
#    files; pkg/dra's roles are rooms of their own: view, slices, kubelet, prepare, render);
#  - the repository is whole: no tracked symlink is absolute or leaves it (one to a
#    developer's node_modules was once committed; a clone then pointed at another tree).
# Fails with one line per broken rule.
set -eu
root=${1:-$(dirname "$0")/..}
cd "$root"
fail=0
broken() { echo "rooms: $*" >&2; fail=1; }

if grep -rn '#include "pkg/dra/' pkg/deviceplugin; then broken "pkg/deviceplugin includes pkg/dra"; fi
if grep -rn '#include "pkg/deviceplugin/' pkg/dra; then broken "pkg/dra includes pkg/deviceplugin"; fi
for room in rpc frontend manager; do
  if grep -rnE '#include "pkg/(dra|deviceplugin)/' "pkg/$room"; then
    broken "pkg/$room includes a front end"
  fi
done
if grep -rn '#include "pkg/cli/' pkg --include='*.h' --include='*.cpp' | grep -v '^pkg/cli/'; then
  broken "a room of pkg/ includes pkg/cli"
fi
if grep -rnE '#include [<"](grpc|grpcpp)/|#include "pkg/api/' pkg/manager; then
  broken "pkg/manager includes gRPC or a kubelet API"
fi
total=$(find pkg -name '*.h' -o -name '*.cpp' | xargs cat | wc -l)
for dir in $(find pkg -type d); do
  n=$(find "$dir" -maxdepth 1 \( -name '*.h' -o -name '*.cpp' \) -exec cat {} + | wc -l)
  [ $((n * 100)) -le $((total * 15)) ] || broken "$dir has $n of pkg/'s $total lines (at most 15 %)"
done
lines=$(cat pkg/manager/*.h pkg/manager/*.cpp | wc -l)
[ "$lines" -le 900 ] || broken "pkg/manager has $lines lines (at most 900)"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  while IFS= read -r link; do
    [ -n "$link" ] || continue
    target=$(git cat-file -p ":$link")
    case "$target" in
      /*) broken "$link is a symlink to an absolute path ($target)" ;;
      *)
        resolved=$(realpath -m "$(dirname "$link")/$target")
        case "$resolved" in
          "$(pwd)"/*) ;;
          *) broken "$link is a symlink out of the repository ($target)" ;;
        esac
        ;;
    esac
  done <<LINKS
$(git ls-files -s | awk '$1 == "120000" { print $4 }')
LINKS
fi
exit $fail
