#!/usr/bin/env bash
# How much a flood of hostile requests slows an honest stream: a victim's output tokens/s
# alone, then while 4 attacker loops send them, printed with their ratio (the goal is >= 0.8).
# --attack body (the default): 15 MB prompts that the server rightly refuses (chat completions
# and /tokenize, alternating). --attack grammar: the grammar bombs of the hostile-input report,
# in turn (regexes that blow up, schemas of thousands of properties, anyOf branches and long
# keys, an enum and a GBNF of 100,000 literals, a 50,000-word alternation, and regexes
# `[a-z ]{0,4000}qN` each its own grammar that generate 64 tokens; and a body whose metadata
# has 80,000 members), each answered by a 400
# naming the limit or served; the codes are counted per bomb.
#
#   bench/victim-stream.sh [--build build] [--config configs/default.yaml] [--port 8124]
#       [--attack body|grammar] [--attackers 4] [--attack-mb 15] [--victim-requests 4]
#       [--attacker-nice 0] [--bombs REGEX] [--control] [--set key=value ...]
#
# --bombs REGEX: only the bombs whose names match (grep -E), e.g. --bombs 'schema|gbnf|words'.
# --control (grammar): the victim once more while the attackers send the same requests without
# their grammars, each generating all its tokens: the attackers' generation shares the device
# with the victim on any server, so attacked / control is what the grammars themselves cost it.
#
# The victim runs courier-bench at concurrency 1 (--victim-requests prompts of 64 tokens, 128
# output tokens each, ignore_eos). The attack loops run only while the victim runs, each request
# bounded by curl's --max-time; everything goes to 127.0.0.1 and stops by itself.
# --attacker-nice 19 runs the attack clients (curl) at the lowest priority: on a small machine
# that the server shares with them, they then stand in for clients on other machines, and the
# ratio measures the server's isolation rather than the CPU its clients take.
set -euo pipefail

build=build config=configs/default.yaml port=8124 attackers=4 attack_mb=15 victim_requests=4
attacker_nice=0 attack_kind=body bomb_filter=. control=0
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
    --attack) attack_kind="$2"; shift 2 ;;
    --bombs) bomb_filter="$2"; shift 2 ;;
    --control) control=1; shift ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    *) echo "victim-stream: unknown flag $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -x "$build/courier" && -x "$build/courier-bench" ]] ||
  { echo "victim-stream: $build/courier and $build/courier-bench must be built" >&2; exit 2; }

work=$(mktemp -d)
source "$(dirname "$0")/lib/courier-server.sh"
cleanup() {
  touch "$work/stop"
  stop_courier
  rm -rf "$work"
}
trap cleanup EXIT
serve_courier victim-stream "$work" "$port" --config "$config" \
  --set server.max_body_bytes=$(( (attack_mb + 1) * 1024 * 1024 )) "${sets[@]}"

# The attack bodies: one user message (or /tokenize prompt) of attack_mb MB of text.
filler() { head -c $(( attack_mb * 1000 * 1000 )) /dev/zero | tr '\0' 'a'; }
{ printf '{"model":"%s","messages":[{"role":"user","content":"' "$model"; filler; printf '"}],"max_tokens":8}'; } >"$work/chat.json"
{ printf '{"prompt":"'; filler; printf '"}'; } >"$work/tokenize.json"

# The grammar bombs, one chat body each (bomb-NAME.json), written by Node (tests/node's runtime).
write_bombs() {
  node - "$work" "$model" <<'JS'
const fs = require("fs");
const [dir, model] = process.argv.slice(2);
const chat = (extra, maxTokens = 8) => ({
  model, messages: [{ role: "user", content: "Go" }], max_tokens: maxTokens, ...extra });
const schema = (s) => ({ response_format: { type: "json_schema", json_schema: { name: "b", schema: s } } });
const props = (n, key) => Object.fromEntries(Array.from({ length: n }, (_, i) => [key(i), { type: "string" }]));
const words = (n) => Array.from({ length: n }, (_, i) => "w" + i.toString(36));
const bombs = {
  "regex-any-repeat": chat({ guided_regex: "(.*){1,10000}" }),
  "regex-class-repeat": chat({ guided_regex: "[\\s\\S]{0,10000}" }),
  "regex-nullable-alt": chat({ guided_regex: "(a|a?){1,5000}" }),
  "regex-star-pair": chat({ guided_regex: "([a-z]*[0-9]*){1,2000}" }),
  "regex-nested-groups": chat({ guided_regex: "(".repeat(200) + "a" + ")".repeat(200) }),
  "schema-pattern": chat(schema({ type: "string", pattern: "(.*){1,10000}" })),
  "gbnf-repeat": chat({ guided_grammar: "root ::= x{1,10000}\nx ::= [a-z]*" }),
  "schema-5000-optional": chat(schema({ type: "object", properties: props(5000, (i) => "p" + i) })),
  "schema-3000-anyof": chat(schema({ anyOf: Array.from({ length: 3000 }, (_, i) => ({ type: "object", properties: { ["k" + i]: { type: "integer" } }, required: ["k" + i] })) })),
  "schema-3000-long-keys": chat(schema({ type: "object", properties: props(3000, (i) => "key_" + "x".repeat(60) + i) })),
  "regex-50000-words": chat({ guided_regex: "(" + words(50000).join("|") + ")" }),
  "schema-enum-100000": chat(schema({ enum: words(100000) })),
  "gbnf-100000-literals": chat({ guided_grammar: "root ::= " + words(100000).map((w) => JSON.stringify(w)).join(" | ") }),
  "choice-100000": chat({ guided_choice: words(100000) }),
  // 80,000 members in one object (870 KB, under the large-body lane's 1 MiB): the ordered parse
  // of a body was quadratic in an object's members.
  "body-80000-keys": chat({ metadata: Object.fromEntries(Array.from({ length: 80000 }, (_, i) => ["k" + i, 0])) }),
  "schema-20000-required": chat(schema({ type: "object", properties: props(20000, (i) => "r" + i), required: Array.from({ length: 20000 }, (_, i) => "r" + i) })),
};
// Ambiguous: after n a's the copies have split them ~n/2 ways, a parse stack each, each a walk
// of the vocabulary on a decoding step; past server.grammar_max_branches stacks the request fails.
bombs["regex-ambiguous"] = chat({ guided_regex: "(a|aa){1,5000}" }, 64);
for (let q = 0; q < 8; q++) bombs["regex-long-q" + q] = chat({ guided_regex: "[a-z ]{0,4000}q" + q }, 64);
for (const [name, body] of Object.entries(bombs)) {
  fs.writeFileSync(`${dir}/bomb-${name}.json`, JSON.stringify(body));
  // --control: the same request without its grammar, generating all its tokens.
  const free = { ...body, ignore_eos: true };
  for (const k of ["guided_regex", "guided_grammar", "guided_choice", "guided_json", "response_format"]) delete free[k];
  fs.writeFileSync(`${dir}/free-${name}.json`, JSON.stringify(free));
}
JS
}

