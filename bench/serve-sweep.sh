#!/usr/bin/env bash
# Starts courier with a config, runs courier-bench at each concurrency, stops the server, and
# collects the results: OUT/c<C>.json per run and OUT/sweep.json holding them all.
#
#   bench/serve-sweep.sh --config configs/default.yaml --out /tmp/sweep \
#       [--set key=value ...] [--concurrency "1 4 16 64"] [--prompts-per-level 4] \
#       [--build build] [--port 8123] -- [courier-bench flags: dataset, lengths, ...]
#
# Each level sends max(prompts-per-level x C, 8) prompts with --max-concurrency C and
# --request-rate inf, so the server sees C requests in flight for most of the run. Each level
# draws its prompts with --seed C, so a level does not find the previous level's prompts in the
# prefix cache (a --seed after -- overrides it). The same
# flags work against the GPU machine's build (--build DIR of the staged binaries).
set -euo pipefail

config="" out="" build="build" port=8123 per_level=4 levels="1 4 16 64"
sets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config) config="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --set) sets+=(--set "$2"); shift 2 ;;
    --concurrency) levels="$2"; shift 2 ;;
    --prompts-per-level) per_level="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "serve-sweep: unknown flag $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -n "$config" && -n "$out" ]] || { echo "serve-sweep: --config and --out are required" >&2; exit 2; }
[[ -x "$build/courier" && -x "$build/courier-bench" ]] ||
  { echo "serve-sweep: $build/courier and $build/courier-bench must be built" >&2; exit 2; }
mkdir -p "$out"

"$build/courier" serve --config "$config" "${sets[@]}" --set server.port="$port" \
  >"$out/server.log" 2>&1 &
server=$!
trap 'kill -INT $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT

base="http://127.0.0.1:$port"
for _ in $(seq 1 600); do  # the model may take a while to load on a GPU
  if curl -sf "$base/health" >/dev/null 2>&1; then break; fi
  kill -0 $server 2>/dev/null || { echo "serve-sweep: the server exited:" >&2; cat "$out/server.log" >&2; exit 1; }
  sleep 0.5
done
curl -sf "$base/health" >/dev/null || { echo "serve-sweep: the server did not come up" >&2; exit 1; }

status=0
files=()
for c in $levels; do
  n=$(( per_level * c > 8 ? per_level * c : 8 ))
  echo "serve-sweep: concurrency $c, $n prompts" >&2
  if ! "$build/courier-bench" --base-url "$base" --max-concurrency "$c" --num-prompts "$n" \
      --request-rate inf --seed "$c" --label "c$c" --result-json "$out/c$c.json" "$@" \
      >"$out/c$c.txt"; then
    status=1
  fi
  cat "$out/c$c.txt"
  [[ -f "$out/c$c.json" ]] && files+=("$out/c$c.json")
done

{
  printf '{"config": "%s", "commit": "%s", "runs": [' "$config" \
    "$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  sep=""
  for f in "${files[@]}"; do printf '%s' "$sep"; cat "$f"; sep=","; done
  printf ']}\n'
} >"$out/sweep.json"
echo "serve-sweep: wrote $out/sweep.json" >&2
exit $status
