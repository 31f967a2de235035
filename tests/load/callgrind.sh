#!/usr/bin/env bash
# Instructions per request, repeatable whatever else the machine does: the release `svc` runs
# under `valgrind --tool=callgrind` and receives a fixed request mix, one kind at a time, each
# sent COUNT times in a row over one keep-alive connection (tests/load/drive.py). Counters are
# zeroed before and dumped after each kind, so start-up and priming are not counted; the figure
# is the server process's instructions (every thread) divided by the requests.
#
#   tests/load/callgrind.sh [--count N] [--strict] [--postgres URL] [--keep DIR] [--rust-log FILTER]
#
# --keep DIR keeps the callgrind dumps there (read them with callgrind_annotate). Needs
# `valgrind` (Debian: apt-get install -y valgrind), `python3`, `curl`. Slow: about a minute.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${SVC_BIN:-$root/target/release/svc}"
count=300
postgres=""
strict=0
rust_log=""
keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --count) count="$2"; shift 2 ;;
    --postgres) postgres="$2"; shift 2 ;;
    --strict) strict=1; shift ;;
    --rust-log) rust_log="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    *) echo "callgrind.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for tool in valgrind callgrind_control python3 curl; do
  command -v "$tool" >/dev/null || { echo "callgrind.sh: '$tool' not found (apt-get install -y valgrind)" >&2; exit 1; }
done

dumps="$(mktemp -d /tmp/svc-callgrind.XXXXXX)"
launcher="valgrind --tool=callgrind --callgrind-out-file=$dumps/callgrind.out.%p --dump-instr=no"
# shellcheck source=tests/load/server.sh
source "$here/server.sh"

# The dump callgrind_control writes last holds the counts since the previous zeroing.
instructions_of() {
  local dump
  dump="$(ls -t "$dumps"/callgrind.out.* | head -n1)"
  awk '/^totals:|^summary:/ {print $2; exit}' "$dump"
}

# row NAME KIND [BODY]: zero, send COUNT requests (COUNT pairs for `pair`), dump, print.
row() {
  local name="$1" kind="$2" body="${3:-}" url="$mcp" requests="$count"
  [[ "$kind" == get ]] && url="$base/healthz"
  [[ "$kind" == pair ]] && requests=$((count * 2))
  # One request first, not counted: what is built once per process or per state of a session
  # (a read's template, the deflated runtime) is not a per-request cost.
  python3 "$here/drive.py" "$url" 1 "$kind" "$body"
  callgrind_control --zero "$server_pid" >/dev/null
  python3 "$here/drive.py" "$url" "$count" "$kind" "$body"
  callgrind_control --dump="$name" "$server_pid" >/dev/null
  local total
  total="$(instructions_of)"
  [[ -n "$keep" ]] && mkdir -p "$keep" && cp "$(ls -t "$dumps"/callgrind.out.* | head -n1)" "$keep/$name.callgrind"
  printf '| %s | %s | %s |\n' "$name" "$requests" "$(( total / requests ))"
}

echo "svc $backend, $mode, callgrind, $count requests per row, $(date -u +%Y-%m-%d)"
echo
echo "| path | requests | instructions per request |"
echo "|---|---|---|"
row healthz get
for name in ping tools_list consume get_session resource_read; do
  row "$name" rpc "${row_body[$name]}"
done
row resource_read_gzip rpc_gzip "${row_body[resource_read]}"
row warm_pair pair
rm -rf "$dumps"
