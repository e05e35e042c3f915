#!/usr/bin/env bash
# The KV tiers end to end: courier serves tiny-llama3 on the sim backend with a KV budget a
# quarter of the workload's shared prefixes (sglang's generated-shared-prefix: groups of prompts
# sharing a long system prompt, interleaved, so a group's prefix is evicted before its next
# prompt), with the tiers off, a host tier that holds every prefix (and that again with slow
# copies back), one that holds a quarter of them, and that quarter with a disk tier behind it,
# then persisted across a restart; prints the cached share of prompt tokens, TTFT and throughput
# for each, and the tiers' metrics.
#
# --hybrid: tiny-hybrid (NemotronH) with the tiers off and a host tier that holds every prefix,
# its evicted snapshots detached to host state rows (cache.ssm_host_tier_mb) beside the blocks.
#
#   bench/kv-tiers.sh [--hybrid] [--build build] [--out DIR] [--concurrency 4]
#                     [-- courier-bench flags]
set -euo pipefail
source "$(dirname "$0")/lib/serve-bench.sh"

build=build out=/tmp/kv-tiers conc=4 port=8135 name=tiny-llama3 hybrid=false
if [[ "${1:-}" == --hybrid ]]; then
  shift
  name=tiny-hybrid hybrid=true
fi
model=tests/data/models/$name
parse_bench_flags kv-tiers "$@"
# 16 groups x 512-token system prompts: 8192 prefix tokens (512 blocks) for 128 device blocks.
load=(--dataset-name shared-prefix --gsp-num-groups 16 --gsp-prompts-per-group 6
      --gsp-system-prompt-len 512 --gsp-question-len 32 --gsp-output-len 16)

run() {  # $1: label, $2: cache.host_tier_mb, $3: cache.disk_tier_gb, $4: persist (false),
         # $5: device.sim.copy_latency_ms (0)
  serve_and_bench "$1" \
    '^courier:(prefix_cache_(hits|queries|host_hits|disk_hits)|kv_(host|disk)_tier|ssm_snapshot)' \
    --set model.served_name="$name" --set scheduler.num_kv_blocks=128 \
    --set cache.ssm_host_tier_mb=$([[ $hybrid == true ]] && echo 64 || echo 0) \
    --set cache.host_tier_mb="$2" --set scheduler.max_num_seqs=16 \
    --set cache.disk_tier_gb="$3" --set cache.disk_tier_path="$out/disk" \
    --set cache.disk_tier_persist="${4:-false}" --set device.sim.copy_latency_ms="${5:-0}" \
    -- "${load[@]}" "${bench_extra[@]}"
  echo "== tiers: $1 (cache.host_tier_mb=$2, cache.disk_tier_gb=$3)"
  grep -iE "cached|TTFT|Request throughput|Output token throughput" "$out/$1.txt" ||
    cat "$out/$1.txt"
  cat "$out/$1-metrics.txt"
}

# tiny-llama3's blocks are 32 KB: 8192 prefix tokens take 16 MB, so 64 MB holds them all and 4 MB
# a quarter of them.
run off 0 0
run host 64 0
if [[ $hybrid == true ]]; then exit 0; fi  # (no disk tier for hybrids yet)
# The same with every batch of copies back taking 20 ms on the copy stream (the sim's simulated
# transfer): the requests they serve wait for them, the others' steps go on beside them.
run host-20ms-copies 64 0 false 20
run small-host 4 0
run small-host+disk 4 1
# Persisted: a run, then a restart with the same load, whose prefixes are all on disk already.
rm -rf "$out/disk"
run persisted 4 1 true
run persisted-restart 4 1 true
