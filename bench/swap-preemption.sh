#!/usr/bin/env bash
# Swap vs recompute preemption end to end: courier serves tiny-llama3 on the sim backend with a
# KV budget far below what its running sequences need (so it preempts all the time) and a host
# tier, and courier-bench sends random prompts with long outputs, once with
# cache.preemption=recompute and once with swap; prints throughput, TTFT and inter-token latency
# for each, the preemption metrics, and the tokens the steps fed (iteration_tokens_total_sum:
# recomputed prompt tokens count there, so it shows the recompute tax).
#
#   bench/swap-preemption.sh [--build build] [--out DIR] [--concurrency 16] [-- courier-bench flags]
set -euo pipefail

build=build out=/tmp/swap-preemption conc=16 port=8133
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --concurrency) conc="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "swap-preemption: unknown flag $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
model=tests/data/models/tiny-llama3
load=(--dataset-name random --num-prompts 64 --random-input-len 256 --random-output-len 256
      --random-range-ratio 0.5)

run() {  # $1: cache.preemption, then courier-bench flags
  local mode="$1"
  shift
  "$build/courier" serve --config configs/default.yaml --set model.path="$model" \
    --set model.served_name=tiny-llama3 --set scheduler.num_kv_blocks=64 \
    --set cache.host_tier_mb=64 --set cache.preemption="$mode" --set server.port="$port" \
    --set scheduler.max_num_seqs=16 >"$out/$mode-server.log" 2>&1 &
  server=$!
  trap 'kill -INT $server 2>/dev/null || true' EXIT
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
  "$build/courier-bench" --base-url "http://127.0.0.1:$port" --ignore-eos --tokenizer "$model" \
    --max-concurrency "$conc" --seed 1 --label "$mode" --result-json "$out/$mode.json" "$@" \
    >"$out/$mode.txt"
  curl -sf "http://127.0.0.1:$port/metrics" |
    grep -E '^courier:(num_preemptions|kv_preemptions|kv_swap|generation_tokens|iteration_tokens_total_sum)' \
    >"$out/$mode-metrics.txt" || true
  kill -INT $server; wait $server || true
  trap - EXIT
  echo "== preemption: $mode"
  grep -iE "throughput|TTFT|ITL" "$out/$mode.txt" || cat "$out/$mode.txt"
  cat "$out/$mode-metrics.txt"
}

run recompute "${load[@]}" "$@"
run swap "${load[@]}" "$@"
