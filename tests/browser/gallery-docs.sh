#!/usr/bin/env bash
# Regenerates docs/gallery/ (one 720 px PNG per gallery fixture and README.md beside them): builds
# the server, starts it on a free port with a throwaway data dir, runs tests/browser/gallery.mjs
# with --docs, and stops the server. Needs `bash tests/browser/install.sh` first.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -p svc
data=$(mktemp -d)
./target/debug/svc serve --port 0 --data-dir "$data" --dev-allow-all >"$data/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$data/server.log" && break
  sleep 0.2
done
base=$(grep -o 'http://127.0.0.1:[0-9]*' "$data/server.log" | head -1)
(cd tests/browser && node gallery.mjs "$base" --docs ../../docs/gallery)
