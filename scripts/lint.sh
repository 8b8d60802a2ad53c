#!/usr/bin/env bash
# The linters CI runs (docs/development.md, "Linting"):
#  - clang-format (.clang-format) over every tracked C++ file, as a check: nothing is
#    rewritten, each misformatted line is a finding;
#  - clang-tidy (.clang-tidy) over the product's C++ sources (pkg/, cmd/) changed since
#    LINT_BASE (default: the previous commit; a header counts through the source of the
#    same name), against the build's compile_commands.json (scripts/build.sh makes it).
#    Every warning is an error.
# Fails with each finding. `scripts/lint.sh --all` runs clang-tidy over every source.
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

if [ "${1:-}" = "--all" ]; then
  mapfile -t changed < <(printf '%s\n' "${all[@]}")
else
  base=${LINT_BASE:-HEAD~1}
  if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
    echo "lint: no commit $base to compare with (set LINT_BASE, or use --all)" >&2
    exit 1
  fi
  mapfile -t changed < <(git diff --name-only --diff-filter=d "$base" -- '*.cpp' '*.h')
fi
sources=()
for f in "${changed[@]}"; do
  # Product code only: pkg/ and cmd/ (tests are held to clang-format, not clang-tidy).
  case "$f" in pkg/* | cmd/*) ;; *) continue ;; esac
  case "$f" in *.h) src=${f%.h}.cpp ;; *) src=$f ;; esac
  # Only what the build compiles: compile_commands.json names it.
  if [ -f "$src" ] && grep -qF "\"file\": \"$here/$src\"" "$build/compile_commands.json"; then
    sources+=("$src")
  fi
done
mapfile -t sources < <(printf '%s\n' "${sources[@]}" | sort -u | sed '/^$/d')
if [ ${#sources[@]} -eq 0 ]; then
  echo "lint: clang-tidy: no changed source"
  exit 0
fi
clang-tidy -p "$build" --quiet --warnings-as-errors='*' "${sources[@]}"
echo "lint: clang-tidy: ${#sources[@]} sources clean"
