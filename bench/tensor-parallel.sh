#!/usr/bin/env bash
# Tensor parallelism end to end on the sim backend: courier serves tiny-qwen2 (4 heads, 2 KV
# heads) with parallel.tensor_size 1, 2 and 4, the sim's threads (device.sim.threads) shared
# among the ranks, and courier-bench sends the same random prompts to each; prints throughput,
# TTFT and inter-token latency per size, and each server's memory plan (weights, workspaces and
# KV blocks per rank). On the sim this measures the cost of the ranks' collectives (a barrier
# per all-reduce, two per layer) against the smaller per-rank GEMMs, not a GPU's speed-up: on
# CUDA, NCCL's all-reduce over NVLink is what TP pays for.
#
#   bench/tensor-parallel.sh [--build build] [--out DIR] [--concurrency 16]
#                            [-- courier-bench flags]
set -euo pipefail
source "$(dirname "$0")/lib/serve-bench.sh"

build=build out=/tmp/tensor-parallel conc=16 port=8137 model=tests/data/models/tiny-qwen2
parse_bench_flags tensor-parallel "$@"
load=(--dataset-name random --num-prompts 96 --random-input-len 256 --random-output-len 128
      --random-range-ratio 0.5)

for tp in 1 2 4; do
  serve_and_bench "tp$tp" '^courier:(generation_tokens_total|num_requests_running)' \
    --set model.served_name=tiny-qwen2 --set device.backend=sim --set device.sim.threads=4 \
    --set parallel.tensor_size="$tp" --set scheduler.max_num_seqs=16 \
    -- "${load[@]}" "${bench_extra[@]}"
  echo "== parallel.tensor_size: $tp"
  grep -E "courier: (loading|weights)" "$out/tp$tp-server.log" || true
  grep -iE "throughput|TTFT|ITL" "$out/tp$tp.txt" || cat "$out/tp$tp.txt"
done
