#!/usr/bin/env bash
# A hybrid model's prefix cache end to end: courier serves tiny-hybrid (NemotronH) on the sim
# backend, and courier-bench sends two workloads with the cache on and then off: sglang's
# generated-shared-prefix (groups of prompts sharing a long system prompt, interleaved) and
# multi-turn conversations (each turn the conversation so far and a new message, sent when the
# turn before ended); prints TTFT and the cached share of prompt tokens for each, and the
# snapshot metrics of the cached runs.
#
#   bench/hybrid-prefix.sh [--build build] [--out DIR] [--concurrency 4] [-- courier-bench flags]
set -euo pipefail
source "$(dirname "$0")/lib/serve-bench.sh"

build=build out=/tmp/hybrid-prefix conc=4 port=8131 model=tests/data/models/tiny-hybrid
parse_bench_flags hybrid-prefix "$@"

shared=(--dataset-name shared-prefix --gsp-num-groups 8 --gsp-prompts-per-group 8
        --gsp-system-prompt-len 1024 --gsp-question-len 64 --gsp-output-len 32)
turns=(--dataset-name multi-turn --mt-conversations 8 --mt-turns 4 --mt-system-prompt-len 512
       --mt-message-len 96 --mt-output-len 96)

run() {  # $1: label, $2: prefix_caching, then courier-bench flags
  local label="$1" caching="$2"
  shift 2
  serve_and_bench "$label" '^courier:(ssm_snapshot|prefix_cache)' \
    --set model.served_name=tiny-hybrid --set scheduler.prefix_caching="$caching" \
    --set scheduler.max_num_seqs=16 -- "$@"
  echo "== cache $label (prefix_caching=$caching)"
  grep -iE "TTFT|cached|Request throughput|Output token throughput" "$out/$label.txt" ||
    cat "$out/$label.txt"
}

run shared-on true "${shared[@]}" "${bench_extra[@]}"
cat "$out/shared-on-metrics.txt"
run shared-off false "${shared[@]}" "${bench_extra[@]}"
run turns-on true "${turns[@]}" "${bench_extra[@]}"
cat "$out/turns-on-metrics.txt"
run turns-off false "${turns[@]}" "${bench_extra[@]}"
