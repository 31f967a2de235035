#!/usr/bin/env bash
# CI check: the runtime's unit tests pass, and the committed dist/ (iframe-runtime.js,
# module-lexer.js, render-check.js, playground.js) is exactly what the locked sources build.
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund
npm run check
npm test
# Removed first, so an output the build no longer writes shows as deleted below.
rm -f dist/iframe-runtime.js dist/module-lexer.js dist/render-check.js dist/playground.js
npm run build
if ! git diff --exit-code --stat -- dist/; then
  echo "adapters/mount/dist differs from a fresh build: run 'npm ci && npm run build' in adapters/mount and commit dist/" >&2
  exit 1
fi
if [ -n "$(git status --porcelain -- dist/)" ]; then
  echo "adapters/mount/dist has uncommitted files:" >&2
  git status --porcelain -- dist/ >&2
  exit 1
fi
echo "dist/iframe-runtime.js, dist/module-lexer.js, dist/render-check.js and dist/playground.js match the sources"
