#!/usr/bin/env bash
# Server CPU per live fan-out event (issue 18): the svc process's CPU time (utime + stime from
# /proc/<pid>/stat) over a 1,000-socket round of FEW emits and one of MANY emits; the difference
# is the CPU of (MANY - FEW) emits, whatever the sockets' opening cost. Steadier than the
# latency on a shared VM, and needs no hardware counters. Loopback only.
#
#   tests/load/fanout_cpu.sh <svc binary> <live_fanout bench binary> [runs] [few] [many]
#
# The bench binary: `cargo bench -p svc-tests --bench live_fanout --no-run` (release), then
# target/release/deps/live_fanout-<hash>.
set -euo pipefail
svc="$(realpath "$1")"; bench="$(realpath "$2")"; runs="${3:-2}"; few="${4:-20}"; many="${5:-220}"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
ticks_per_second="$(getconf CLK_TCK)"

# Runs one round of `emits` and prints the svc process's CPU ticks when it ended.
cpu_ticks() {
  local emits="$1" log pid="" last=0 t
  log="$(mktemp)"
  LIVE_FANOUT_ROUNDS="1000:$emits" LIVE_FANOUT_IDLE=10 LIVE_FANOUT_SVC_BIN="$svc" \
    timeout 300 "$bench" --bench >"$log" 2>&1 &
  local bench_pid=$!
  for _ in $(seq 1 200); do
    pid="$(pgrep -f "^$svc" | head -1 || true)"
    [[ -n "$pid" ]] && break
    sleep 0.05
  done
  [[ -n "$pid" ]] || { echo "svc did not start" >&2; cat "$log" >&2; exit 1; }
  while [[ -e "/proc/$pid/stat" ]]; do
    t="$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || true)"
    [[ -n "$t" ]] && last="$t"
    sleep 0.05
  done
  wait "$bench_pid" || { echo "the bench failed" >&2; cat "$log" >&2; exit 1; }
  rm -f "$log"
  echo "$last"
}

for run in $(seq 1 "$runs"); do
  a="$(cpu_ticks "$few")"; b="$(cpu_ticks "$many")"
  awk -v a="$a" -v b="$b" -v n="$((many - few))" -v hz="$ticks_per_second" -v run="$run" \
    'BEGIN { printf "run %d: %.2f s of svc CPU for %d emits to 1,000 sockets, %.1f ms per emit\n", run, (b - a) / hz, n, (b - a) / hz / n * 1000 }'
done
