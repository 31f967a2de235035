#!/usr/bin/env bash
# What the kernel sees of the warm pair: `perf stat` of the release `svc` (context switches, CPU
# time, and the system calls a request makes) while wrk drives `svc_handshake` + `svc_render`
# (cache hit) for a few seconds. Counts per request are the totals over wrk's requests. Loopback
# only; the server is stopped on exit.
#
#   tests/load/perf_stat.sh [--connections N] [--duration SECONDS] [--rust-log FILTER]
#
# Env: SVC_BIN (default target/release/svc). Needs `perf` (Debian: linux-perf) and `wrk`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${SVC_BIN:-$root/target/release/svc}"
connections=16
duration=8
rust_log=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --connections) connections="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --rust-log) rust_log="$2"; shift 2 ;;
    *) echo "perf_stat.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
for tool in perf wrk; do
  command -v "$tool" >/dev/null || { echo "perf_stat.sh: '$tool' not found (apt-get install -y linux-perf wrk)" >&2; exit 1; }
done
strict=0
postgres=""
# shellcheck source=tests/load/server.sh
source "$here/server.sh"

events=context-switches,task-clock
for call in getrandom futex writev recvfrom epoll_wait fsync pwrite64 pread64; do
  events="$events,syscalls:sys_enter_$call"
done
perf stat -e "$events" -p "$server_pid" -o "$work/perf.txt" &
perf_pid=$!
sleep 0.5
threads=2
(( connections < threads )) && threads="$connections"
LOAD_INTENT="$intent" LOAD_CONTRACT="$contract" LOAD_BEARER="$bearer" timeout $((duration + 30)) \
  wrk -s "$here/warm_pair.lua" -t"$threads" -c"$connections" -d"${duration}s" "$mcp" >"$work/wrk.txt"
kill -INT "$perf_pid"
wait "$perf_pid" || true
requests="$(awk '/ requests in / {print $1}' "$work/wrk.txt")"
echo "| counter | total | per request |"
echo "|---|---|---|"
echo "| requests (handshake + render, $connections connections, ${duration} s) | $requests | |"
awk -v n="$requests" '
  $2 ~ /^(context-switches|syscalls:)/ { gsub(",", "", $1); printf "| %s | %s | %.2f |\n", $2, $1, $1 / n }
  $3 == "task-clock" { gsub(",", "", $1); printf "| CPU time (ms) | %s | %.0f us |\n", $1, $1 * 1000 / n }
' "$work/perf.txt"
