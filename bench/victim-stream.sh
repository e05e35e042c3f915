#!/usr/bin/env bash
# How much a flood of oversized requests slows an honest stream: a victim's output tokens/s
# alone, then while 4 attacker loops send 15 MB prompts that the server rightly refuses (chat
# completions and /tokenize, alternating), printed with their ratio (the goal is >= 0.8).
#
#   bench/victim-stream.sh [--build build] [--config configs/default.yaml] [--port 8124]
#       [--attackers 4] [--attack-mb 15] [--victim-requests 4] [--attacker-nice 0]
#       [--set key=value ...]
#
# The victim runs courier-bench at concurrency 1 (--victim-requests prompts of 64 tokens, 128
# output tokens each, ignore_eos). The attack loops run only while the victim runs, each request
# bounded by curl's --max-time; everything goes to 127.0.0.1 and stops by itself.
# --attacker-nice 19 runs the attack clients (curl) at the lowest priority: on a small machine
# that the server shares with them, they then stand in for clients on other machines, and the
# ratio measures the server's isolation rather than the CPU its clients take.
set -euo pipefail

build=build config=configs/default.yaml port=8124 attackers=4 attack_mb=15 victim_requests=4
attacker_nice=0
sets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --attackers) attackers="$2"; shift 2 ;;
    --attack-mb) attack_mb="$2"; shift 2 ;;
    --victim-requests) victim_requests="$2"; shift 2 ;;
    --attacker-nice) attacker_nice="$2"; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "victim-stream: unknown flag $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -x "$build/courier" && -x "$build/courier-bench" ]] ||
  { echo "victim-stream: $build/courier and $build/courier-bench must be built" >&2; exit 2; }

work=$(mktemp -d)
"$build/courier" serve --config "$config" --set server.port="$port" \
  --set server.max_body_bytes=$(( (attack_mb + 1) * 1024 * 1024 )) "${sets[@]}" \
  >"$work/server.log" 2>&1 &
server=$!
cleanup() {
  touch "$work/stop"
  kill -INT $server 2>/dev/null || true
  wait $server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

base="http://127.0.0.1:$port"
for _ in $(seq 1 600); do
  curl -sf "$base/health" >/dev/null 2>&1 && break
  kill -0 $server 2>/dev/null || { echo "victim-stream: the server exited:" >&2; cat "$work/server.log" >&2; exit 1; }
  sleep 0.5
done
model=$(curl -sf "$base/v1/models" | sed -E 's/.*"id":"([^"]+)".*/\1/')

# The attack bodies: one user message (or /tokenize prompt) of attack_mb MB of text.
filler() { head -c $(( attack_mb * 1000 * 1000 )) /dev/zero | tr '\0' 'a'; }
{ printf '{"model":"%s","messages":[{"role":"user","content":"' "$model"; filler; printf '"}],"max_tokens":8}'; } >"$work/chat.json"
{ printf '{"prompt":"'; filler; printf '"}'; } >"$work/tokenize.json"

victim() {  # $1: label; prints output tokens/s
  "$build/courier-bench" --base-url "$base" --model "$model" --num-prompts "$victim_requests" \
    --max-concurrency 1 --random-input-len 64 --random-output-len 128 --ignore-eos \
    --vocab-size 1000 --seed 7 --label "$1" --result-json "$work/$1.json" >"$work/$1.txt"
  grep -o '"output_throughput": *[0-9.e+-]*' "$work/$1.json" | head -1 | sed 's/.*: *//'
}

attack() {  # one attacker: alternate chat and /tokenize until told to stop (at most 10 min)
  local i=0 deadline=$(( SECONDS + 600 ))
  while [[ ! -e "$work/stop" && $SECONDS -lt $deadline ]]; do
    local path=/v1/chat/completions file=chat.json
    (( i++ % 2 )) && { path=/tokenize; file=tokenize.json; }
    nice -n "$attacker_nice" curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 -H 'content-type: application/json' \
      --data-binary @"$work/$file" "$base$path" >>"$work/attack-codes.txt" || true
  done
}

alone=$(victim alone)
pids=()
for _ in $(seq 1 "$attackers"); do attack & pids+=($!); done
sleep 1  # let the attack reach full force
attacked=$(victim attacked)
touch "$work/stop"
wait "${pids[@]}" 2>/dev/null || true

refused=$(grep -c '^4' "$work/attack-codes.txt" || true)
total=$(wc -l <"$work/attack-codes.txt")
ratio=$(awk -v a="$alone" -v b="$attacked" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }')
echo "victim output tokens/s alone:        $alone"
echo "victim output tokens/s under attack: $attacked ($attackers attackers at nice $attacker_nice, ${attack_mb} MB bodies; $refused of $total attack requests refused with 4xx)"
echo "ratio: $ratio (goal >= 0.8)"
