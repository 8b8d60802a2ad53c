#!/usr/bin/env bash
# The linters CI runs (docs/development.md, "Linting"):
#  - clang-format (.clang-format) over every tracked C++ file, as a check: nothing is
#    rewritten, each misformatted line is a finding;
#  - clang-tidy (.clang-tidy) over every C++ source of the product (pkg/, cmd/) that the
#    build compiles, against the build's compile_commands.json (scripts/build.sh makes it),
#    JOBS (default 2) at a time. A header is checked through the sources that include it
#    (.clang-tidy's HeaderFilterRegex), so every header of pkg/ and cmd/ must be included by
#    one of them: one that is not is a finding (clang-tidy would never see it);
#  - clang's thread-safety analysis (-Wthread-safety) in the same pass: clang-tidy compiles
#    each source with clang, and a member marked ABSL_GUARDED_BY touched without its mutex,
#    or a function marked ABSL_EXCLUSIVE_LOCKS_REQUIRED called without it, is an error
#    (pkg/sync/mutex.h).
# Every warning is an error. Fails with each finding.
# `scripts/lint.sh <file>...` checks only those sources (a developer's quick pass).
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd -P)  # as CMake records paths in compile_commands.json
for tool in clang-format clang-tidy; do
  command -v "$tool" >/dev/null || { echo "lint: $tool is missing (scripts/install-deps.sh)" >&2; exit 1; }
done
build=${BUILD_DIR:-build}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "lint: $build/compile_commands.json is missing (run scripts/build.sh first)" >&2
  exit 1
fi
mapfile -t all < <(git ls-files '*.cpp' '*.h' | grep -v '^test/bench/gobaseline/')
clang-format --dry-run --Werror "${all[@]}"
echo "lint: clang-format: ${#all[@]} files formatted"

status=0
if [ $# -gt 0 ]; then
  sources=("$@")
else
  mapfile -t product < <(git ls-files 'pkg/*.cpp' 'pkg/*.h' 'cmd/*.cpp' 'cmd/*.h')
  sources=()
  for f in "${product[@]}"; do
    case "$f" in *.cpp) ;; *) continue ;; esac
    # Only what the build compiles: compile_commands.json names it.
    if grep -qF "\"file\": \"$here/$f\"" "$build/compile_commands.json"; then sources+=("$f"); fi
  done
  # Every header reached: included by a source or header of pkg/ or cmd/ (by its path from
  # the repository's root, as the tree includes everything).
  for h in "${product[@]}"; do
    case "$h" in *.h) ;; *) continue ;; esac
    if ! grep -rqF "#include \"$h\"" pkg cmd --include='*.cpp' --include='*.h'; then
      echo "lint: $h is included by no source of pkg/ or cmd/: clang-tidy cannot check it" >&2
      status=1
    fi
  done
fi
# Each source on its own process, JOBS at a time; the findings of all, then the verdict.
printf '%s\n' "${sources[@]}" |
  xargs -P "${JOBS:-2}" -n 1 clang-tidy -p "$build" --quiet --warnings-as-errors='*' \
    --extra-arg=-Wthread-safety --extra-arg=-Wno-unknown-warning-option || status=1
if [ $status -ne 0 ]; then
  echo "lint: findings above" >&2
  exit 1
fi
echo "lint: clang-tidy and the thread-safety analysis: ${#sources[@]} sources clean"
