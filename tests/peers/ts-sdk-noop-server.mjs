#!/usr/bin/env node
// The reference peer of tests/load/run.sh: the official TypeScript SDK
// (@modelcontextprotocol/sdk, pinned in package-lock.json) serving one no-op tool over
// Streamable HTTP, stateless (a fresh server and transport per request, as the SDK's
// stateless example does), JSON answers (no SSE). Loopback only.
//
//   node tests/peers/ts-sdk-noop-server.mjs PORT
//
// Prints `listening <port>` once it accepts connections.

import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

const port = Number(process.argv[2] ?? 0);

function noopServer() {
  const server = new McpServer({ name: 'noop', version: '1.0.0' });
  server.registerTool('noop', { description: 'Does nothing.' }, async () => ({
    content: [{ type: 'text', text: 'ok' }],
  }));
  return server;
}

const listener = http.createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/mcp') {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    res.writeHead(400).end();
    return;
  }
  const server = noopServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
});

listener.listen(port, '127.0.0.1', () => {
  console.log(`listening ${listener.address().port}`);
});
