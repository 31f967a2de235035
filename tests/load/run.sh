#!/usr/bin/env bash
# The load script of issue 18: every row of BENCHMARKS.md's "Request paths under load" table
# against the release `svc` binary, with the official TypeScript SDK's stateless no-op tool
# (tests/peers/ts-sdk-noop-server.mjs) measured in the same run. Loopback only; every process it
# starts is stopped on exit; each row is bounded by wrk's duration.
#
#   cargo build --release -p svc --bin svc  # once; the script never builds
#   tests/load/run.sh                       # SQLite, --dev-allow-all
#   tests/load/run.sh --strict              # SQLite, a minted key (the strict bearer check)
#   tests/load/run.sh --postgres postgres://postgres@127.0.0.1:5432/test
#   tests/load/run.sh --postgres URL --sole # the server as its database's only one
#                                           # (server.database_sole_server: reads kept in memory)
#
# Options: --rust-log FILTER (the server's RUST_LOG; default unset: it logs as shipped, an
# access line per request, to a file; before session 43 the rows ran with RUST_LOG=warn),
# --duration SECONDS per row (default 6), --connections N (default 16),
# --threads N (default 2), --rows LIST (comma-separated row names, default all but
# resource_read_each and resource_read_gzip_each: the reads with each answer checked in Lua).
# Env: SVC_BIN (default target/release/svc). Needs `wrk` (Debian: apt-get install -y wrk),
# `curl`, `node` and tests/peers/node_modules (tests/peers/install.sh); `psql` for --postgres
# (a fresh database is created beside the given one and dropped afterwards), and `pgbench` for
# its pg_floor row (PostgreSQL's own select-only throughput, measured in the same run).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${SVC_BIN:-$root/target/release/svc}"
duration=6
connections=16
threads=2
postgres=""
strict=0
rust_log=""
sole=0
rows="healthz,ping,tools_list,consume,get_session,resource_read,resource_read_gzip,runtime_js,runtime_js_gzip,pair_1,pair_2,pair_16,pg_floor,ts_sdk"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --postgres) postgres="$2"; shift 2 ;;
    --strict) strict=1; shift ;;
    --rust-log) rust_log="$2"; shift 2 ;;
    --sole) sole=1; shift ;;
    --rows) rows="$2"; shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

for tool in wrk curl node; do
  command -v "$tool" >/dev/null || { echo "run.sh: '$tool' not found (apt-get install -y wrk curl nodejs)" >&2; exit 1; }
done

[[ -d "$root/tests/peers/node_modules/@modelcontextprotocol/sdk" ]] \
  || { echo "run.sh: run tests/peers/install.sh first" >&2; exit 1; }
# shellcheck source=tests/load/server.sh
source "$here/server.sh"

# --- the reference peer: the official TypeScript SDK, stateless, one no-op tool --------------
node "$root/tests/peers/ts-sdk-noop-server.mjs" 0 >"$work/peer.out" 2>"$work/peer.err" &
pids+=($!)
peer_port="$(await_line "$work/peer.out" '^listening ' | cut -d' ' -f2)"

# --- the rows ---------------------------------------------------------------------------------
results="$work/results"
: >"$results"

# selected NAME: whether --rows asked for the row.
selected() { [[ ",$rows," == *",$1,"* ]]; }

# measure NAME LABEL CONNECTIONS URL SCRIPT [BODY [ACCEPT_ENCODING]]: one wrk run, one line
# "NAME LABEL rps p50 p99 errors". With check_each=0 (see measure_by_size) rpc.lua looks at no
# answer, and the row's answers are checked by their mean size against $answer_bytes.
check_each=1
answer_bytes=0
measure() {
  local name="$1" label="$2" conns="$3" url="$4" script="$5" body="${6:-}" encoding="${7:-}"
  selected "$name" || return 0
  local t="$threads"
  (( conns < t )) && t="$conns"
  local args=(-t"$t" -c"$conns" -d"${duration}s" --latency --timeout 5s "$url")
  [[ -n "$script" ]] && args=(-s "$here/$script" "${args[@]}")
  # Without a script the coding is asked for by a header (rpc.lua reads LOAD_ACCEPT_ENCODING).
  [[ -z "$script" && -n "$encoding" ]] && args=(-H "Accept-Encoding: $encoding" "${args[@]}")
  local out
  out="$(LOAD_BODY="$body" LOAD_ACCEPT_ENCODING="$encoding" LOAD_CHECK_EACH="$check_each" \
    timeout $((duration + 30)) wrk "${args[@]}" 2>"$work/wrk.err")"
  local rps p50 p99 errors
  rps="$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")"
  p50="$(awk '$1 == "50%" {print $2}' <<<"$out")"
  p99="$(awk '$1 == "99%" {print $2}' <<<"$out")"
  errors="$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')"
  [[ "$check_each" == 0 ]] && errors="$errors$(mean_size_check "$out")"
  [[ -s "$work/wrk.err" ]] && errors="$errors $(head -c 200 "$work/wrk.err" | tr '\n' ' ')"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$label" "$rps" "$p50" "$p99" "$errors" >>"$results"
  printf '  %-16s %10s req/s  p50 %8s  p99 %8s %s\n' "$name" "$rps" "$p50" "$p99" "$errors" >&2
}

