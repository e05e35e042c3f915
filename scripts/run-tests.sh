#!/usr/bin/env bash
# Runs every test of a build (scripts/test.sh runs it on the release build and on the sanitizer
# build): the Catch2 binary as two shards in parallel, [integration] and the rest (neither with
# the [gpu] cases), then ctest's tests that are not Catch2 cases (label `script`: the node
# end-to-end test against the build's server, the include-layering check, gpu_cases, the [gpu]
# cases in one process, which ctest reports as skipped without a GPU, and the same cases on the
# CUDA emulator), two at a time.
#
#   scripts/run-tests.sh [BUILD_DIR]      (default build)
#
# One process per shard, not ctest's one per test case: a process of the test binary takes
# ~0.2 s to start (~0.8 s sanitized), which was most of ctest's time for ~800 cases, and the
# shards share what a process loads once (the fixture tokenizers: tests/support/text_assets.hpp).
# Each shard's output goes to BUILD_DIR/tests-<shard>.log and is printed when the shard ends
# (all of it when it failed); under the sanitizers the first report aborts its shard
# (abort_on_error), which fails the run. `ctest --test-dir BUILD_DIR` still runs each case as
# its own test, for a developer who wants that.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

shards=("[integration]~[gpu]" "~[integration]~[gpu]")
names=(integration rest)
pids=()
for i in "${!shards[@]}"; do
  "$build/tests/courier_tests" "${shards[$i]}" >"$build/tests-${names[$i]}.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!shards[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  echo "=== test shard ${names[$i]} (${shards[$i]}): exit $rc"
  if [[ $rc != 0 ]]; then
    cat "$build/tests-${names[$i]}.log"
    status=1
  else
    tail -n 3 "$build/tests-${names[$i]}.log"
  fi
done
ctest --test-dir "$build" --output-on-failure -L script -j 2 || status=1
exit $status
