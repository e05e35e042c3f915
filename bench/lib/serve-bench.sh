# Sourced by the end-to-end benchmark scripts (hybrid-prefix.sh, kv-tiers.sh, swap-preemption.sh):
# their flags, and one courier server with one courier-bench run against it.
#
# Globals the caller sets first: build, out, conc, port (defaults), model (a model folder).

# Parses --build DIR, --out DIR, --concurrency N and, after --, courier-bench flags (into the
# array bench_extra); $1 is the script's name for errors.
parse_bench_flags() {
  local name="$1"
  shift
  bench_extra=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --build) build="$2"; shift 2 ;;
      --out) out="$2"; shift 2 ;;
      --concurrency) conc="$2"; shift 2 ;;
      --) shift; bench_extra=("$@"); break ;;
      *) echo "$name: unknown flag $1 (see the comment at the top of the script)" >&2; exit 2 ;;
    esac
  done
  mkdir -p "$out"
}

# serve_and_bench LABEL METRICS_REGEX [--set k=v ...] -- [courier-bench flags]
# Serves $model (configs/default.yaml, the --set flags, server.port=$port) until /health
# answers, runs courier-bench against it (its output in $out/LABEL.txt and .json), keeps the
# /metrics lines matching METRICS_REGEX in $out/LABEL-metrics.txt, and stops the server.
serve_and_bench() {
  local label="$1" metrics="$2"
  shift 2
  local sets=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do sets+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  "$build/courier" serve --config configs/default.yaml --set model.path="$model" \
    --set server.port="$port" "${sets[@]}" >"$out/$label-server.log" 2>&1 &
  server=$!
  trap 'kill -INT $server 2>/dev/null || true' EXIT
  for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    sleep 0.1
  done
  "$build/courier-bench" --base-url "http://127.0.0.1:$port" --ignore-eos --tokenizer "$model" \
    --max-concurrency "$conc" --seed 1 --label "$label" --result-json "$out/$label.json" "$@" \
    >"$out/$label.txt"
  curl -sf "http://127.0.0.1:$port/metrics" | grep -E "$metrics" >"$out/$label-metrics.txt" || true
  kill -INT $server
  wait $server || true
  trap - EXIT
}
