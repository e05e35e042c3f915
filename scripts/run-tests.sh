#!/usr/bin/env bash
# Runs every test of a build (scripts/test.sh runs it on the release build and on the sanitizer
# build): the Catch2 binary as four shards ([integration] split in two, and the rest in two; none
# with the [gpu] cases) and ctest's tests that are not Catch2 cases (label `script`: the node
# end-to-end test against the build's server, the include-layering check, gpu_cases, the [gpu]
# cases in one process, which ctest reports as skipped without a GPU, and the CUDA emulator's
# runs), all as one queue of jobs, COURIER_TEST_JOBS (default: the CPUs) at a time.
#
#   scripts/run-tests.sh [BUILD_DIR]      (default build)
#
# One process per shard, not ctest's one per test case: a process of the test binary takes
# ~0.2 s to start (~0.8 s sanitized), which was most of ctest's time for ~800 cases, and the
# shards share what a process loads once (the fixture tokenizers: tests/support/text_assets.hpp).
# The queue starts the longest jobs first (its order is below), so that no CPU idles while one
# long job ends the run. Each job's output goes to BUILD_DIR/tests-<job>.log and is
# printed when the job ends (all of it when it failed); under the sanitizers the first report
# aborts its job (abort_on_error), which fails the run. `ctest --test-dir BUILD_DIR` still runs
# each case as its own test, for a developer who wants that.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
workers=${COURIER_TEST_JOBS:-$(nproc)}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# The queue: "name|kind|argument". kind `shard`: the Catch2 binary with a test spec; kind
# `ctest`: one ctest test of label `script`, by name. Longest first: the emulator's runs (which
# of them a build has depends on the sanitizers: tests/CMakeLists.txt), the cases outside
# [integration] in two shards ([grammar] and [text], whose big inputs are slowest under the
# sanitizers, and the others), the [integration] shards, the rest in ctest's order. No job is
# much longer than the others, so that the last one does not run alone for long.
queue=()
first="emulated_gpu_cases_h100 emulated_integration emulated_gpu_cases_l40s"
scripts=$(ctest --test-dir "$build" -N -L script | sed -n 's/^ *Test *#[0-9]*: //p')
for t in $first; do
  grep -qx "$t" <<<"$scripts" && queue+=("$t|ctest|$t")
done
queue+=("unit|shard|~[grammar]~[text]~[integration]~[gpu]"
        "unit-grammar-text|shard|[grammar]~[integration]~[gpu],[text]~[integration]~[gpu]"
        "integration-scheduler|shard|[integration][scheduler]~[gpu]"
        "integration-other|shard|[integration]~[scheduler]~[gpu]")
while read -r t; do
  [[ -z $t || " $first " == *" $t "* ]] && continue
  queue+=("$t|ctest|$t")
done <<<"$scripts"

declare -A running=()  # pid -> queue entry
status=0

start_job() {
  local name kind arg
  IFS='|' read -r name kind arg <<<"$1"
  if [[ $kind == shard ]]; then
    "$build/tests/courier_tests" "$arg" >"$build/tests-$name.log" 2>&1 &
  else
    ctest --test-dir "$build" --output-on-failure -R "^${arg}\$" >"$build/tests-$name.log" 2>&1 &
  fi
  running[$!]=$1
}

# Waits for one job and reports it; a failed job's whole log is printed.
finish_job() {
  local pid rc=0 name kind arg
  wait -n -p pid "${!running[@]}" || rc=$?
  IFS='|' read -r name kind arg <<<"${running[$pid]}"
  unset "running[$pid]"
  echo "=== $kind $name ($arg): exit $rc"
  if [[ $rc != 0 ]]; then
    cat "$build/tests-$name.log"
    status=1
  else
    tail -n 3 "$build/tests-$name.log"
  fi
}

for entry in "${queue[@]}"; do
  while (( ${#running[@]} >= workers )); do finish_job; done
  start_job "$entry"
done
while (( ${#running[@]} > 0 )); do finish_job; done
exit $status
