#!/usr/bin/env bash
# Starts `courier serve` on the bundled tiny Qwen3 (port 0, API keys on), runs the client tests
# (the openai SDK, the Vercel AI SDK, LangChain JS) against it, then stops it with SIGTERM and
# checks that it exits 0.
#   usage: tests/node/run.sh path/to/courier
set -uo pipefail
courier=$(realpath "${1:?usage: run.sh path/to/courier}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# npm ci again whenever package-lock.json differs from the one node_modules was installed from.
stamp="$here/node_modules/.courier-package-lock.json"
if ! cmp -s "$here/package-lock.json" "$stamp"; then
  (cd "$here" && npm ci --no-audit --no-fund --silent && cp package-lock.json "$stamp") ||
    { echo "npm ci failed"; exit 1; }
fi
log=$(mktemp)
cd "$root"
"$courier" serve --config configs/default.yaml --set server.port=0 \
  --set 'server.api_keys={"test-key": "team-a", "other-key": "team-b"}' \
  --set scheduler.num_kv_blocks=4096 --set server.max_waiting=4096 >"$log" 2>&1 &
pid=$!
url=""
for _ in $(seq 300); do
  url=$(grep -o 'http://[^ ]*/v1' "$log" | head -1)
  [ -n "$url" ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then echo "server did not start:"; cat "$log"; kill $pid 2>/dev/null; exit 1; fi
cd "$here"
# The web page's tests save screenshots of it beside the binary (README.md shows copies).
shots=${COURIER_SCREENSHOTS:-$(dirname "$courier")/screenshots}
mkdir -p "$shots"
COURIER_URL="$url" COURIER_BIN="$courier" COURIER_SCREENSHOTS="$shots" timeout 300 \
  node --test --test-concurrency=1 ./*.test.mjs
tests=$?
kill -TERM $pid
wait $pid
server=$?
grep -q "stopped" "$log" || { echo "no graceful stop in the log:"; cat "$log"; server=1; }
echo "node tests: exit $tests; server after SIGTERM: exit $server"
rm -f "$log"
[ $tests -eq 0 ] && [ $server -eq 0 ]
