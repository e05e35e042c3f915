#!/usr/bin/env bash
# Tokenizer benchmark: courier vs @huggingface/tokenizers (npm), single-threaded, same corpus,
# one run. Builds the C++ bench binary (-O2, as the CMake build) into bench/tokenizer/.build,
# installs the npm package on first use, then runs bench.mjs, which prints MB/s and the ratio.
#
# usage: bench/tokenizer/run.sh [--size-mb N] [--runs N] [--tokenizer qwen3|llama3|both]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$here/.build"
bin="$out/tokenizer_bench"
mkdir -p "$out"

sources=("$here/tokenizer_bench.cpp" "$root"/text/tokenizer/*.cpp)
if [[ ! -x "$bin" ]] || [[ -n "$(find "$here/tokenizer_bench.cpp" "$root/text/tokenizer" \
      -newer "$bin" -print -quit)" ]]; then
  echo "building $bin" >&2
  g++ -std=c++17 -O2 -DNDEBUG -I"$root" "${sources[@]}" -lpcre2-8 -lutf8proc -lfmt -o "$bin"
fi

if [[ ! -d "$here/node_modules/@huggingface/tokenizers" ]]; then
  (cd "$here" && npm install --no-audit --no-fund --silent)
fi

exec node "$here/bench.mjs" --bench "$bin" --data "$root/tests/data" "$@"
