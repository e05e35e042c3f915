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

build=build out=/tmp/hybrid-prefix conc=4 port=8131
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --concurrency) conc="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "hybrid-prefix: unknown flag $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
model=tests/data/models/tiny-hybrid

shared=(--dataset-name shared-prefix --gsp-num-groups 8 --gsp-prompts-per-group 8
        --gsp-system-prompt-len 1024 --gsp-question-len 64 --gsp-output-len 32)
turns=(--dataset-name multi-turn --mt-conversations 8 --mt-turns 4 --mt-system-prompt-len 512
       --mt-message-len 96 --mt-output-len 96)

run() {  # $1: label, $2: prefix_caching, then courier-bench flags
  local label="$1" caching="$2"
  shift 2
  "$build/courier" serve --config configs/default.yaml --set model.path="$model" \
    --set model.served_name=tiny-hybrid --set scheduler.prefix_caching="$caching" \
    --set server.port="$port" --set scheduler.max_num_seqs=16 >"$out/$label-server.log" 2>&1 &
  server=$!
  trap 'kill -INT $server 2>/dev/null || true' EXIT
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
  "$build/courier-bench" --base-url "http://127.0.0.1:$port" --ignore-eos --tokenizer "$model" \
    --max-concurrency "$conc" --seed 1 --label "$label" --result-json "$out/$label.json" "$@" \
    >"$out/$label.txt"
  curl -sf "http://127.0.0.1:$port/metrics" | grep -E '^courier:(ssm_snapshot|prefix_cache)' \
    >"$out/$label-metrics.txt" || true
  kill -INT $server; wait $server || true
  trap - EXIT
  echo "== cache $label (prefix_caching=$caching)"
  grep -iE "TTFT|cached|Request throughput|Output token throughput" "$out/$label.txt" ||
    cat "$out/$label.txt"
}

run shared-on true "${shared[@]}" "$@"
cat "$out/shared-on-metrics.txt"
run shared-off false "${shared[@]}" "$@"
run turns-on true "${turns[@]}" "$@"
cat "$out/turns-on-metrics.txt"
run turns-off false "${turns[@]}" "$@"
