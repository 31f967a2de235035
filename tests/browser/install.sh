#!/usr/bin/env bash
# Installs what tests/tests/blackbox/browser.rs needs, idempotently: Debian's Chromium (never a
# Playwright-downloaded browser) and the locked npm packages of tests/browser.
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get install -y chromium || { apt-get update && apt-get install -y chromium; }
  else
    sudo apt-get install -y chromium || { sudo apt-get update && sudo apt-get install -y chromium; }
  fi
fi

# playwright-core has no install script and downloads nothing; keep it that way.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
npm ci --no-audit --no-fund

/usr/bin/chromium --version 2>/dev/null || true
echo "browser test dependencies installed"
