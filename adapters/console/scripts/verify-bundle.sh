#!/usr/bin/env bash
# CI check: the console type-checks, and the committed dist/ (app.js, app.css, index.html) is
# exactly what the locked sources build.
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund
npm run check
npm run build
if ! git diff --exit-code --stat -- dist/; then
  echo "adapters/console/dist differs from a fresh build: run 'npm ci && npm run build' in adapters/console and commit dist/" >&2
  exit 1
fi
if [ -n "$(git status --porcelain -- dist/)" ]; then
  echo "adapters/console/dist has uncommitted files:" >&2
  git status --porcelain -- dist/ >&2
  exit 1
fi
echo "adapters/console/dist matches the sources"
