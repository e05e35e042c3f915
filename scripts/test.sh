#!/usr/bin/env bash
# Builds courier and runs every test: the release-like build (RelWithDebInfo, GCC) with all
# tests, then an AddressSanitizer + UBSan build (clang) of the same test binary, then the fuzz
# targets for a bounded time (scripts/fuzz.sh, clang; COURIER_FUZZ_SECONDS per target).
# COURIER_SKIP_SANITIZERS=1 and COURIER_SKIP_FUZZ=1 skip those phases. Warnings are errors here
# (COURIER_WERROR=ON; CI runs this script), not in a plain cmake build. At the end, also when a
# phase fails or the run is interrupted, prints how long each phase took.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${COURIER_JOBS:-$(nproc)}

phase_rows=()      # "name|m:ss|status" of each phase that ended
phase_name=""      # the phase running now, if any
phase_start=0
start=$SECONDS

# phase NAME COMMAND...: runs COMMAND as one timed phase; a failure ends the script (set -e).
phase() {
  phase_name=$1
  phase_start=$SECONDS
  shift
  "$@"
  phase_rows+=("$phase_name|$(mmss $((SECONDS - phase_start)))|ok")
  phase_name=""
}

skip_phase() { phase_rows+=("$1|-|$2"); }

mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

print_times() {
  local rc=$1 row name secs status
  if [[ -n $phase_name ]]; then
    status="failed (exit $rc)"
    [[ $rc == 130 || $rc == 143 ]] && status="interrupted"
    phase_rows+=("$phase_name|$(mmss $((SECONDS - phase_start)))|$status")
  fi
  printf '\nscripts/test.sh: phase times\n'
  printf '  %-20s %7s  %s\n' phase m:ss status
  for row in "${phase_rows[@]}"; do
    IFS='|' read -r name secs status <<<"$row"
    printf '  %-20s %7s  %s\n' "$name" "$secs" "$status"
  done
  status=ok
  [[ $rc == 0 ]] || status="exit $rc"
  printf '  %-20s %7s  %s\n' total "$(mmss $((SECONDS - start)))" "$status"
}
trap 'print_times $?' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Both builds compile the sources 8 at a time (COURIER_UNITY, COURIER_TEST_UNITY: about half
# the CPU of file by file; CMakeLists.txt).
phase configure cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOURIER_WERROR=ON \
  -DCOURIER_LINE_TABLES=ON -DCOURIER_UNITY=8 -DCOURIER_TEST_UNITY=8
phase build cmake --build build -j "$jobs"
phase tests scripts/run-tests.sh build

if [[ ${COURIER_SKIP_SANITIZERS:-0} != 1 ]]; then
  # The sanitizers check host code; the CUDA runtime and ASan's shadow memory do not mix.
  # clang (installed for the fuzzers): under ASan and UBSan it compiles courier in about half
  # the CPU of GCC 12, and it warns where GCC does not, so the two builds check each other.
  phase "sanitizer configure" cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DCOURIER_SANITIZE=ON -DCOURIER_CUDA=OFF -DCOURIER_WERROR=ON \
    -DCOURIER_LINE_TABLES=ON -DCOURIER_UNITY=8 -DCOURIER_TEST_UNITY=8
  phase "sanitizer build" cmake --build build-asan -j "$jobs" --target courier_tests courier
  phase "sanitizer tests" scripts/run-tests.sh build-asan
else
  for p in "sanitizer configure" "sanitizer build" "sanitizer tests"; do
    skip_phase "$p" "skipped (COURIER_SKIP_SANITIZERS=1)"
  done
fi

if [[ ${COURIER_SKIP_FUZZ:-0} != 1 ]]; then
  phase fuzz scripts/fuzz.sh "${COURIER_FUZZ_SECONDS:-30}"
else
  skip_phase fuzz "skipped (COURIER_SKIP_FUZZ=1)"
fi
