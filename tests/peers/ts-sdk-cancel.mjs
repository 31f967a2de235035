#!/usr/bin/env node
// The official TypeScript SDK client cancelling a render: an aborted `callTool` makes the SDK send
// `notifications/cancelled`, which must free the server's only generation slot and give the
// handshake back.
//
//   node tests/peers/ts-sdk-cancel.mjs http://127.0.0.1:PORT/mcp MODEL
//
// The server behind the URL has one generation slot, no waiting room, and a language-model
// provider that holds every reply until the test lets go (`a_typescript_sdk_abort_cancels_the_render` in tests/tests/blackbox/generation_queue.rs). Prints
// `ts-sdk-cancel: OK` and exits 0; on failure prints `ts-sdk-cancel: FAIL: <what>` and exits 1.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, model] = process.argv.slice(2);

function check(condition, message, detail) {
  if (!condition) throw new Error(`${message}${detail === undefined ? '' : `: ${JSON.stringify(detail)}`}`);
}

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${process.env.SVC_PEER_BEARER ?? 'test'}` } },
  });
  const client = new Client({ name: 'svc-peer-ts-cancel', version: '1.0.0' });
  await client.connect(transport);

  const handshake = async (intent) => {
    const result = await client.callTool({ name: 'svc_handshake', arguments: { intent, blueprintDraft: { contract: {} } } });
    check(!result.isError, 'svc_handshake failed', result);
    return result.structuredContent.handshakeId;
  };
  const render = (handshakeId, options) =>
    client.callTool({ name: 'svc_render', arguments: { handshakeId, props: {}, infra: { model } } }, undefined, options);
  const renderWhenAdmitted = async (handshakeId) => {
    const deadline = Date.now() + 5000;
    for (;;) {
      try {
        return await render(handshakeId, { timeout: 60_000 });
      } catch (error) {
        if (!String(error?.message).includes('-32014') || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  const first = await handshake('a card the user gave up on');
  const second = await handshake('the card the user asked for next');

  // The first render waits on the held provider; the user gives up on it.
  const abort = new AbortController();
  const abandoned = render(first, { signal: abort.signal, timeout: 60_000 });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  abort.abort('the user closed the card');
  const outcome = await abandoned.then(() => 'resolved', (error) => error);
  check(outcome !== 'resolved', 'the aborted callTool resolved');

  // With one slot and no waiting room, this is refused (-32014) while the slot is held. The SDK
  // sends notifications/cancelled without waiting for it, so this request may overtake it: like
  // an agent honouring Retry-After, retry for a few seconds. Without the cancellation the slot
  // stays held until the provider answers, which the test allows only once this render reached it.
  const next = await renderWhenAdmitted(second);
  check(!next.isError && next.structuredContent?.outcome === 'rendered', 'the next render after the cancellation', next);

  // The cancelled render committed nothing: its handshake renders now.
  const again = await render(first, { timeout: 60_000 });
  check(!again.isError && again.structuredContent?.outcome === 'rendered', 'the cancelled handshake renders again', again);

  await client.close();
  console.log('ts-sdk-cancel: OK');
}

main().catch((error) => {
  console.error(`ts-sdk-cancel: FAIL: ${error?.message ?? error}`);
  process.exit(1);
});
