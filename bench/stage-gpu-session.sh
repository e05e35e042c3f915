#!/usr/bin/env bash
# Here (the build machine): packs what bench/gpu-session.sh runs on the GPU machine into
# .device/stage.tar.xz. The device tool carries the working tree (about 58 MB, mostly
# tests/data) plus carried paths within 64 MiB, so the binaries travel stripped and xz-packed
# (about 4 MB; unpacked, with debug info, they are over 300 MB).
#
#   bench/stage-gpu-session.sh [BUILD_DIR]   # default build/, after scripts/test.sh or a build
#   device run: carry [".device"], timeout_s 590, command "bench/gpu-session.sh"
#
# BUILD_DIR must lie inside the source tree it was configured from: the test binary has that
# tree's paths compiled in (tests/data, BUILD_DIR/courier), and gpu-session.sh recreates them
# on the GPU machine from .device/stage/paths.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "stage-gpu-session: no ${1:-build}/" >&2; exit 2; }
cache=$build/CMakeCache.txt
[[ -f $cache ]] || { echo "stage-gpu-session: $build is not a CMake build folder" >&2; exit 2; }
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
case $build/ in
  "$src"/*) rel=${build#"$src"/} ;;
  *) echo "stage-gpu-session: $build is not inside its source tree $src" >&2; exit 2 ;;
esac
bins=("$build/courier" "$build/courier-bench" "$build/courier-trace" "$build/tests/courier_tests")
for b in "${bins[@]}"; do [[ -x $b ]] || { echo "stage-gpu-session: $b is not built" >&2; exit 2; }; done
[[ -f $build/gpu/libcourier_gpu_cuda.a ]] ||
  { echo "stage-gpu-session: $build has no CUDA backend (was nvcc found?)" >&2; exit 2; }
rm -rf .device/stage .device/stage.tar.xz
mkdir -p .device
scripts/stage-for-device.sh .device/stage "${bins[@]}" >/dev/null
strip .device/stage/bin/*
printf 'src_dir=%q\nbuild_rel=%q\n' "$src" "$rel" >.device/stage/paths.sh
XZ_OPT=-9e tar -C .device -cJf .device/stage.tar.xz stage  # every MiB counts (below)
rm -rf .device/stage
tree_b=$(git ls-files -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
stage_b=$(stat -c %s .device/stage.tar.xz)
echo "stage-gpu-session: .device/stage.tar.xz $((stage_b / 1048576)) MiB (from $build);" \
  "tracked tree $((tree_b / 1048576)) MiB; the device tool's limit for both: 64 MiB"
# Leave half a MiB for what else travels (untracked files). A build for every architecture
# (COURIER_CUDA_ARCHS) carries four copies of the kernels; the H200 runs only sm_90a.
if (( tree_b + stage_b > 127 * 524288 )); then
  echo "stage-gpu-session: too large to travel: stage from a build of the H200's kernels alone," \
    "e.g. cmake -S . -B build-h200 -G Ninja -DCOURIER_CUDA_ARCHS=90a -DCOURIER_CUDA_PTX= &&" \
    "cmake --build build-h200 && bench/stage-gpu-session.sh build-h200" >&2
  rm -f .device/stage.tar.xz
  exit 2
fi
