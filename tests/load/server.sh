# Sourced by tests/load/run.sh and tests/load/callgrind.sh: starts the `svc` under test on
# loopback (SQLite, or a fresh PostgreSQL database beside $postgres), primes one cached blueprint
# and one session, and stops everything on exit. Expects $bin, $strict (0/1), $postgres (URL or
# empty), optionally $sole (1: server.database_sole_server), $launcher (a command the server
# runs under, e.g. valgrind) and $rust_log (the server's RUST_LOG; empty: unset, so the server
# logs as shipped, an access line per request, to a file here). Sets $work, $base, $mcp,
# $bearer, $mode, $backend, $server_pid, $intent, $contract, $session_id and the helpers
# await_line, call and tool_body.

work="$(mktemp -d /tmp/svc-load.XXXXXX)"
pids=()
database=""
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ -n "$database" ]]; then
    psql "$postgres" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Waits (at most $3 seconds, default 20) for a line matching $2 in file $1 and prints it.
await_line() {
  local tenths=$(( ${3:-20} * 10 ))
  for _ in $(seq "$tenths"); do
    if grep -m1 -E "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "load: timed out waiting for '$2' in $1" >&2
  cat "$1" >&2
  return 1
}

[[ -x "$bin" ]] || { echo "load: no binary at $bin (cargo build --release -p svc --bin svc)" >&2; exit 1; }
serve_args=(serve --host 127.0.0.1 --port 0 --data-dir "$work/data")
mode="dev-allow-all"
bearer="load"
if [[ "$strict" == 1 ]]; then
  mode="strict"
  bearer="$("$bin" keys mint --data-dir "$work/data" --name load | tail -n1)"
else
  serve_args+=(--dev-allow-all)
fi
backend="SQLite"
if [[ -n "$postgres" ]]; then
  command -v psql >/dev/null || { echo "load: psql is needed for --postgres" >&2; exit 1; }
  database="svc_load_$$"
  psql "$postgres" -qc "CREATE DATABASE $database" >/dev/null
  serve_args+=(--database-url "${postgres%/*}/$database")
  backend="PostgreSQL"
  # The pool opened at start: otherwise the first row that queries pays for the PostgreSQL
  # backends forked under its load (a p99 of 30 ms and more in its first seconds, BENCHMARKS.md).
  export SVC_SERVER__DATABASE_MIN_CONNECTIONS="${connections:-16}"
  if [[ "${sole:-0}" == 1 ]]; then
    export SVC_SERVER__DATABASE_SOLE_SERVER=true
    backend="PostgreSQL, sole server"
  fi
fi
# shellcheck disable=SC2086 # $launcher is a command line.
env -u RUST_LOG ${rust_log:+RUST_LOG="$rust_log"} ${launcher:-} "$bin" "${serve_args[@]}" >"$work/svc.out" 2>"$work/svc.err" &
server_pid=$!
pids+=("$server_pid")
base="$(await_line "$work/svc.out" 'listening on ' 120 | sed 's/.*listening on //')"
mcp="$base/mcp"

tool_body() { # tool_body TOOL ARGUMENTS_JSON -> a tools/call request
  echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"
}
call() { # call TOOL ARGUMENTS_JSON -> the answer
  curl -sS --max-time 60 -X POST "$mcp" -H 'content-type: application/json' \
    -H 'accept: application/json, text/event-stream' -H "authorization: Bearer $bearer" -d "$(tool_body "$1" "$2")"
}
field() { # field NAME < answer -> the first string value of "NAME"
  grep -o "\"$1\":\"[^\"]*\"" | head -n1 | cut -d'"' -f4
}

# One cached blueprint: the first render generates, every later one reuses.
intent="load test card"
contract='{"propsSpec":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]},"actionSpec":{"approve":{"schema":{"type":"object"}}}}'
handshake_id="$(call svc_handshake "{\"intent\":\"$intent\",\"blueprintDraft\":{\"contract\":$contract}}" | field handshakeId)"
[[ -n "$handshake_id" ]] || { echo "load: priming handshake failed" >&2; cat "$work/svc.err" >&2; exit 1; }
session_id="$(call svc_render "{\"handshakeId\":\"$handshake_id\",\"props\":{\"title\":\"prime\"}}" | field sessionId)"
[[ -n "$session_id" ]] || { echo "load: priming render failed" >&2; exit 1; }
export LOAD_BEARER="$bearer" LOAD_INTENT="$intent" LOAD_CONTRACT="$contract"

# The request of each read row, by row name.
declare -A row_body=(
  [ping]='{"jsonrpc":"2.0","id":1,"method":"ping"}'
  [tools_list]='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
  [consume]="$(tool_body svc_consume "{\"sessionId\":\"$session_id\",\"timeout\":0}")"
  [get_session]="$(tool_body svc_get_session "{\"sessionId\":\"$session_id\"}")"
  [resource_read]="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"ui://svc/render/$session_id\"}}"
)
