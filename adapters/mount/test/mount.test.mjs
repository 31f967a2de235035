// Unit tests of the mount controller (src/mount.ts) and its status line (src/card-root.tsx): the
// test plays the server on a fake WebSocket (test/fake-browser.mjs) and the component loader.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { advance, beginTest, endTest, fetches, installFakeBrowser, json, lastSocket, settle } from './fake-browser.mjs';
import { Mount, CHANNEL_NOTICE_MS } from '../src/mount.ts';
import { statusLines } from '../src/card-root.tsx';
import { resetKeysChanged } from '../src/error-boundary.tsx';

installFakeBrowser();
beforeEach(beginTest);
afterEach(endTest);

const CODE = 'export default function Card() { return null; }';
const Card = () => null;

/** A loader whose answers the test decides: `fail` rejects the next loads. */
function fakeLoader() {
  const loader = { loads: 0, fail: 0, calls: [] };
  loader.load = async (code, bundles, links) => {
    loader.loads += 1;
    loader.calls.push({ code, links });
    if (loader.fail > 0) {
      loader.fail -= 1;
      throw new Error('the gadget package "@acme/charts" could not be fetched from https://cdn.test/charts.js: HTTP 503');
    }
    return Card;
  };
  return loader;
}

function mounted(loader = fakeLoader(), bootstrap = {}) {
  const mount = new Mount(
    { sessionId: 's1', wsUrl: 'ws://svc.test/ws', pollingUrl: 'http://svc.test/_svc/poll/s1', wsToken: 'ws-token', props: { title: 't' }, ...bootstrap },
    loader,
    {},
  );
  mount.start();
  return mount;
}

/** `promise`'s outcome once pending work ran, or 'pending'. */
async function outcomeOf(promise) {
  let outcome = 'pending';
  promise.then((value) => (outcome = value));
  await settle();
  return outcome;
}

const stored = (ws, clientSeq) => ws.receive('system', { event: 'action_stored', clientSeq, actionId: 'a1', sequence: 1, duplicate: false });
const sentSeqs = (ws) => ws.sent.filter((frame) => frame.type === 'action').map((frame) => frame.payload.clientSeq);

test('a component that failed to load is loaded again when the next ack brings the same code', async () => {
  const loader = fakeLoader();
  loader.fail = 1;
  const mount = mounted(loader, { component: { code: CODE } });
  await settle();
  assert.equal(mount.store.get().phase, 'failed');
  assert.match(mount.store.get().notices.load, /HTTP 503/);
  const ws = lastSocket();
  ws.open();
  ws.ack({ component: { code: CODE } });
  await settle();
  assert.equal(loader.loads, 2, 'loaded again');
  assert.equal(mount.store.get().phase, 'ready');
  assert.equal(mount.store.get().component, Card);
  assert.equal(mount.store.get().notices.load, undefined, 'the load failure is over');
  mount.stop();
});

test('the component\'s links from the bootstrap and the ack reach the loader; malformed ones count as none', async () => {
  const links = { imports: [{ n: 'react', ss: 0, se: 26, s: 20, d: -1, a: -1 }], exports: [{ n: 'default', ln: 'Card', s: 43, e: 50 }] };
  const embedded = fakeLoader();
  const mount = mounted(embedded, { component: { code: CODE, blueprintId: 'b1', links } });
  await settle();
  assert.deepEqual(embedded.calls, [{ code: CODE, links }]);
  mount.stop();
  for (const [sent, received] of [[links, links], [{ imports: [] }, undefined], ['links', undefined], [null, undefined]]) {
    const loader = fakeLoader();
    const live = mounted(loader);
    lastSocket().open();
    lastSocket().ack({ component: { code: CODE, blueprintId: 'b1', links: sent } });
    await settle();
    assert.deepEqual(loader.calls, [{ code: CODE, links: received }], JSON.stringify(sent));
    live.stop();
  }
});

test('useAction settles NOT_CONNECTED when the host policy turns the channel off, and at once afterwards', async () => {
  const mount = mounted();
  const waiting = mount.act('approve', { note: 'x' });
  assert.equal(await outcomeOf(waiting), 'pending');
  for (const blockedURI of ['ws://svc.test/ws', 'http://svc.test/_svc/poll/s1?token=t']) {
    const violation = new Event('securitypolicyviolation');
    Object.assign(violation, { effectiveDirective: 'connect-src', blockedURI });
    document.dispatchEvent(violation);
  }
  assert.equal(mount.store.get().live, 'off');
  const first = await outcomeOf(waiting);
  assert.equal(first.ok, false);
  assert.equal(first.code, 'NOT_CONNECTED');
  const later = await outcomeOf(mount.act('approve', { note: 'y' }));
  assert.equal(later.code, 'NOT_CONNECTED', 'an action after the channel is off settles at once');
  assert.deepEqual(statusLines(mount.store.get()).map((line) => line.kind), ['info'], 'the off line says why; no extra notice');
});

