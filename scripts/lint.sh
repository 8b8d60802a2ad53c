#!/usr/bin/env bash
# The linters CI runs (docs/development.md, "Linting"):
#  - clang-format (.clang-format) over every tracked C++ file, as a check: nothing is
#    rewritten, each misformatted line is a finding;
#  - clang-tidy (.clang-tidy) over every C++ source of the product (pkg/, cmd/) that the
#    build compiles, with the build's flags (compile_commands.json, which scripts/build.sh
#    makes), JOBS (default 2) at a time. The sources of one library are checked as one
#    translation unit (a file under $BUILD_DIR/lint-unity that includes them, with that
#    library's flags): clang-tidy spends ~3/4 of a source's time matching in the gRPC,
#    protobuf and standard headers it includes, so 7 sources of pkg/deviceplugin take 23 s
#    together and ~100 s apart. Each source is still checked whole with every check, its
#    findings reported at its own lines (.clang-tidy's HeaderFilterRegex names every room of
#    pkg/); a program's source (cmd/) is checked on its own. A header is checked through
#    the sources that include it, so every header of pkg/ and cmd/ must be included by one
#    of them: one that is not is a finding (clang-tidy would never see it);
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
# The units: per library (the target in each source's object path, CMakeFiles/<target>.dir),
# one file including its sources, with the flags of its first; a library of one source, or
# a source named on the command line, is its own unit. Under the build directory, so that
# clang-tidy finds .clang-tidy above it.
units_dir="$build/lint-unity"
rm -rf "$units_dir"
mkdir -p "$units_dir"
units_abs=$(cd "$units_dir" && pwd -P)
declare -A unit_sources unit_entry
targets=()
for f in "${sources[@]}"; do
  entry=$(grep -m1 -B2 -F "\"file\": \"$here/$f\"" "$build/compile_commands.json" | grep -E '^  "(directory|command)"') ||
    { echo "lint: $f is not in $build/compile_commands.json" >&2; status=1; continue; }
  target=$(sed -n 's|.* -o CMakeFiles/\([^ ]*\)\.dir/.*|\1|p' <<<"$entry")
  [ $# -eq 0 ] && [ -n "$target" ] || target="source:$f"
  if [ -z "${unit_sources[$target]:-}" ]; then
    targets+=("$target")
    unit_entry[$target]=$entry
  fi
  unit_sources[$target]+="$here/$f "
done
units=()
{
  echo "["
  sep=""
  for target in "${targets[@]}"; do
    read -r -a members <<<"${unit_sources[$target]}"
    if [ ${#members[@]} -eq 1 ]; then
      file=${members[0]}
    else
      file="$units_abs/$target.cpp"
      for m in "${members[@]}"; do
        # The one place a source includes a source: not a finding here.
        echo "#include \"$m\"  // NOLINT(bugprone-suspicious-include)"
      done >"$file"
    fi
    # That entry's directory and command, the command's object and source replaced.
    dir=$(sed -n 's|^  "directory": "\(.*\)",$|\1|p' <<<"${unit_entry[$target]}")
    cmd=$(sed -n 's|^  "command": "\(.*\)",$|\1|p' <<<"${unit_entry[$target]}" |
      sed 's| -o [^ ]* -c [^ ]*$| -o lint-unit.o -c '"$file"'|')
    printf '%s{"directory": "%s", "command": "%s", "file": "%s"}\n' "$sep" "$dir" "$cmd" "$file"
    sep=","
    units+=("${#members[@]} $file")
  done
  echo "]"
} >"$units_dir/compile_commands.json"
# Each unit on its own process, the largest first, JOBS at a time; the findings of all,
# then the verdict.
printf '%s\n' "${units[@]}" | sort -rn | cut -d' ' -f2- |
  xargs -P "${JOBS:-2}" -n 1 clang-tidy -p "$units_dir" --quiet --warnings-as-errors='*' \
    --extra-arg=-Wthread-safety --extra-arg=-Wno-unknown-warning-option || status=1
if [ $status -ne 0 ]; then
  echo "lint: findings above" >&2
  exit 1
fi
echo "lint: clang-tidy and the thread-safety analysis: ${#sources[@]} sources (${#units[@]} units) clean"
