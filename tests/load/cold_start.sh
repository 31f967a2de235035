#!/usr/bin/env bash
# Cold start with a large blueprint cache (issue 18): seeds N blueprints into a SQLite database
# (tests/load/seed_blueprints.py), starts `svc`, and prints how long after the process started
# `/healthz` first answered 200 and `/readyz` turned 200 (the index built in the background).
#
#   tests/load/cold_start.sh [--count N]      (default 100000)
#   SVC_BIN=target/debug/svc tests/load/cold_start.sh --count 5000   (a dev smoke run)
#
# Loopback only; the server and its data directory are removed on exit.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${SVC_BIN:-target/release/svc}"
count=100000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --count) count="$2"; shift 2 ;;
    *) echo "usage: $0 [--count N]" >&2; exit 2 ;;
  esac
done
[[ -x "$bin" ]] || { echo "cold_start: no binary at $bin" >&2; exit 1; }
work="$(mktemp -d /tmp/svc-cold.XXXXXX)"
server_pid=""
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Starts the server; sets $server_pid and $base.
start() {
  : >"$work/svc.out"
  RUST_LOG=warn "$bin" serve --host 127.0.0.1 --port 0 --dev-allow-all --data-dir "$work/data" \
    >"$work/svc.out" 2>>"$work/svc.err" &
  server_pid=$!
  base=""
  for _ in $(seq 6000); do
    base="$(grep -m1 -o 'listening on .*' "$work/svc.out" 2>/dev/null | sed 's/listening on //')" || true
    [[ -n "$base" ]] && return 0
    sleep 0.01
  done
  echo "cold_start: the server did not start" >&2; cat "$work/svc.err" >&2; exit 1
}
stop() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }
now_ms() { date +%s%3N; }

# One generated blueprint to copy.
start
call() {
  curl -sS -X POST "$base/mcp" -H 'content-type: application/json' -H 'authorization: Bearer load' \
    -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"
}
contract='{"propsSpec":{"type":"object","properties":{"title":{"type":"string"}}}}'
hs="$(call svc_handshake "{\"intent\":\"cold start card\",\"blueprintDraft\":{\"contract\":$contract}}" \
  | grep -o '"handshakeId":"[^"]*"' | head -n1 | cut -d'"' -f4)"
call svc_render "{\"handshakeId\":\"$hs\",\"props\":{\"title\":\"t\"}}" >/dev/null
stop
python3 "$here/seed_blueprints.py" "$work/data/svc.db" "$count"

started="$(now_ms)"
start
healthz="" readyz=""
while [[ -z "$readyz" ]]; do
  if [[ -z "$healthz" ]] && [[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/healthz")" == 200 ]]; then
    healthz=$(( $(now_ms) - started ))
  fi
  code="$(curl -s -o "$work/readyz.json" -w '%{http_code}' "$base/readyz")"
  if [[ "$code" == 200 ]]; then
    readyz=$(( $(now_ms) - started ))
  elif [[ -z "${reason:-}" ]]; then
    reason="$(cat "$work/readyz.json")"
  fi
  (( $(now_ms) - started > 600000 )) && { echo "cold_start: not ready after 10 minutes" >&2; exit 1; }
  [[ -z "$readyz" ]] && sleep 0.02
done
hit="$(call svc_handshake "{\"intent\":\"cold start card 42\",\"blueprintDraft\":{\"contract\":$contract}}" \
  | grep -o '"action":"[^"]*"' | head -n1 | cut -d'"' -f4)"
echo "cold start with $((count + 1)) cached blueprints ($bin):"
echo "  /healthz 200 after ${healthz} ms (process start to first answer, including process start-up)"
echo "  /readyz 200 after ${readyz} ms; while building it said: ${reason:-(never 503)}"
echo "  handshake for a seeded intent: $hit"
