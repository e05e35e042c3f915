#!/usr/bin/env bash
# On the GPU machine, in one device call (a task has 15 minutes of device time in all): the CUDA
# backend's checks, then the speed figures. Staged here by bench/stage-gpu-session.sh; results go
# to $OUT (the device tool brings them back) or /tmp/gpu-session.
#   1. [gpu] tests: every kernel against the sim op, the fixtures against transformers (bf16).
#   2. The integration suite with device.backend cuda (outputs compared with the sim reference
#      under FIXTURES.md's bf16 rule).
#   3. bench-forward on the qwen3-0.6b and llama3-8b shapes with random weights, and llama3-8b's
#      decode once more with graphs off (engine.graph_max_batch=0), for what graphs change. Each
#      decode case is timed pipelined (ms_per_step, as the engine runs) and step by step
#      (ms_per_step_serial), for what the pipeline changes.
# Each step has its own time limit and the next runs whatever the last gave.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${OUT:-/tmp/gpu-session}
mkdir -p "$out"
tar -C .device -xJf .device/stage.tar.xz || { echo "gpu-session: no .device/stage.tar.xz (carry .device)"; exit 2; }
source .device/stage/env.sh
# The test binary has the paths of the tree it was built in compiled in (SRC/tests/data,
# SRC/BUILD/courier): SRC is made to lead here, and the binaries go to BUILD here.
source .device/stage/paths.sh
if [[ $src_dir != "$root" && ! -e $src_dir ]]; then
  mkdir -p "$(dirname "$src_dir")" && ln -s "$root" "$src_dir"
fi
[[ $(cd "$src_dir" && pwd -P) == "$(pwd -P)" ]] ||
  echo "gpu-session: $src_dir exists and is not this tree; tests that read it use its data"
build=$build_rel
mkdir -p "$build/tests"
cp .device/stage/bin/courier .device/stage/bin/courier-bench .device/stage/bin/courier-trace "$build/"
cp .device/stage/bin/courier_tests "$build/tests/"

step() {  # step NAME SECONDS COMMAND...: runs it, keeps its output, notes its status
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  echo "gpu-session: $name exit $rc in $((SECONDS - t0)) s" | tee -a "$out/summary.txt"
  tail -5 "$out/$name.txt"
}

nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.sm --format=csv >"$out/summary.txt" 2>&1
step gpu-tests 150 "$build/tests/courier_tests" "[gpu],[cuda]" --durations yes
# LoRA's integration tests make their adapters with Node (tests/lora), which the device machine
# may not have: left out here; the CUDA LoRA op is held to the sim by its [gpu] test.
step integration-cuda 200 env COURIER_TEST_BACKEND=cuda "$build/tests/courier_tests" "[integration]~[lora]"
for shape in qwen3-0.6b llama3-8b; do
  step "bench-forward-$shape" 100 "$build/courier" bench-forward --shape "$shape" --random-weights \
    --backend cuda --decode-steps 8 --json "$out/bench-forward-$shape.json"
done
# What the decode graphs buy: the same decode cases op by op (and one small prefill).
step bench-forward-llama3-8b-eager 80 "$build/courier" bench-forward --shape llama3-8b \
  --random-weights --backend cuda --decode-steps 8 --prefill 1x512 \
  --set engine.graph_max_batch=0 --json "$out/bench-forward-llama3-8b-eager.json"