victim() {  # $1: label; prints output tokens/s
  "$build/courier-bench" --base-url "$base" --model "$model" --num-prompts "$victim_requests" \
    --max-concurrency 1 --random-input-len 64 --random-output-len 128 --ignore-eos \
    --vocab-size 1000 --seed 7 --label "$1" --result-json "$work/$1.json" >"$work/$1.txt"
  grep -o '"output_throughput": *[0-9.e+-]*' "$work/$1.json" | head -1 | sed 's/.*: *//'
}

attack() {  # one attacker ($1: its index; $2: bomb, or free for --control's): until told to stop
  local i=$1 kind=${2:-bomb} deadline=$(( SECONDS + 600 ))
  local bombs=()
  [[ $attack_kind == grammar ]] && mapfile -t bombs < <(ls "$work"/$kind-*.json | grep -E -- "$bomb_filter")
  while [[ ! -e "$work/stop" && $SECONDS -lt $deadline ]]; do
    local path=/v1/chat/completions file=chat.json
    if [[ $attack_kind == grammar ]]; then
      file=$(basename "${bombs[i % ${#bombs[@]}]}")
      i=$(( i + 1 ))
      nice -n "$attacker_nice" curl -s -o /dev/null -w "${file#$kind-} %{http_code} %{time_total}\n" \
        --max-time 60 -H 'content-type: application/json' --data-binary @"$work/$file" \
        "$base$path" >>"$work/$kind-codes.txt" || true
      continue
    fi
    (( i++ % 2 )) && { path=/tokenize; file=tokenize.json; }
    nice -n "$attacker_nice" curl -s -o /dev/null -w '%{http_code}\n' --max-time 60 -H 'content-type: application/json' \
      --data-binary @"$work/$file" "$base$path" >>"$work/attack-codes.txt" || true
  done
}

under() {  # the victim's rate while the attackers send $1 (bomb, or free)
  rm -f "$work/stop"
  local pids=()
  for a in $(seq 1 "$attackers"); do attack "$a" "$1" & pids+=($!); done
  sleep 1  # let the attack reach full force
  victim "$1"
  touch "$work/stop"
  wait "${pids[@]}" 2>/dev/null || true
}

[[ $attack_kind == grammar ]] && write_bombs
alone=$(victim alone)
attacked=$(under bomb)

ratio=$(awk -v a="$alone" -v b="$attacked" 'BEGIN { printf "%.3f", (a > 0 ? b / a : 0) }')
echo "victim output tokens/s alone:        $alone"
if [[ $attack_kind == grammar ]]; then
  echo "victim output tokens/s under attack: $attacked ($attackers attackers at nice $attacker_nice, grammar bombs)"
  echo "per bomb: requests, HTTP codes, mean seconds to answer"
  awk '{ n[$1]++; c[$1] = c[$1] " " $2; t[$1] += $3 }
       END { for (b in n) { split(c[b], a, " "); delete seen; codes = "";
             for (k in a) if (!seen[a[k]]++) codes = codes (codes ? "," : "") a[k];
             printf "  %-28s %3d  %-8s %.2f s\n", b, n[b], codes, t[b] / n[b] } }' \
    "$work/bomb-codes.txt" | sort
  if [[ $control == 1 ]]; then
    free=$(under free)
    echo "victim output tokens/s under control:  $free (the same requests without their grammars, generating every token)"
    awk -v a="$attacked" -v b="$free" 'BEGIN { printf "ratio to the control: %.3f (goal >= 0.8: what the grammars cost the victim)\n", (b > 0 ? a / b : 0) }'
    echo "ratio to alone: $ratio (the attackers' generation included)"
    exit 0
  fi
else
  refused=$(grep -c '^4' "$work/attack-codes.txt" || true)
  total=$(wc -l <"$work/attack-codes.txt")
  echo "victim output tokens/s under attack: $attacked ($attackers attackers at nice $attacker_nice, ${attack_mb} MB bodies; $refused of $total attack requests refused with 4xx)"
fi
echo "ratio: $ratio (goal >= 0.8)"
