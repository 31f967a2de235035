// The test's MCP-Apps host page and the server that serves it (card-flow.mjs,
// installed-card.mjs): host.html, the ext-apps AppBridge bundled by esbuild, the policy builder,
// frames mounted by URL, and whatever extra files a script adds (gadget bundles a CDN would serve).

import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { frameDocument } from './host-policy.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * Starts the host page's server on `port` (0: any). `files` maps a path to `[contentType, body]`,
 * served with CORS `*` as a CDN would (the sandboxed card's origin is opaque).
 * Resolves to `{ origin, frames, close }`; `frames` maps an id to `{ html, csp }` served at
 * `/frame/<id>`.
 */
export async function startHostServer({ port = 0, files = {} } = {}) {
  const hostHtml = await readFile(path.join(HERE, 'host.html'), 'utf8');
  const bundled = await build({
    stdin: {
      contents: "export { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';",
      resolveDir: HERE,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  const appBridgeJs = bundled.outputFiles[0].text;
  const hostPolicyJs = await readFile(path.join(HERE, 'host-policy.js'), 'utf8');
  const frames = new Map();
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://host');
    if (url.pathname === '/host.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(hostHtml);
    } else if (url.pathname === '/vendor/host-policy.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(hostPolicyJs);
    } else if (url.pathname.startsWith('/frame/') && frames.has(url.pathname.slice('/frame/'.length))) {
      const { html, csp } = frames.get(url.pathname.slice('/frame/'.length));
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(frameDocument(html, csp));
    } else if (url.pathname === '/vendor/app-bridge.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(appBridgeJs);
    } else if (Object.hasOwn(files, url.pathname)) {
      const [type, body] = files[url.pathname];
      res.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'access-control-allow-origin': '*' }).end(body);
    } else {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  return { origin, frames, close: () => new Promise((resolve) => server.close(resolve)) };
}
