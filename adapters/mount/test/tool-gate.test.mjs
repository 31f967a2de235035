// Unit tests of what the playground host forwards from a card (src/playground/tool-gate.ts):
// only tools declared visible to apps, only for the card's own session. A listed client stands
// in for the server's tools/list.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appVisibleTools, refusal } from '../src/playground/tool-gate.ts';

const listed = {
  async listTools() {
    return {
      tools: [
        { name: 'svc_runtime_refresh_ws_token', _meta: { ui: { visibility: ['app'] } } },
        { name: 'svc_runtime_sync_context', _meta: { ui: { visibility: ['model', 'app'] } } },
        { name: 'svc_list_sessions', _meta: { ui: { visibility: ['model'] } } },
        { name: 'svc_consume' },
      ],
    };
  },
};

test('only the tools declared visible to apps are forwarded', async () => {
  const tools = await appVisibleTools(listed);
  assert.deepEqual([...tools].sort(), ['svc_runtime_refresh_ws_token', 'svc_runtime_sync_context']);
  assert.equal(refusal({ name: 'svc_runtime_sync_context', arguments: { sessionId: 's1' } }, tools, 's1'), null);
  assert.equal(refusal({ name: 'svc_list_sessions', arguments: {} }, tools, 's1'), 'svc_list_sessions is not visible to apps');
  assert.equal(refusal({ name: 'svc_consume', arguments: { sessionId: 's1' } }, tools, 's1'), 'svc_consume is not visible to apps');
});

test("an app tool may act only on the card's own session", async () => {
  const tools = await appVisibleTools(listed);
  assert.equal(
    refusal({ name: 'svc_runtime_refresh_ws_token', arguments: { sessionId: 'other' } }, tools, 's1'),
    "svc_runtime_refresh_ws_token may act only on this card's own session",
  );
  assert.equal(refusal({ name: 'svc_runtime_refresh_ws_token', arguments: { sessionId: 's1' } }, tools, 's1'), null);
  assert.equal(
    refusal({ name: 'svc_runtime_refresh_ws_token', arguments: {} }, tools, 's1'),
    "svc_runtime_refresh_ws_token may act only on this card's own session",
  );
});

test("the runtime's own tools pass when tools/list declares no visibility (MCP-Apps off)", () => {
  const none = new Set();
  assert.equal(refusal({ name: 'svc_runtime_refresh_ws_token', arguments: { sessionId: 's1' } }, none, 's1'), null);
  assert.equal(refusal({ name: 'svc_list_sessions', arguments: { sessionId: 's1' } }, none, 's1'), 'svc_list_sessions is not visible to apps');
});
