#!/usr/bin/env bash
# Held svc_consume(25) long-polls (issue 18): server RSS per long-poll and /healthz latency while
# they are held (tests/benches/long_polls.rs). Loopback only; every poll ends by its own timeout.
#
#   tests/load/long_polls.sh [--count N] [--sessions K] [--http2 P]
#                                 (defaults 10000 and 100; --http2 P: HTTP/2, P polls per connection)
#   SVC_BIN=target/release/svc tests/load/long_polls.sh     (the binary under test; default: the
#                                                            bench's own dev-profile build)
# The descriptor limit must exceed N on both ends (`ulimit -n`).
set -euo pipefail
count=10000 sessions=100 http2=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --count) count="$2"; shift 2 ;;
    --sessions) sessions="$2"; shift 2 ;;
    --http2) http2="$2"; shift 2 ;;
    *) echo "usage: $0 [--count N] [--sessions K] [--http2 P]" >&2; exit 2 ;;
  esac
done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
export LONG_POLLS_COUNT="$count" LONG_POLLS_SESSIONS="$sessions" LONG_POLLS_HTTP2="$http2"
[[ -n "${SVC_BIN:-}" ]] && export LONG_POLLS_SVC_BIN="$(realpath "$SVC_BIN")"
exec cargo bench --profile dev -p svc-tests --bench long_polls
