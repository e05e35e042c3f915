#!/usr/bin/env bash
# LoRA adapters in the mix: courier serves tiny-llama3 on the sim backend with 16 random rank-16
# adapters on every projection (tests/lora/make-lora.mjs), and courier-bench sends the same
# random load at concurrency 16 with the requests spread over the base alone, 1, 4 and 16
# adapters (device slots for all of them), then 16 adapters with 4 slots (requests wait for a
# slot, those that need none go ahead, and adapters are loaded again and again), and that with
# 4 host copies (lora.max_cpu_loras: the others are read from their folders again); prints
# throughput and latencies for each, and the slot pool's metrics.
#
#   bench/lora-mix.sh [--build build] [--out DIR] [--concurrency 16] [-- courier-bench flags]
set -euo pipefail
source "$(dirname "$0")/lib/serve-bench.sh"

build=build out=/tmp/lora-mix conc=16 port=8137 model=tests/data/models/tiny-llama3
parse_bench_flags lora-mix "$@"
load=(--dataset-name random --num-prompts 128 --random-input-len 256 --random-output-len 64
      --random-range-ratio 0.5)
sets=(--set model.served_name=base --set lora.max_rank=16)
names=()
for i in $(seq 1 16); do
  node tests/lora/make-lora.mjs --model "$model" --out "$out/adapter-$i" --seed "$i" --rank 16 \
    --alpha 32 --targets q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj >/dev/null
  sets+=(--set "lora.adapters.a$i=$out/adapter-$i/adapter")
  names+=("a$i")
done

run() {  # $1: label, $2: lora.max_loras, $3: the models the requests take in turn, $4: more --set
  local more=()
  [[ -n ${4:-} ]] && more=(--set "$4")
  serve_and_bench "$1" '^courier:(lora_slots|lora_loads|lora_passed|lora_host|generation_tokens)' \
    "${sets[@]}" --set lora.max_loras="$2" "${more[@]}" -- --model "$3" "${load[@]}" \
    "${bench_extra[@]}"
  echo "== $1 (lora.max_loras $2)"
  grep -iE "throughput|TTFT|TPOT" "$out/$1.txt" || cat "$out/$1.txt"
  cat "$out/$1-metrics.txt"
}

join() { local IFS=,; echo "$*"; }
run base 16 base
run 1-adapter 16 a1
run 4-adapters 16 "$(join "${names[@]:0:4}")"
run 16-adapters 16 "$(join "${names[@]}")"
run 16-adapters-4-slots 4 "$(join "${names[@]}")"
run 16-adapters-4-slots-4-host-copies 4 "$(join "${names[@]}")" lora.max_cpu_loras=4
