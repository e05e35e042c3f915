#!/usr/bin/env bash
# Serving throughput with every request constrained by a grammar, against the same load with
# none: courier-bench on /v1/chat/completions at --concurrency (default 16), each request
# ignore_eos with --output-len tokens (a completed grammar then allows only EOS, so every
# request does the same number of steps), temperature 1. Rounds alternate the modes so that
# machine noise falls on both; prints each round's output tokens/s and the ratios of the
# medians (the goal is >= 0.95).
#
#   bench/structured-throughput.sh [--build build] [--config configs/default.yaml] [--port 8125]
#       [--prompts 64] [--concurrency 16] [--output-len 128] [--rounds 3]
#       [--schema tests/data/schemas/person.json] [--set key=value ...]
#
# Modes: none; json_schema (--schema, as response_format); json_object. The first round of each
# grammar also fills its mask cache (cold positions are 10-35 ms each, bench/grammar): it is a
# warm-up and not counted.
set -euo pipefail

build=build config=configs/default.yaml port=8125 prompts=64 concurrency=16 output_len=128
rounds=3 schema=tests/data/schemas/person.json
sets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --prompts) prompts="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --output-len) output_len="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --schema) schema="$2"; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "structured-throughput: unknown flag $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -x "$build/courier" && -x "$build/courier-bench" ]] ||
  { echo "structured-throughput: $build/courier and $build/courier-bench must be built" >&2; exit 2; }

work=$(mktemp -d)
source "$(dirname "$0")/lib/courier-server.sh"
cleanup() {
  stop_courier
  rm -rf "$work"
}
trap cleanup EXIT
serve_courier structured-throughput "$work" "$port" --config "$config" "${sets[@]}"

declare -A extra
extra[none]='{}'
extra[json_schema]="{\"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"doc\", \"schema\": $(cat "$schema")}}}"
extra[json_object]='{"response_format": {"type": "json_object"}}'

run() {  # $1: mode, $2: label; prints output tokens/s
  "$build/courier-bench" --base-url "$base" --model "$model" --endpoint /v1/chat/completions \
    --num-prompts "$prompts" --max-concurrency "$concurrency" --random-input-len 64 \
    --random-output-len "$output_len" --ignore-eos --temperature 1 --vocab-size 1000 --seed 7 \
    --extra-body "${extra[$1]}" --label "$2" --result-json "$work/$2.json" >"$work/$2.txt" ||
    { echo "structured-throughput: $2 failed:" >&2; cat "$work/$2.txt" >&2; exit 1; }
  grep -o '"output_throughput": *[0-9.e+-]*' "$work/$2.json" | head -1 | sed 's/.*: *//'
}

run json_schema warmup-schema >/dev/null
run json_object warmup-object >/dev/null
declare -A results
for r in $(seq 1 "$rounds"); do
  for mode in none json_schema json_object; do
    t=$(run "$mode" "$mode-$r")
    results[$mode]+="$t "
    echo "round $r $mode: $t output tokens/s"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
none=$(echo "${results[none]}" | median)
for mode in json_schema json_object; do
  m=$(echo "${results[$mode]}" | median)
  echo "$mode: median $m vs none $none output tokens/s: ratio $(awk -v a="$m" -v b="$none" 'BEGIN { printf "%.3f", a / b }') (goal >= 0.95)"
done
