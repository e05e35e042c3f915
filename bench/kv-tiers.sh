#!/usr/bin/env bash
# The KV host tier end to end: courier serves tiny-llama3 on the sim backend with a KV budget a
# quarter of the workload's shared prefixes (sglang's generated-shared-prefix: groups of prompts
# sharing a long system prompt, interleaved, so a group's prefix is evicted before its next
# prompt), with the host tier off and on; prints the cached share of prompt tokens, TTFT and
# throughput for each, and the tier's metrics.
#
#   bench/kv-tiers.sh [--build build] [--out DIR] [--concurrency 4] [-- courier-bench flags]
set -euo pipefail
source "$(dirname "$0")/lib/serve-bench.sh"

build=build out=/tmp/kv-tiers conc=4 port=8135 model=tests/data/models/tiny-llama3
parse_bench_flags kv-tiers "$@"
# 16 groups x 512-token system prompts: 8192 prefix tokens (512 blocks) for 128 device blocks.
load=(--dataset-name shared-prefix --gsp-num-groups 16 --gsp-prompts-per-group 6
      --gsp-system-prompt-len 512 --gsp-question-len 32 --gsp-output-len 16)

run() {  # $1: label, $2: cache.host_tier_mb
  serve_and_bench "$1" '^courier:(prefix_cache_(hits|queries|host_hits)|kv_host_tier)' \
    --set model.served_name=tiny-llama3 --set scheduler.num_kv_blocks=128 \
    --set cache.host_tier_mb="$2" --set scheduler.max_num_seqs=16 \
    -- "${load[@]}" "${bench_extra[@]}"
  echo "== host tier: $1 (cache.host_tier_mb=$2)"
  grep -iE "cached|TTFT|Request throughput|Output token throughput" "$out/$1.txt" ||
    cat "$out/$1.txt"
  cat "$out/$1-metrics.txt"
}

run off 0
run host 64
