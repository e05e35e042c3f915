#!/usr/bin/env bash
# Routing among replicas end to end: three `courier serve` replicas of tiny-llama3 on the sim
# backend (cluster.listen, 300 KV blocks each) behind a fourth as the front end
# (cluster.replicas), and courier-bench's shared-prefix workload (sglang's generated-shared-prefix:
# 24 groups of 8 prompts sharing a 512-token system prompt) through the front end, once per
# cluster.routing; then one server with the three replicas' blocks (900) as the reference.
# Prints, for each, the cached share of prompt tokens, throughput and TTFT.
#
#   bench/cluster-routing.sh [--build build] [--out DIR] [--concurrency 12] [-- courier-bench flags]
set -euo pipefail
source "$(dirname "$0")/lib/serve-bench.sh"

build=build out=/tmp/cluster-routing conc=12 port=8140 model=tests/data/models/tiny-llama3
parse_bench_flags cluster-routing "$@"
load=(--dataset-name shared-prefix --gsp-num-groups 24 --gsp-prompts-per-group 8
      --gsp-system-prompt-len 512 --gsp-question-len 64 --gsp-output-len 16)
common=(--set device.backend=sim --set device.sim.threads=1 --set scheduler.max_num_seqs=16)

replicas=()
start_replicas() {
  for i in 1 2 3; do
    "$build/courier" serve --config configs/default.yaml --set model.path="$model" \
      --set server.port=0 --set cluster.listen="127.0.0.1:$((port + i))" \
      --set scheduler.num_kv_blocks=300 "${common[@]}" >"$out/replica$i.log" 2>&1 &
    replicas+=($!)
  done
  for i in 1 2 3; do
    for _ in $(seq 1 200); do
      grep -q "published on" "$out/replica$i.log" && break
      sleep 0.1
    done
  done
}
stop_replicas() {
  for p in "${replicas[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${replicas[@]}"; do wait "$p" 2>/dev/null || true; done
  replicas=()
}
trap stop_replicas EXIT

list="[\"127.0.0.1:$((port + 1))\",\"127.0.0.1:$((port + 2))\",\"127.0.0.1:$((port + 3))\"]"
for routing in cache_aware round_robin least_loaded; do
  start_replicas  # fresh caches for each policy
  serve_and_bench "$routing" '^courier:prefix_cache' --set model.served_name=tiny-llama3 \
    --set cluster.replicas="$list" --set cluster.routing="$routing" \
    -- "${load[@]}" "${bench_extra[@]}"
  stop_replicas
  echo "== cluster.routing: $routing (3 replicas of 300 blocks)"
  grep -iE "cached|Request throughput|Output token throughput|TTFT" "$out/$routing.txt" ||
    cat "$out/$routing.txt"
done
serve_and_bench single '^courier:prefix_cache' --set model.served_name=tiny-llama3 \
  --set scheduler.num_kv_blocks=900 "${common[@]}" -- "${load[@]}" "${bench_extra[@]}"
echo "== one server of 900 blocks"
grep -iE "cached|Request throughput|Output token throughput|TTFT" "$out/single.txt" ||
  cat "$out/single.txt"
