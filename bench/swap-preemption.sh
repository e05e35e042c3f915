#!/usr/bin/env bash
# Swap vs recompute preemption end to end: courier serves tiny-llama3 on the sim backend with a
# KV budget far below what its running sequences need (so it preempts all the time) and a host
# tier, and courier-bench sends random prompts with long outputs, once with
# cache.preemption=recompute and once with swap; prints throughput, TTFT and inter-token latency
# for each, the preemption metrics, and the tokens the steps fed (iteration_tokens_total_sum:
# recomputed prompt tokens count there, so it shows the recompute tax).
#
# --hybrid: the same on tiny-hybrid (NemotronH), whose swaps also copy each victim's Mamba-2
# state to a host state row (cache.ssm_host_tier_mb) and back.
#
#   bench/swap-preemption.sh [--hybrid] [--build build] [--out DIR] [--concurrency 16]
#                            [-- courier-bench flags]
set -euo pipefail
source "$(dirname "$0")/lib/serve-bench.sh"

build=build out=/tmp/swap-preemption conc=16 port=8133 name=tiny-llama3 state=()
if [[ "${1:-}" == --hybrid ]]; then
  shift
  name=tiny-hybrid state=(--set cache.ssm_host_tier_mb=16)
fi
model=tests/data/models/$name
parse_bench_flags swap-preemption "$@"
load=(--dataset-name random --num-prompts 64 --random-input-len 256 --random-output-len 256
      --random-range-ratio 0.5)

run() {  # $1: cache.preemption
  serve_and_bench "$1" \
    '^courier:(num_preemptions|kv_preemptions|kv_swap|generation_tokens|iteration_tokens_total_sum)' \
    --set model.served_name="$name" --set scheduler.num_kv_blocks=64 "${state[@]}" \
    --set cache.host_tier_mb=64 --set cache.preemption="$1" --set scheduler.max_num_seqs=16 \
    -- "${load[@]}" "${bench_extra[@]}"
  echo "== preemption: $1"
  grep -iE "throughput|TTFT|ITL" "$out/$1.txt" || cat "$out/$1.txt"
  cat "$out/$1-metrics.txt"
}

run recompute
run swap
