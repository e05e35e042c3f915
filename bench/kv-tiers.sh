#!/usr/bin/env bash
# The KV host tier end to end: courier serves tiny-llama3 on the sim backend with a KV budget a
# quarter of the workload's shared prefixes (sglang's generated-shared-prefix: groups of prompts
# sharing a long system prompt, interleaved, so a group's prefix is evicted before its next
# prompt), with the host tier off and on; prints the cached share of prompt tokens, TTFT and
# throughput for each, and the tier's metrics.
#
#   bench/kv-tiers.sh [--build build] [--out DIR] [--concurrency 4] [-- courier-bench flags]
set -euo pipefail

build=build out=/tmp/kv-tiers conc=4 port=8135
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --concurrency) conc="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "kv-tiers: unknown flag $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
model=tests/data/models/tiny-llama3
# 16 groups x 512-token system prompts: 8192 prefix tokens (512 blocks) for 128 device blocks.
load=(--dataset-name shared-prefix --gsp-num-groups 16 --gsp-prompts-per-group 6
      --gsp-system-prompt-len 512 --gsp-question-len 32 --gsp-output-len 16)

run() {  # $1: label, $2: cache.host_tier_mb, then courier-bench flags
  local label="$1" host="$2"
  shift 2
  "$build/courier" serve --config configs/default.yaml --set model.path="$model" \
    --set model.served_name=tiny-llama3 --set scheduler.num_kv_blocks=128 \
    --set cache.host_tier_mb="$host" --set server.port="$port" \
    --set scheduler.max_num_seqs=16 >"$out/$label-server.log" 2>&1 &
  server=$!
  trap 'kill -INT $server 2>/dev/null || true' EXIT
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
  "$build/courier-bench" --base-url "http://127.0.0.1:$port" --ignore-eos --tokenizer "$model" \
    --max-concurrency "$conc" --seed 1 --label "$label" --result-json "$out/$label.json" "$@" \
    >"$out/$label.txt"
  curl -sf "http://127.0.0.1:$port/metrics" |
    grep -E '^courier:(prefix_cache_(hits|queries|host_hits)|kv_host_tier)' \
    >"$out/$label-metrics.txt" || true
  kill -INT $server; wait $server || true
  trap - EXIT
  echo "== host tier: $label (cache.host_tier_mb=$host)"
  grep -iE "cached|TTFT|Request throughput|Output token throughput" "$out/$label.txt" ||
    cat "$out/$label.txt"
  cat "$out/$label-metrics.txt"
}

run off 0 "${load[@]}" "$@"
run host 64 "${load[@]}" "$@"
