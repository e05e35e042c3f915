#!/usr/bin/env bash
# Builds courier and runs every test: the release-like build (RelWithDebInfo) with all tests,
# then an AddressSanitizer + UBSan build of the same test binary.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${COURIER_JOBS:-$(nproc)}

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOURIER_LINE_TABLES=ON
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${COURIER_SKIP_SANITIZERS:-0}" != 1 ]; then
  # The sanitizers check host code; the CUDA runtime and ASan's shadow memory do not mix.
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOURIER_SANITIZE=ON \
    -DCOURIER_CUDA=OFF -DCOURIER_LINE_TABLES=ON
  cmake --build build-asan -j "$jobs" --target courier_tests courier
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