# mean_size_check WRK_OUTPUT: nothing when the row's bytes read divided by its requests is within
# 1% of $answer_bytes (one whole answer, head and body, fetched before the row), else what it
# was, printed in the row's errors. An answer that is not the expected one (a JSON-RPC error,
# another coding) has another size, so a row with more than about 1% of them shows here, as
# rpc.lua's check of each answer would show it, without wrk copying every answer into Lua. (wrk
# rounds its bytes to three digits, up to 0.6%, and counts answers cut off at the row's end in
# bytes only: a row of fewer than a few thousand requests can show here with nothing wrong.)
mean_size_check() {
  awk -v expected="$answer_bytes" '
    / requests in .* read$/ {
      seen = 1; requests = $1; read = $(NF - 1)
      if (requests == 0) { printf "no answer"; exit }
      unit = read; sub(/^[0-9.]+/, "", unit); sub(/[A-Za-z]+$/, "", read)
      scale["B"] = 1; scale["KB"] = 1024; scale["MB"] = 1024 ^ 2; scale["GB"] = 1024 ^ 3; scale["TB"] = 1024 ^ 4
      mean = read * scale[unit] / requests
      if (mean < expected * 0.99 || mean > expected * 1.01)
        printf "answers of %.0f bytes on average, not %d", mean, expected
    }
    END { if (!seen) printf "no summary from wrk" }' <<<"$1"
}

# measure_by_size NAME LABEL CONNECTIONS URL BODY [ACCEPT_ENCODING]: measure with rpc.lua looking
# at no answer, as /healthz's row; one answer is fetched first and must be a JSON-RPC success
# (in the coding asked for), and the row's answers must have its size on average.
measure_by_size() {
  local name="$1" label="$2" conns="$3" url="$4" body="$5" encoding="${6:-}"
  selected "$name" || return 0
  local head="$work/answer.head" answer="$work/answer.body"
  curl -s -D "$head" -o "$answer" -H 'content-type: application/json' \
    -H 'accept: application/json, text/event-stream' -H "authorization: Bearer $bearer" \
    ${encoding:+-H "accept-encoding: $encoding"} -d "$body" "$url"
  local text
  if [[ -n "$encoding" ]]; then text="$(gzip -dc <"$answer")"; else text="$(cat "$answer")"; fi
  if [[ "$text" != '{"jsonrpc":"2.0","id":'*'"result":'* ]] || [[ "$text" == *'Error":true'* ]]; then
    echo "run.sh: $name: the answer is not a success: ${text:0:300}" >&2
    exit 1
  fi
  answer_bytes=$(( $(wc -c <"$head") + $(wc -c <"$answer") ))
  check_each=0
  measure "$name" "$label" "$conns" "$url" rpc.lua "$body" "$encoding"
  check_each=1
}

echo "run.sh: svc $backend ($mode) at $base, TS SDK peer at 127.0.0.1:$peer_port;" \
  "wrk -t$threads -c$connections -d${duration}s per row" >&2
c="$connections"
measure healthz "GET /healthz" "$c" "$base/healthz" ""
measure ping "ping" "$c" "$mcp" rpc.lua "${row_body[ping]}"
measure tools_list "tools/list" "$c" "$mcp" rpc.lua "${row_body[tools_list]}"
measure consume "svc_consume(0)" "$c" "$mcp" rpc.lua "${row_body[consume]}"
measure get_session "svc_get_session" "$c" "$mcp" rpc.lua "${row_body[get_session]}"
# The answer's size in each coding, in the rows' labels (the bytes are most of the read's cost
# beyond a small read's: BENCHMARKS.md, session 28).
read_size() {
  selected resource_read || selected resource_read_gzip || selected resource_read_each \
    || selected resource_read_gzip_each || { echo 0; return; }
  curl -s -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -H "authorization: Bearer $bearer" ${1:+-H "accept-encoding: $1"} \
    -d "${row_body[resource_read]}" "$mcp" | wc -c || echo 0
}
read_bytes="$(read_size)" read_gzip_bytes="$(read_size gzip)"
measure_by_size resource_read "resources/read (render, $((read_bytes / 1024)) KiB)" "$c" "$mcp" "${row_body[resource_read]}"
measure_by_size resource_read_gzip "resources/read (render), gzip ($((read_gzip_bytes / 1024)) KiB)" "$c" "$mcp" "${row_body[resource_read]}" gzip
# The same two with each answer looked at in Lua (the rows' method until session 40), asked for
# by name: what that costs the client on the shared cores is the difference.
measure resource_read_each "the same, unencoded, each answer checked in Lua" "$c" "$mcp" rpc.lua "${row_body[resource_read]}"
measure resource_read_gzip_each "the same, gzip, each answer checked in Lua" "$c" "$mcp" rpc.lua "${row_body[resource_read]}" gzip
# The framework's floor for a body of a card document's size: the mount runtime, a static
# string served with no database, no JSON and no authentication; unencoded, and gzipped (deflated
# once per process) as the floor for the gzipped read's bytes.
runtime_bytes=0 runtime_gzip_bytes=0
if selected runtime_js || selected runtime_js_gzip; then
  runtime_bytes="$(curl -s "$base/_svc/iframe-runtime.js" | wc -c || true)"
