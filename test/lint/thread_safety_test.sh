#!/bin/sh
# The thread-safety analysis that scripts/lint.sh runs (clang-tidy with -Wthread-safety) can
# fail: thread_safety_planted.cpp passes as it is, and fails with each broken rule planted
# (an unguarded read, a call without the lock, a write after the scoped lock let go).
# Usage: thread_safety_test.sh <repository root>
set -u
root=${1:-$(dirname "$0")/../..}
command -v clang-tidy >/dev/null || { echo "thread_safety_test: clang-tidy is missing" >&2; exit 1; }
check() {  # check <expect: pass|fail> [-DPLANT_...]
  expect=$1
  shift
  # The repository's .clang-tidy, as scripts/lint.sh uses it (its Checks keep the analysis's
  # diagnostics: clang-diagnostic-thread-safety*).
  out=$(clang-tidy --quiet --warnings-as-errors='*' "$root/test/lint/thread_safety_planted.cpp" -- \
    -std=c++20 -I"$root" -Wthread-safety "$@" 2>&1)
  rc=$?
  if [ "$expect" = pass ] && [ $rc -ne 0 ]; then
    echo "thread_safety_test: the clean file fails: $out" >&2
    exit 1
  fi
  if [ "$expect" = fail ]; then
    if [ $rc -eq 0 ] || ! printf '%s' "$out" | grep -q 'thread-safety'; then
      echo "thread_safety_test: $* was not reported: $out" >&2
      exit 1
    fi
  fi
}
check pass
check fail -DPLANT_UNGUARDED_READ
check fail -DPLANT_CALL_WITHOUT_LOCK
check fail -DPLANT_WRITE_AFTER_UNLOCK
echo "thread_safety_test: the clean file passes; 3 planted broken rules are reported"
