#!/usr/bin/env bash
# A mixed soak: the server's resident memory over minutes of every kind of request at once, to
# tell a leak from a cache filling up to its bound. Starts `courier serve` on the bundled tiny
# model, runs bench/soak.mjs (clients that loop over chat, streaming and streams cut off,
# structured outputs with a new schema or regex each time, tools, the Anthropic and Responses
# APIs, /tokenize, bad bodies), samples the server's RSS every 10 s, and prints the series, the
# slope over each half (MiB/min), operations, 5xx and requests that never ended, and what the
# server holds at the end (running requests, KV usage, LoRA slots in use).
#
#   bench/soak.sh [--build build] [--config configs/default.yaml] [--port 8125] [--minutes 10]
#       [--clients 6] [--ops REGEX] [--set key=value ...]
#
# --ops REGEX: only the operations whose names match (see bench/soak.mjs), to find what grows.
#
# A leak keeps rising at the same rate; a bounded cache rises to its bound and stays (rerun with
# a smaller bound, e.g. --set server.grammar_cache_mb=32, and the plateau moves with it).
set -euo pipefail

build=build config=configs/default.yaml port=8125 minutes=10 clients=6 ops=.
sets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --minutes) minutes="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --ops) ops="$2"; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "soak: unknown flag $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -x "$build/courier" ]] || { echo "soak: $build/courier must be built" >&2; exit 2; }

work=$(mktemp -d)
source "$(dirname "$0")/lib/courier-server.sh"
cleanup() {
  stop_courier
  rm -rf "$work"
}
trap cleanup EXIT
serve_courier soak "$work" "$port" --config "$config" "${sets[@]}"

rss_mib() { awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$server/status"; }
(
  start=$SECONDS
  while kill -0 $server 2>/dev/null && [[ ! -e "$work/done" ]]; do
    echo "$(( SECONDS - start )) $(rss_mib)" >>"$work/rss.txt"
    sleep 10
  done
) &
sampler=$!

began=$SECONDS
node "$(dirname "$0")/soak.mjs" "$base" "$model" "$minutes" "$clients" "$ops" >"$work/clients.txt"
touch "$work/done"
wait $sampler 2>/dev/null || true
echo "$(( SECONDS - began )) $(rss_mib)" >>"$work/rss.txt"

cat "$work/clients.txt"
metric() { curl -s "$base/metrics" | awk -v m="$1" 'index($1, m "{") == 1 || $1 == m { print $2; exit }'; }
echo "held at the end: running $(metric courier:num_requests_running), waiting" \
  "$(metric courier:num_requests_waiting), KV usage $(metric courier:kv_cache_usage_perc)," \
  "LoRA slots in use $(metric courier:lora_slots_in_use)"
echo "server RSS (s MiB): $(tr '\n' ' ' <"$work/rss.txt")"
awk '{ t[NR] = $1; r[NR] = $2 } END {
  h = int((NR + 1) / 2)
  slope1 = t[h] > t[1] ? (r[h] - r[1]) / ((t[h] - t[1]) / 60) : 0
  slope2 = t[NR] > t[h] ? (r[NR] - r[h]) / ((t[NR] - t[h]) / 60) : 0
  printf "RSS slope, first half: %.1f MiB/min; second half: %.1f MiB/min (%d -> %d -> %d MiB)\n",
    slope1, slope2, r[1], r[h], r[NR] }' \
  "$work/rss.txt"
