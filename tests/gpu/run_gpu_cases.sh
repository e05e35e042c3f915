#!/usr/bin/env bash
# Runs the [gpu] cases (those that need a CUDA device) of a test binary in one process.
#
#   tests/gpu/run_gpu_cases.sh BUILD/tests/courier_tests
#     On the machine's GPUs; exits 77 (ctest: skipped) when there is nothing to run them on: a
#     build without the CUDA backend has no [gpu] cases, and a machine without an NVIDIA GPU has
#     no device. So ctest and CI summaries count the GPU checks as skipped there, never as passed.
#
#   tests/gpu/run_gpu_cases.sh --emulated BUILD/tests/courier_emulated_tests [DEVICES]
#     On the CUDA emulator (gpu/cuda_emu): the same cases, compiled a second time against it,
#     on the emulated devices DEVICES (COURIER_CUDA_EMU_DEVICES, default H100,H100). Nothing may
#     skip there: a case that asserts nothing (a skip's WARN and return) fails the run.
set -euo pipefail
if [[ ${1:-} == --emulated ]]; then
  binary=$2
  export COURIER_CUDA_EMU_DEVICES=${3:-${COURIER_CUDA_EMU_DEVICES:-H100,H100}}
  cases=$("$binary" "[gpu]" --list-test-names-only | grep -c . || true)
  echo "run_gpu_cases: $cases [gpu] cases on the CUDA emulator ($COURIER_CUDA_EMU_DEVICES)"
  exec "$binary" "[gpu]" --warn NoAssertions
fi
binary=$1
cases=$("$binary" "[gpu]" --list-test-names-only | grep -c . || true)
if [[ $cases == 0 ]]; then
  echo "run_gpu_cases: this build has no [gpu] cases (no CUDA backend): skipped"
  exit 77
fi
gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
fi
if [[ $gpus == 0 ]]; then
  echo "run_gpu_cases: no NVIDIA GPU (nvidia-smi -L lists none): $cases [gpu] cases skipped"
  exit 77
fi
echo "run_gpu_cases: $cases [gpu] cases on $gpus GPU(s)"
exec "$binary" "[gpu]"