test('useAction settles NOT_CONNECTED when the channel fails and when the card is torn down', async () => {
  const failing = mounted();
  const ws = lastSocket();
  ws.open();
  ws.ack();
  const beforeFailure = failing.act('approve', { note: 'x' });
  ws.receive('error', { code: 'SESSION_EXPIRED', message: 'the session expired' });
  assert.equal((await outcomeOf(beforeFailure)).code, 'NOT_CONNECTED');
  assert.equal((await outcomeOf(failing.act('approve', {}))).code, 'NOT_CONNECTED');

  const torn = mounted();
  const beforeTeardown = torn.act('approve', { note: 'x' });
  torn.stop();
  assert.equal((await outcomeOf(beforeTeardown)).code, 'NOT_CONNECTED');
});

test('the transport the card shows (data-svc-transport) is closed once the channel is', async () => {
  let polls = 0;
  const ack = json({ frames: [{ type: 'ack', payload: { sessionId: 's1', sessionToken: 'session-token' } }], cursors: { revision: 1 } });
  fetches.answer = async () => (polls++ === 0 ? ack : new Promise(() => {})); // then a held poll
  const polled = mounted(fakeLoader(), { wsUrl: undefined });
  await settle();
  assert.deepEqual([polled.store.get().transport, polled.store.get().live], ['polling', 'live']);
  polled.stop();
  assert.equal(polled.store.get().transport, 'closed');
  const addressless = mounted(fakeLoader(), { wsUrl: undefined, pollingUrl: undefined });
  assert.deepEqual([addressless.store.get().transport, addressless.store.get().live], ['closed', 'failed']);
});

test('a preview (no session behind it) shows transport none, and opens no channel', async () => {
  fetches.answer = async () => json({ frames: [] });
  const preview = mounted(fakeLoader(), { preview: true, component: { code: CODE } });
  await advance(10_000);
  assert.deepEqual([preview.store.get().transport, preview.store.get().live], ['none', 'preview']);
  assert.equal(lastSocket(), undefined, 'no socket');
  assert.deepEqual(fetches.log, [], 'no poll');
  preview.stop();
  assert.equal(preview.store.get().transport, 'none');
});

test('a refused action says so until a later action is stored', async () => {
  const mount = mounted(fakeLoader(), { component: { code: CODE } });
  const ws = lastSocket();
  ws.open();
  ws.ack({ component: { code: CODE } });
  const refused = mount.act('approve', {});
  const [seq] = sentSeqs(ws);
  ws.receive('error', { code: 'CONTRACT_VIOLATION', message: 'data does not match the contract', clientSeq: seq, violations: [{ path: '/note', message: 'is required' }] });
  const outcome = await outcomeOf(refused);
  assert.deepEqual([outcome.ok, outcome.code, outcome.violations], [false, 'CONTRACT_VIOLATION', [{ path: '/note', message: 'is required' }]]);
  assert.equal(mount.store.get().notices.action, 'The agent\'s contract rejected "approve": CONTRACT_VIOLATION (/note: is required)');
  ws.serverClose(1006);
  assert.deepEqual(statusLines(mount.store.get()), [
    { kind: 'error', text: 'The agent\'s contract rejected "approve": CONTRACT_VIOLATION (/note: is required)' },
    { kind: 'info', text: 'Reconnecting…' },
  ], 'a notice does not hide the reconnecting line');
  await advance(2_000);
  lastSocket().open();
  lastSocket().ack();
  assert.ok(mount.store.get().notices.action, 'a reconnect does not end it');
  const fixed = mount.act('approve', { note: 'ok' });
  stored(lastSocket(), sentSeqs(lastSocket()).at(-1));
  assert.equal((await outcomeOf(fixed)).ok, true);
  assert.deepEqual(mount.store.get().notices, {});
  assert.deepEqual(statusLines(mount.store.get()), []);
  mount.stop();
});

test('an error the server sent about no action ends at the next ack, or after a few seconds', async () => {
  const mount = mounted();
  let ws = lastSocket();
  ws.open();
  ws.ack();
  ws.receive('error', { code: 'INTERNAL', message: 'internal error' });
  assert.equal(mount.store.get().notices.channel, 'INTERNAL: internal error');
  ws.serverClose(1006);
  await advance(2_000);
  ws = lastSocket();
  ws.open();
  ws.ack();
  assert.equal(mount.store.get().notices.channel, undefined, 'the next ack ends it');
  ws.receive('error', { code: 'KEY_REVOKED', message: 'the key was revoked' });
  await advance(CHANNEL_NOTICE_MS - 100);
  assert.ok(mount.store.get().notices.channel);
  await advance(200);
  assert.equal(mount.store.get().notices.channel, undefined, 'it fades');
  mount.stop();
});

test('the error boundary resets when any of its keys changes', () => {
  const props = { title: 't' };
  assert.equal(resetKeysChanged([Card, props, 1], [Card, props, 1]), false);
  assert.equal(resetKeysChanged([Card, props, 1], [Card, { title: 't' }, 1]), true, 'new props');
  assert.equal(resetKeysChanged([Card, props, 1], [Card, props, 2]), true, 'a new epoch');
  assert.equal(resetKeysChanged([Card, props, 1], [() => null, props, 1]), true, 'a new component');
});
