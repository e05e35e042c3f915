#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang in build-fuzz (instrumented with ASan and
# UBSan) and runs each for SECONDS (default 60) from its committed seed corpus and dictionary.
# Exits non-zero on a finding and prints the reproducer. See tests/fuzz/README.md.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     TARGET: api_request chat_template tokenizer grammar
#                                             lora_adapter (all)
#
# Environment: COURIER_JOBS (build jobs), COURIER_FUZZ_BUILD (build folder, default build-fuzz),
# COURIER_FUZZ_TIMEOUT (seconds one input may take before it counts as a hang, default 30),
# COURIER_FUZZ_SEED (libFuzzer's seed, default 1: CI explores the same inputs in the same order
# every run, so a finding there replays; set another to explore elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(api_request chat_template tokenizer grammar lora_adapter)
jobs=${COURIER_JOBS:-$(nproc)}
build=${COURIER_FUZZ_BUILD:-build-fuzz}
timeout=${COURIER_FUZZ_TIMEOUT:-30}

launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DCOURIER_FUZZ=ON -DCOURIER_CUDA=OFF -DCOURIER_LINE_TABLES=ON \
  -DCOURIER_UNITY=8 \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$jobs" --target courier_fuzz

# Each run keeps what it found apart from the committed corpus: new inputs, the log, and any
# reproducer (crash-*, timeout-*, oom-*, leak-*: libFuzzer's artifact names). The targets run at
# the same time (libFuzzer is one thread each), so the phase takes SECONDS, not SECONDS per target.
run_dir="$build/fuzz-runs/$(date -u +%Y%m%dT%H%M%SZ)"
pids=()
for t in "${targets[@]}"; do
  out="$run_dir/$t"
  mkdir -p "$out/corpus"
  echo "fuzz: $t for ${seconds}s (log: $out/log)"
  # Inputs up to max_len from the start (-len_control=0): nesting deep enough to overflow the
  # targets' 512 KiB stack takes a few KB, more than libFuzzer would grow inputs to in a minute.
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$build/fuzz/fuzz_$t" "$out/corpus" "tests/fuzz/corpus/$t" -dict="tests/fuzz/dict/$t.dict" \
      -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=4096 \
      -max_len="${COURIER_FUZZ_MAX_LEN:-16384}" -len_control="${COURIER_FUZZ_LEN_CONTROL:-0}" \
      -seed="${COURIER_FUZZ_SEED:-1}" -artifact_prefix="$out/" -print_final_stats=1 \
      >"$out/log" 2>&1 &
  pids+=($!)
done

status=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  out="$run_dir/$t"
  if wait "${pids[$i]}"; then
    echo "fuzz: $t clean: $(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$out/log" |
                            sed 's/.*: //') inputs"
  else
    status=1
    repro=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o \
              -name 'oom-*' -o -name 'leak-*' -o -name 'slow-unit-*' \) | head -1)
    echo "fuzz: FINDING in $t; the report:"
    grep -m1 -B2 -A30 -E '==[0-9]+==ERROR|==courier-fuzz==|runtime error|ALARM|out-of-memory' \
      "$out/log" | sed 's/^/  /' || tail -40 "$out/log" | sed 's/^/  /'
    echo "fuzz: reproducer: ${repro:-(none written; see $out/log)}"
    echo "fuzz: reproduce with: $build/fuzz/fuzz_$t ${repro:-INPUT}"
  fi
done
exit $status
