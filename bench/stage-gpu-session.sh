#!/usr/bin/env bash
# Here (the build machine): packs what bench/gpu-session.sh runs on the GPU machine into
# .device/stage.tar.xz. The device tool carries the working tree (about 58 MB, mostly
# tests/data) plus carried paths within 64 MiB, so the binaries travel stripped and xz-packed
# (about 4 MB; unpacked, with debug info, they are over 300 MB).
#
#   bench/stage-gpu-session.sh            # after scripts/test.sh or a build in build/
#   device run: carry [".device"], timeout_s 590, command "bench/gpu-session.sh"
set -euo pipefail
cd "$(dirname "$0")/.."
bins=(build/courier build/courier-bench build/courier-trace build/tests/courier_tests)
for b in "${bins[@]}"; do [[ -x $b ]] || { echo "stage-gpu-session: $b is not built" >&2; exit 2; }; done
[[ -f build/gpu/libcourier_gpu_cuda.a ]] ||
  { echo "stage-gpu-session: build/ has no CUDA backend (was nvcc found?)" >&2; exit 2; }
rm -rf .device/stage .device/stage.tar.xz
mkdir -p .device
../shared/tools/stage-for-device.sh .device/stage "${bins[@]}" >/dev/null
strip .device/stage/bin/*
tar -C .device -cJf .device/stage.tar.xz stage
rm -rf .device/stage
tree_mb=$(git ls-files -z | xargs -0 du -cb | tail -1 | awk '{print $1 / 1048576}')
echo "stage-gpu-session: .device/stage.tar.xz $(du -m .device/stage.tar.xz | cut -f1) MB; tracked tree ${tree_mb%.*} MB; limit 64 MiB"
