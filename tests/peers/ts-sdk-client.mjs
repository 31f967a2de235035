#!/usr/bin/env node
// A real third-party MCP peer: the official TypeScript SDK client
// (@modelcontextprotocol/sdk, version pinned in package-lock.json) over Streamable
// HTTP against an svc `/mcp` endpoint.
//
//   node tests/peers/ts-sdk-client.mjs http://127.0.0.1:PORT/mcp
//
// Runs initialize -> tools/list -> svc_handshake -> svc_render -> svc_update ->
// svc_consume and asserts on the real results. Exits 0 on success; on any failure it
// prints `ts-sdk-client: FAIL: <what>` to stderr and exits 1. The bearer sent is
// $SVC_PEER_BEARER, or `test` (any bearer works on a `serve --dev-allow-all` server).
// Works on Node 20 (the SDK supports it).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const EXPECTED_TOOLS = [
  'svc_handshake',
  'svc_render',
  'svc_update',
  'svc_amend',
  'svc_consume',
  'svc_emit',
  'svc_get_session',
  'svc_get_render_source',
  'svc_list_sessions',
  'svc_list_gadgets',
  'svc_list_themes',
];

class PeerFailure extends Error {}

function check(condition, message, detail) {
  if (!condition) {
    const shown = detail === undefined ? '' : `\n  got: ${JSON.stringify(detail, null, 2)}`;
    throw new PeerFailure(`${message}${shown}`);
  }
}

function log(message) {
  console.log(`ts-sdk-client: ${message}`);
}

/** Calls a tool and returns its structuredContent, failing on an error result. */
async function call(client, name, args, options) {
  const result = await client.callTool({ name, arguments: args }, undefined, options);
  check(!result.isError, `${name} returned an error result`, result);
  check(
    result.structuredContent && typeof result.structuredContent === 'object',
    `${name} returned no structuredContent object`,
    result,
  );
  check(Array.isArray(result.content), `${name} returned no content array`, result);
  return { result, sc: result.structuredContent };
}

