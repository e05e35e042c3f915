#!/usr/bin/env bash
# Stages binaries built on this (Debian 12) machine for a run on a GPU machine that has its own
# glibc, libstdc++ and CUDA but not our Debian libraries (CAF, yaml-cpp, fmt, spdlog, utf8proc,
# pcre2, prometheus-cpp, ...) and no package registry: copies each binary, and every shared
# library it loads except those the GPU machine brings itself, into one folder, and writes
# env.sh there to point the loader at them.
#
#   usage: scripts/stage-for-device.sh OUT_DIR BINARY...
#   then, on the GPU machine: source OUT_DIR/env.sh && OUT_DIR/bin/courier_tests "[gpu]"
#
# bench/stage-gpu-session.sh uses it to pack what bench/gpu-session.sh runs. Libraries are
# located with ldd, so a binary that ldd cannot read (not built for this machine) is an error.
set -euo pipefail
out=${1:?usage: stage-for-device.sh OUT_DIR BINARY...}
shift
[[ $# -gt 0 ]] || { echo "stage-for-device: no binaries given" >&2; exit 2; }
# Left to the GPU machine: the C runtime, the C++ runtime (its copies are at least as new) and
# the driver and CUDA libraries, which must match its driver.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libnccl|libnvrtc|libnvJitLink|libcurand|libcusparse|libcufft|libcusolver)'
mkdir -p "$out/bin" "$out/lib"
for b in "$@"; do
  [[ -f $b ]] || { echo "stage-for-device: $b: no such file" >&2; exit 2; }
  deps=$(ldd "$b") || { echo "stage-for-device: ldd cannot read $b" >&2; exit 2; }
  cp -L "$b" "$out/bin/"
  while read -r name path; do
    [[ $name =~ $skip || -e $out/lib/$name ]] && continue
    [[ $path == /* ]] || { echo "stage-for-device: $b needs $name, which is not found here" >&2; exit 2; }
    cp -L "$path" "$out/lib/$name"
  done < <(awk '$2 == "=>" {print $1" "$3}' <<<"$deps")
done
cat >"$out/env.sh" <<'ENV'
# Sourced on the GPU machine: the staged binaries first on PATH; the staged libraries, then the
# CUDA toolkit's, before the system's.
_d=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$_d/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$_d/bin:$PATH"
unset _d
ENV
echo "stage-for-device: $(du -sh "$out" | cut -f1) in $out: bin/ $(ls "$out/bin" | tr '\n' ' ')"
echo "stage-for-device: lib/ $(ls "$out/lib" | tr '\n' ' ')"
