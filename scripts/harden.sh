#!/usr/bin/env bash
# The adversarial checks. CI (.ci/run) runs `tsan-ci` (and the README's test command on an
# ASan + UBSan build, which is what `asan` does here); the whole TSan run and the fuzzing are
# for a developer's machine:
#   1. the whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer;
#   2. the whole test suite built with ThreadSanitizer (gRPC itself is not instrumented:
#      test/tsan.supp names each suppression and why); `tsan-ci` builds and runs only the
#      in-process suites whose code runs on several threads (label threads), as CI does;
#   3. every libFuzzer target (clang) for FUZZ_SECONDS each, from its seed corpus, printing
#      executions and crashes. A crash input is written to build-fuzz/crashes/<target>/: keep
#      it in test/fuzz/corpus/<target>/, where every build replays it as a test;
# (The fleet run moved to `scripts/bench.sh fleet`: docs/performance.md.)
# Usage: scripts/harden.sh [asan] [tsan] [tsan-ci] [fuzz]   (default: asan tsan fuzz)
#   FUZZ_SECONDS=60  time per fuzz target     JOBS=2  build parallelism
#   PHASE=build|test  only build, or only run what an earlier PHASE=build built (.ci/run
#                     builds one sanitizer's tree while the suites of another run)
#   LINKER=lld        -fuse-ld= for every program (CI)
#   UNITY_TESTS=ON    each test target's sources compiled as one (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${PHASE:-}" = test ] || ./scripts/install-deps.sh >/dev/null
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(asan tsan fuzz)
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-2}
status=0

suite() {  # suite <dir> <sanitizers> <build target> [ctest args...]
  local dir=$1 san=$2 target=$3
  shift 3
  # Warnings stay on but are not errors here: GCC 12 under the sanitizers reports
  # maybe-uninitialized inside libstdc++'s <regex> and <functional> (false positives).
  # -O1 -g1: the optimisation the sanitizers' own documentation suggests, and the line
  # tables their reports need. -O2 -g built the tree about three times slower under ASan
  # (docs/development.md, "CI").
  if [ "${PHASE:-}" != test ]; then
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRDMADP_SANITIZE="$san" \
      -DRDMADP_WERROR=OFF -DRDMADP_BENCHMARKS=OFF -DRDMADP_LINKER="${LINKER:-}" \
      -DRDMADP_UNITY_TESTS="${UNITY_TESTS:-OFF}" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
    cmake --build "$dir" -j"$JOBS" --target "$target"
  fi
  if [ "${PHASE:-}" != build ]; then
    (cd "$dir" && ctest --output-on-failure -j"$JOBS" -LE slow "$@") || status=1
  fi
}

for step in "${steps[@]}"; do
  case $step in
    asan)
      echo "== ASan + UBSan: the whole suite"
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        suite build-asan address,undefined all
      ;;
    tsan)
      echo "== TSan: the whole suite"
      # Every suite, the process-level ones included (the plugin binary is built with TSan
      # too). Left out: one test that sends 5,000 Allocates through a plugin TSan slows
      # about tenfold (it times out; the same path runs in its other tests).
      GTEST_FILTER='-MetricsE2E.HostileAllocateIdsNeitherForgeLogLinesNorFloodTheLog' \
        TSAN_OPTIONS="suppressions=$PWD/test/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
        suite build-tsan thread all
      ;;
    tsan-ci)
      echo "== TSan: the unit and API suites (CI)"
      TSAN_OPTIONS="suppressions=$PWD/test/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
        suite build-tsan thread threaded_suites -L threads
      ;;
    fuzz)
      echo "== libFuzzer: ${FUZZ_SECONDS} s per target"
      command -v clang++ >/dev/null || {
        sudo=$( [ "$(id -u)" -eq 0 ] || echo sudo )
        $sudo apt-get install -y clang
      }
      CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DRDMADP_FUZZ=ON -DRDMADP_SANITIZE=address,undefined -DRDMADP_WERROR=OFF >/dev/null
      targets=$(cd test/fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//')
      # shellcheck disable=SC2086
      cmake --build build-fuzz -j"$JOBS" --target $targets
      for t in $targets; do
        name=${t#fuzz_}
        work=build-fuzz/corpus-work/$name crashes=build-fuzz/crashes/$name
        mkdir -p "$work" "$crashes"
        cp -n test/fuzz/corpus/"$name"/* "$work"/ 2>/dev/null || true
        log=build-fuzz/$t.log
        if build-fuzz/test/fuzz/"$t" -max_total_time="$FUZZ_SECONDS" -print_final_stats=1 \
            -artifact_prefix="$crashes/" -rss_limit_mb=2048 "$work" >"$log" 2>&1; then
          verdict=ok
        else
          verdict=CRASH
          status=1
        fi
        execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
        printf '%-24s %12s executions  %s crash input(s)  %s\n' "$t" "${execs:-?}" \
          "$(find "$crashes" -type f | wc -l)" "$verdict"
      done
      ;;
    *) echo "unknown step $step (asan, tsan, tsan-ci, fuzz)" >&2; exit 2 ;;
  esac
done
exit $status
