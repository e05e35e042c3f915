#!/usr/bin/env bash
# Runs every test of a sanitizer build (scripts/test.sh's second half): the Catch2 binary as two
# shards in parallel, [integration] and the rest (about 2.5 and 3 minutes on 2 cores), then the
# node end-to-end test (ctest's openai_client_e2e) against the sanitized server.
#
#   scripts/sanitizer-tests.sh [BUILD_DIR]      (default build-asan)
#
# One process per shard, not ctest's one per test case: a sanitized process of the ~250 MB test
# binary takes ~0.8 s to start, which was 7 of ctest's 10 minutes for ~550 cases. Each shard's
# output goes to BUILD_DIR/sanitizer-<shard>.log and is printed when the shard ends; the first
# sanitizer report aborts its shard (abort_on_error), which fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

shards=("[integration]" "~[integration]")
names=(integration rest)
pids=()
for i in "${!shards[@]}"; do
  "$build/tests/courier_tests" "${shards[$i]}" >"$build/sanitizer-${names[$i]}.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!shards[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  echo "=== sanitizer shard ${names[$i]} (${shards[$i]}): exit $rc"
  if [[ $rc != 0 ]]; then
    cat "$build/sanitizer-${names[$i]}.log"
    status=1
  else
    tail -n 3 "$build/sanitizer-${names[$i]}.log"
  fi
done
ctest --test-dir "$build" --output-on-failure -R '^openai_client_e2e$' || status=1
exit $status
