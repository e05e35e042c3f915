# Sourced by the benchmark scripts that serve one courier and drive it with clients of their own
# (structured-throughput.sh, victim-stream.sh, soak.sh).

# serve_courier NAME WORK PORT [courier serve flags...]: serves `$build/courier` with the flags
# and server.port=PORT, its output in WORK/server.log. Sets `server` (its pid), `base` (its URL)
# and `model` (the name it serves) once /health answers; exits 1 with the log (NAME: the
# script's, for the message) if the server exits first or never answers.
serve_courier() {
  local name="$1" work="$2" port="$3"
  shift 3
  "$build/courier" serve "$@" --set server.port="$port" >"$work/server.log" 2>&1 &
  server=$!
  base="http://127.0.0.1:$port"
  for _ in $(seq 1 600); do
    if curl -sf "$base/health" >/dev/null 2>&1; then
      model=$(curl -sf "$base/v1/models" | sed -E 's/.*"id":"([^"]+)".*/\1/')
      return 0
    fi
    kill -0 $server 2>/dev/null || { echo "$name: the server exited:" >&2; cat "$work/server.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "$name: the server did not answer /health within 300 s" >&2
  exit 1
}

# stop_courier: stops the server serve_courier started (SIGINT: it finishes what it holds).
stop_courier() {
  kill -INT $server 2>/dev/null || true
  wait $server 2>/dev/null || true
}
