#!/usr/bin/env bash
# The GoogleTest names the tree at a commit defines (Suite.Name, sorted, one a line), to
# compare two commits' test lists: a suite moved or split keeps its names.
#   scripts/test-names.sh 584a828 > before; scripts/test-names.sh HEAD > after
#   comm -23 before after   # names gone (none may be, unless a change says why)
set -euo pipefail
cd "$(dirname "$0")/.."
git grep -h -E '^(TEST|TEST_F|TEST_P)\(' "${1:-HEAD}" -- 'test/*.cpp' |
  sed -E 's/^TEST(_F|_P)?\(([A-Za-z0-9_]+), *([A-Za-z0-9_]+)\).*/\2.\3/' | sort -u