fi
if selected runtime_js_gzip; then
  runtime_gzip_bytes="$(curl -s -H 'Accept-Encoding: gzip' "$base/_svc/iframe-runtime.js" | wc -c || true)"
  # A row that silently measured the unencoded body would be the wrong floor.
  (( runtime_gzip_bytes < runtime_bytes )) \
    || { echo "run.sh: /_svc/iframe-runtime.js was not sent gzipped" >&2; exit 1; }
fi
measure runtime_js "GET /_svc/iframe-runtime.js ($((runtime_bytes / 1024)) KiB static)" "$c" "$base/_svc/iframe-runtime.js" ""
measure runtime_js_gzip "the same, gzip ($((runtime_gzip_bytes / 1024)) KiB static)" "$c" "$base/_svc/iframe-runtime.js" "" "" gzip
measure pair_1 "handshake+render, 1 conn" 1 "$mcp" warm_pair.lua
measure pair_2 "handshake+render, 2 conns" 2 "$mcp" warm_pair.lua
measure pair_16 "handshake+render, $c conns" "$c" "$mcp" warm_pair.lua
# PostgreSQL's own floor for a read that queries it: pgbench's select-only script (one prepared
# primary-key SELECT per transaction) with the same client count, in the server's database.
pg_floor() {
  [[ -n "$postgres" ]] && selected pg_floor || return 0
  command -v pgbench >/dev/null || { echo "run.sh: pgbench not found (Debian: postgresql-15)" >&2; return 0; }
  local url="${postgres%/*}/$database" out tps latency
  pgbench -q -i -s 1 "$url" >/dev/null 2>&1 || { echo "run.sh: pgbench -i failed; no pg_floor row" >&2; return 0; }
  out="$(timeout $((duration + 30)) pgbench -S -M prepared -c "$connections" -j "$threads" -T "$duration" "$url" 2>&1)" || true
  tps="$(awk '/^tps = / {printf "%.0f", $3}' <<<"$out")"
  latency="$(awk '/^latency average = / {print $4 "ms"}' <<<"$out")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' pg_floor "pgbench -S (PostgreSQL alone, mean latency)" "$tps" "$latency" "" "" >>"$results"
  printf '  %-16s %10s tps    mean %8s\n' pg_floor "$tps" "$latency" >&2
}
pg_floor
measure ts_sdk "TS SDK no-op tool" "$c" "http://127.0.0.1:$peer_port/mcp" rpc.lua \
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop","arguments":{}}}'
kill -0 "$server_pid" 2>/dev/null || { echo "run.sh: the server died; its stderr:" >&2; cat "$work/svc.err" >&2; exit 1; }

# --- the table --------------------------------------------------------------------------------
healthz="$(awk -F'\t' '$1 == "healthz" {print $3}' "$results")"
sdk="$(awk -F'\t' '$1 == "ts_sdk" {print $3}' "$results")"
echo
echo "svc $backend, $mode, wrk -t$threads -c$connections -d${duration}s, $(date -u +%Y-%m-%d)"
echo
echo "| path | requests/s | p50 | p99 | vs /healthz | vs TS SDK no-op |"
echo "|---|---|---|---|---|---|"
awk -F'\t' -v h="${healthz:-0}" -v s="${sdk:-0}" '
  function ratio(x, y) { return (y > 0 && x > 0) ? sprintf("%.2fx", x / y) : "" }
  { printf "| %s | %s | %s | %s | %s | %s |%s\n", $2, $3, $4, $5, ratio($3, h), ratio($3, s), ($6 == "" ? "" : " errors: " $6) }
' "$results"