async function main() {
  const url = process.argv[2];
  check(url, 'usage: node ts-sdk-client.mjs <http://127.0.0.1:PORT/mcp>');
  const bearer = process.env.SVC_PEER_BEARER || 'test';

  const client = new Client({ name: 'svc-peer-ts-sdk', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });

  await client.connect(transport);
  try {
    const serverVersion = client.getServerVersion();
    const caps = client.getServerCapabilities();
    log(
      `connected to ${serverVersion?.name} ${serverVersion?.version}, ` +
        `protocol ${transport.protocolVersion ?? '(not set)'}`,
    );
    check(serverVersion?.name, 'initialize result has no serverInfo.name', serverVersion);
    check(caps?.tools, 'server does not declare the tools capability', caps);

    // tools/list: every svc_* tool with an object input schema.
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    const missing = EXPECTED_TOOLS.filter((n) => !byName.has(n));
    check(missing.length === 0, `tools/list lacks ${missing.join(', ')}`, [...byName.keys()]);
    for (const name of EXPECTED_TOOLS) {
      const tool = byName.get(name);
      check(
        tool.inputSchema && tool.inputSchema.type === 'object',
        `${name}.inputSchema.type is not "object"`,
        tool.inputSchema,
      );
    }
    log(`tools/list: ${tools.length} tools, all ${EXPECTED_TOOLS.length} svc_* tools present`);

    // svc_handshake
    const intent = `ts sdk peer ${Date.now()}`;
    const { sc: hs } = await call(client, 'svc_handshake', {
      intent,
      blueprintDraft: {
        contract: {
          propsSpec: {
            type: 'object',
            properties: { title: { type: 'string' }, count: { type: 'integer' } },
            required: ['title'],
          },
          actionSpec: { approve: { description: 'The user approves.' } },
          streamSpec: {},
          contextSpec: {},
        },
      },
    });
    check(typeof hs.handshakeId === 'string' && hs.handshakeId.length > 0, 'handshake has no handshakeId', hs);
    check(['create', 'reuse', 'update', 'replace'].includes(hs.action), 'handshake action is not a go', hs);
    check(hs.suggestion && typeof hs.suggestion === 'object', 'handshake has no suggestion', hs);
    check(
      typeof hs.propsSchemaHash === 'string' && /^[0-9a-f]{64}$/.test(hs.propsSchemaHash),
      'handshake propsSchemaHash is not 64 lowercase hex digits',
      hs,
    );
    log(`svc_handshake: ${hs.action} (${hs.suggestion.origin}), handshakeId ${hs.handshakeId}`);

    // svc_render, following its progress (the SDK sends _meta.progressToken; the server answers
    // with an event stream of notifications/progress, then the result)
    const progress = [];
    const { result: rendered, sc: rs } = await call(
      client,
      'svc_render',
      { handshakeId: hs.handshakeId, props: { title: 'Order 42', count: 1 } },
      { onprogress: (update) => progress.push(update) },
    );
    check(rs.outcome === 'rendered', 'svc_render outcome is not "rendered"', rs);
    check(rs.cache?.hit === false, 'the unique intent should generate', rs);
    const stages = progress.map((update) => String(update.message).split(':')[0]);
    for (const stage of ['queued', 'prompting', 'compiling', 'done']) {
      check(stages.includes(stage), `svc_render progress has no "${stage}" stage`, progress);
    }
    check(stages.indexOf('queued') < stages.indexOf('compiling') && stages.indexOf('compiling') < stages.indexOf('done'), 'svc_render progress stages are out of order', progress);
    check(progress.every((update, i) => i === 0 || update.progress > progress[i - 1].progress), 'svc_render progress does not increase', progress);
    log(`svc_render progress: ${stages.join(' -> ')}`);
    check(typeof rs.sessionId === 'string' && rs.sessionId.length > 0, 'svc_render has no sessionId', rs);
    check(
      rs.resourceUri === `ui://svc/render/${rs.sessionId}`,
      'svc_render resourceUri is not ui://svc/render/<sessionId>',
      rs,
    );
    check(typeof rs.blueprintId === 'string', 'svc_render has no blueprintId', rs);
    check(rs.cache && typeof rs.cache.hit === 'boolean', 'svc_render has no cache.hit', rs);
    check(
      rendered._meta?.ui?.resourceUri === rs.resourceUri,
      'svc_render result _meta.ui.resourceUri does not mirror resourceUri',
      rendered._meta,
    );
    check(
      rendered._meta?.['ai.svc/render'] && typeof rendered._meta['ai.svc/render'] === 'object',
      "svc_render result has no _meta['ai.svc/render']",
      rendered._meta,
    );
    const sessionId = rs.sessionId;
    log(`svc_render: rendered, sessionId ${sessionId}`);

    // svc_update (replace with changed props) -> epoch 2
    const { sc: up } = await call(client, 'svc_update', {
      sessionId,
      kind: 'replace',
      props: { title: 'Order 42 (approved?)', count: 2 },
    });
    check(up.sessionId === sessionId, 'svc_update sessionId differs', up);
    check(up.updated === true, 'svc_update updated is not true', up);
    check(up.epoch === 2, 'svc_update epoch is not 2 after the first changing update', up);
    check(
      up.resourceUri === `ui://svc/render/${sessionId}#2`,
      'svc_update resourceUri is not epoch-pinned ui://svc/render/<sessionId>#2',
      up,
    );
    log(`svc_update: updated, epoch ${up.epoch}`);

    // svc_consume (timeout 0: immediate)
    const { sc: cs } = await call(client, 'svc_consume', { sessionId, timeout: 0 });
    check(Array.isArray(cs.events), 'svc_consume events is not an array', cs);
    check(cs.status === 'active', 'svc_consume status is not "active"', cs);
    log(`svc_consume: ${cs.events.length} event(s), status ${cs.status}`);

    log('OK');
  } finally {
    await client.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    const message = err instanceof PeerFailure ? err.message : (err?.stack ?? String(err));
    console.error(`ts-sdk-client: FAIL: ${message}`);
    process.exit(1);
  },
);
