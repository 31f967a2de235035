#!/usr/bin/env bash
# Live fan-out (issue 18): svc_emit to N subscribed sockets, p50/p99 of emit-to-receive, and
# server RSS per idle subscribed socket, beside a raw poem WebSocket broadcast
# (tests/benches/live_fanout.rs). Loopback only.
#
#   tests/load/fanout.sh [--rounds "1:300,100:60,1000:20"] [--idle 1000] [--client-profile release]
#   SVC_BIN=target/release/svc tests/load/fanout.sh   (the binary under test; default: the
#                                                       bench's own dev-profile build)
#
# The client (1,000 sockets decoding frames on the same two cores) is built with the dev profile
# unless --client-profile says otherwise; a dev-built client's own decoding is part of what a
# round's p99 measures (BENCHMARKS.md, session 16).
set -euo pipefail
profile=dev
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) export LIVE_FANOUT_ROUNDS="$2"; shift 2 ;;
    --idle) export LIVE_FANOUT_IDLE="$2"; shift 2 ;;
    --client-profile) profile="$2"; shift 2 ;;
    *) echo "usage: $0 [--rounds sockets:emits,...] [--idle N] [--client-profile dev|release]" >&2; exit 2 ;;
  esac
done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[[ -n "${SVC_BIN:-}" ]] && export LIVE_FANOUT_SVC_BIN="$(realpath "$SVC_BIN")"
exec cargo bench --profile "$profile" -p svc-tests --bench live_fanout
