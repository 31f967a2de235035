// Unit tests of the live channel client (src/live-socket.ts, src/long-poll.ts): the test plays
// the server on a fake WebSocket and a fake fetch (test/fake-browser.mjs), on a mocked clock.
// What is checked is what docs/live-channel.md says the card does with actions the server did
// not store, and that a closed channel settles every `useAction` promise.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { FakeSocket, advance, beginTest, endTest, fetches, installFakeBrowser, json, lastSocket, settle } from './fake-browser.mjs';
import { LiveSocket } from '../src/live-socket.ts';

installFakeBrowser();
beforeEach(beginTest);
afterEach(endTest);

/** How the channel fails when the host gives no token, by what the refused request carried. */
const REFUSED = 'AUTH_FAILED: the live-channel token was refused';
const NO_TOKEN = 'AUTH_FAILED: the card has no token for the live channel';
/** What a failure adds when the host's refresh threw `host gone`. */
const HOST_GONE = " and the host's refresh failed (host gone)";

/** A LiveSocket whose callbacks are recorded. */
function liveSocket(options = {}) {
  const seen = { failed: [], stored: [], statuses: [], frames: [] };
  const socket = new LiveSocket({
    url: 'ws://svc.test/ws',
    sessionId: 's1',
    wsToken: 'ws-token',
    onAck: () => {},
    onFrame: (frame) => seen.frames.push(frame),
    onStatus: (status, detail) => seen.statuses.push(detail ? `${status}: ${detail}` : status),
    onReplayGap: () => {},
    onActionFailed: (action, error) => seen.failed.push({ clientSeq: action.clientSeq, code: error.code, message: error.message }),
    onActionStored: (clientSeq) => seen.stored.push(clientSeq),
    ...options,
  });
  return { socket, seen };
}

/** Starts `socket` and completes the first subscribe; returns the server's side. */
function subscribed(socket) {
  socket.start();
  const ws = lastSocket();
  ws.open();
  ws.ack();
  return ws;
}

const action = (socket, data = { note: 'x' }) => socket.sendAction('approve', data, undefined);

test('an action larger than the server reads fails with FRAME_TOO_LARGE unsent, and the next one goes', async () => {
  const { socket, seen } = liveSocket();
  const ws = subscribed(socket);
  const big = action(socket, { note: 'x'.repeat(300 * 1024) });
  const small = action(socket);
  await settle();
  assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[big, 'FRAME_TOO_LARGE']]);
  assert.deepEqual(ws.actionSeqs(), [small], 'only the small action went on the socket');
  assert.equal(socket.pendingActions, 1);
});

/** A server with a lower limit than ours refuses an action as too large: the frame it will not
 * read is answered (or not), then the socket is closed with 1009. */
async function refusedAsTooLarge(withErrorFrame) {
  const { socket, seen } = liveSocket();
  const first = subscribed(socket);
  const tooLarge = action(socket, { note: 'y'.repeat(100 * 1024) });
  if (withErrorFrame) first.receive('error', { code: 'FRAME_TOO_LARGE', message: 'frames are at most 256 KiB' });
  first.serverClose(1009);
  assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[tooLarge, 'FRAME_TOO_LARGE']]);
  assert.equal(socket.pendingActions, 0, 'it left the queue');
  const later = action(socket);
  await advance(2_000);
  const second = lastSocket();
  assert.notEqual(second, first, 'the card reconnects');
  second.open();
  second.ack();
  assert.deepEqual(second.actionSeqs(), [later], 'the refused action is not sent again');
  second.receive('system', { event: 'action_stored', clientSeq: later, actionId: 'a1', sequence: 1, duplicate: false });
  assert.deepEqual(seen.stored, [later]);
  socket.stop();
}

test('an action refused with FRAME_TOO_LARGE and 1009 is dropped: not sent after the reconnect, later ones are', () => refusedAsTooLarge(true));

test('a 1009 close alone drops the oldest unanswered action the same way', () => refusedAsTooLarge(false));

test('a socket the server closes right after each ack is reopened with growing waits, not in a tight loop', async () => {
  const { socket } = liveSocket();
  socket.start();
  const handled = new Set();
  for (let elapsed = 0; elapsed < 20_000; elapsed += 50) {
    for (const ws of FakeSocket.all) {
      if (handled.has(ws)) continue;
      handled.add(ws);
      ws.open();
      ws.ack();
      ws.serverClose(1009);
    }
    await advance(50);
  }
  assert.ok(FakeSocket.all.length <= 8, `${FakeSocket.all.length} sockets in 20 s`);
  socket.stop();
});

test('SERVER_BUSY: sent again with the same clientSeq after retryAfterSeconds, given up after five refusals', async () => {
  const { socket, seen } = liveSocket();
  const ws = subscribed(socket);
  const seq = action(socket);
  for (let refusal = 1; refusal <= 5; refusal += 1) {
    assert.equal(ws.actionSeqs().length, refusal, `sends before refusal ${refusal}`);
    ws.receive('error', { code: 'SERVER_BUSY', message: 'busy', clientSeq: seq, retryAfterSeconds: 2 });
    await advance(1_950);
    assert.equal(ws.actionSeqs().length, refusal, 'not sent again before the wait is over');
    await advance(100);
  }
  assert.deepEqual(ws.actionSeqs(), [seq, seq, seq, seq, seq]);
  assert.equal(seen.failed.length, 1);
  assert.equal(seen.failed[0].code, 'SERVER_BUSY');
  assert.equal(socket.pendingActions, 0, 'left the queue');
  await advance(20_000);
  assert.equal(ws.actionSeqs().length, 5, 'never sent again');
});

test('RATE_LIMITED without a clientSeq belongs to the oldest unanswered action: sent again after a second', async () => {
  const { socket, seen } = liveSocket();
  const ws = subscribed(socket);
  const seq = action(socket);
  ws.receive('error', { code: 'RATE_LIMITED', message: 'too many frames; slow down' });
  await advance(900);
  assert.deepEqual(ws.actionSeqs(), [seq]);
  await advance(200);
  assert.deepEqual(ws.actionSeqs(), [seq, seq]);
  // Such a refusal may have answered another frame (a ping, an echo): however many come, they do
  // not count toward giving the action up.
  for (let refusal = 2; refusal <= 7; refusal += 1) {
    ws.receive('error', { code: 'RATE_LIMITED', message: 'too many frames; slow down' });
    await advance(1_100);
  }
  assert.equal(ws.actionSeqs().length, 8);
  assert.deepEqual(seen.failed, [], 'not given up over refusals it may not own');
  ws.receive('system', { event: 'action_stored', clientSeq: seq, actionId: 'a1', sequence: 1, duplicate: false });
  assert.deepEqual(seen.stored, [seq]);
  assert.deepEqual(seen.failed, []);
  assert.deepEqual(seen.frames.filter((frame) => frame.type === 'error'), [], 'no notice for a refusal that was retried');
});

test('BAD_FRAME fails its action for good: not sent again at the next ack', async () => {
  const { socket, seen } = liveSocket();
  const first = subscribed(socket);
  const bad = action(socket);
  const good = action(socket);
  // A refusal of another frame (no clientSeq) is no action's.
  first.receive('error', { code: 'BAD_FRAME', message: 'unknown frame type `x`' });
  assert.deepEqual(seen.failed, []);
  first.receive('error', { code: 'BAD_FRAME', message: 'payload.action (the intent) is required', clientSeq: bad });
  first.receive('system', { event: 'action_stored', clientSeq: good, actionId: 'a2', sequence: 1, duplicate: false });
  assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[bad, 'BAD_FRAME']]);
  first.serverClose(1006);
  await advance(2_000);
  lastSocket().open();
  lastSocket().ack();
  assert.deepEqual(lastSocket().actionSeqs(), []);
});

test('an action with a NUL fails with BAD_FRAME unsent, naming the path as the server would', async () => {
  const { socket, seen } = liveSocket();
  const ws = subscribed(socket);
  const seq = action(socket, { items: ['ok', 'a\u0000b'] });
  await settle();
  assert.deepEqual(seen.failed, [{ clientSeq: seq, code: 'BAD_FRAME', message: 'payload.payload.data.items.1 must not contain U+0000 (NUL)' }]);
  assert.deepEqual(ws.actionSeqs(), []);
});

test('stop() settles every action not yet stored with NOT_CONNECTED, and later ones at once', async () => {
  const { socket, seen } = liveSocket();
  socket.start(); // never subscribed: the action waits for an ack
  const waiting = action(socket);
  socket.stop('this host does not allow the card to connect to its server');
  const late = action(socket);
  await settle();
  assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code, f.message]), [
    [waiting, 'NOT_CONNECTED', 'this host does not allow the card to connect to its server'],
    [late, 'NOT_CONNECTED', 'this host does not allow the card to connect to its server'],
  ]);
});

test('a channel that failed settles its actions with NOT_CONNECTED, and later ones at once', async () => {
  const { socket, seen } = liveSocket();
  const ws = subscribed(socket);
  const waiting = action(socket);
  ws.receive('error', { code: 'SESSION_EXPIRED', message: 'the session expired' });
  const late = action(socket);
  await settle();
  assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[waiting, 'NOT_CONNECTED'], [late, 'NOT_CONNECTED']]);
  assert.match(seen.failed[0].message, /SESSION_EXPIRED/);
  assert.equal(seen.statuses.at(-1), 'failed: SESSION_EXPIRED: the session expired');
});

test('a reconnect closes the socket it replaces (a refreshed token arriving after `online` reconnected)', async () => {
  let answerRefresh;
  const { socket } = liveSocket({ refreshWsToken: () => new Promise((resolve) => (answerRefresh = resolve)) });
  socket.start();
  const refused = lastSocket();
  refused.open();
  refused.receive('error', { code: 'AUTH_FAILED', message: 'expired' }); // the card asks the host for a token
  window.dispatchEvent(new Event('online')); // meanwhile the browser says it is back online
  const reopened = lastSocket();
  assert.notEqual(reopened, refused);
  reopened.open();
  answerRefresh('fresh-token');
  await settle();
  const latest = lastSocket();
  assert.notEqual(latest, reopened);
  assert.equal(reopened.closedWith, 1000, 'the socket it replaces is closed');
  assert.equal(reopened.onmessage, null, 'and no longer heard');
  assert.equal(FakeSocket.all.filter((ws) => ws.closedWith === undefined).length, 1, 'one socket open');
  socket.stop();
});

// ---------- a subscribe refused before its ack ----------

const BUSY = 'the server is replaying to many sockets; subscribe again shortly';

/** Starts `socket` and opens its first socket, without answering the subscribe. */
function opened(socket) {
  socket.start();
  const ws = lastSocket();
  ws.open();
  return ws;
}

/** Moves the clock on until the card opens its next socket (at most a minute); returns when. */
async function nextSocket() {
  const count = FakeSocket.all.length;
  for (let waited = 0; FakeSocket.all.length === count && waited < 60_000; waited += 50) await advance(50);
  assert.equal(FakeSocket.all.length, count + 1, 'a new socket within a minute');
  return Date.now();
}

// reconnectDelay(0) is random in [250, 500] ms: the first refusal's wait is retryAfterSeconds plus that.
for (const retryAfterSeconds of [1, 5]) {
  test(`a subscribe answered SERVER_BUSY (retryAfterSeconds ${retryAfterSeconds}) is sent again on a new socket after that wait plus the jittered backoff, from the same cursors`, async () => {
    const { socket, seen } = liveSocket({ lastSequence: 7 });
    const busy = opened(socket);
    busy.receive('error', { code: 'SERVER_BUSY', message: BUSY, retryAfterSeconds });
    const seq = action(socket);
    assert.equal(busy.closedWith, 1000, 'the refused socket is closed, not left to the 15 s connect timeout');
    assert.equal(seen.statuses.at(-1), `reconnecting: SERVER_BUSY: ${BUSY}`);
    await advance(retryAfterSeconds * 1000 + 200);
    assert.equal(FakeSocket.all.length, 1, 'not sooner than the server asked');
    await advance(400);
    assert.equal(FakeSocket.all.length, 2, 'subscribed again once the wait is over');
    const again = lastSocket();
    again.open();
    assert.deepEqual(again.sent, busy.sent, 'the same subscribe: same token and cursors');
    assert.equal(again.sent[0].payload.sinceSequence, 7);
    again.ack();
    assert.equal(seen.statuses.at(-1), 'live');
    assert.deepEqual(again.actionSeqs(), [seq], 'the action waited for the ack');
    assert.deepEqual(busy.actionSeqs(), []);
    socket.stop();
  });
}

test('a server busy subscribe after subscribe: growing jittered waits, still over the WebSocket (no polling), live at the first ack', async () => {
  const { socket, seen } = liveSocket({ pollingUrl: 'http://svc.test/_svc/poll/s1' });
  const openedAt = [Date.now()];
  opened(socket).receive('error', { code: 'SERVER_BUSY', message: BUSY, retryAfterSeconds: 1 });
  for (let round = 1; round < 6; round += 1) {
    openedAt.push(await nextSocket());
    lastSocket().open();
    lastSocket().receive('error', { code: 'SERVER_BUSY', message: BUSY, retryAfterSeconds: 1 });
  }
  openedAt.push(await nextSocket());
  lastSocket().open();
  lastSocket().ack();
  // Refusal n waits 1 s plus reconnectDelay(n): random in [d/2, d], d = 500 ms * 2^n.
  for (let n = 0; n < 6; n += 1) {
    const wait = openedAt[n + 1] - openedAt[n];
    const d = 500 * 2 ** n;
    assert.ok(wait >= 1000 + d / 2 && wait <= 1000 + d + 50, `wait ${n}: ${wait} ms`);
  }
  assert.equal(fetches.log.length, 0, 'a server that answers is not a blocked socket: no polling');
  assert.equal(socket.transport, 'websocket');
  assert.equal(seen.statuses.at(-1), 'live');
  assert.ok(!seen.statuses.some((status) => status.startsWith('failed')));
  socket.stop();
});

for (const code of ['INTERNAL', 'RATE_LIMITED']) {
  test(`a subscribe answered ${code} without a wait is sent again on a new socket after the reconnect backoff`, async () => {
    const { socket, seen } = liveSocket();
    opened(socket).receive('error', { code, message: 'not now' });
    assert.equal(seen.statuses.at(-1), `reconnecting: ${code}: not now`);
    await advance(200);
    assert.equal(FakeSocket.all.length, 1);
    await advance(350);
    assert.equal(FakeSocket.all.length, 2);
    lastSocket().open();
    lastSocket().ack();
    assert.equal(seen.statuses.at(-1), 'live');
    socket.stop();
  });
}

test('a subscribe refused with BAD_FRAME closes the channel at once, saying why: no silent wait, no reconnect', async () => {
  const { socket, seen } = liveSocket({ pollingUrl: 'http://svc.test/_svc/poll/s1' });
  const ws = opened(socket);
  const seq = action(socket);
  const message = 'subscribe payload: role: `robot` is not `user` or `agent`';
  ws.receive('error', { code: 'BAD_FRAME', message });
  await settle();
  assert.equal(seen.statuses.at(-1), `failed: BAD_FRAME: ${message}`);
  assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[seq, 'NOT_CONNECTED']]);
  assert.equal(socket.transport, 'closed');
  await advance(30_000, 500);
  assert.equal(FakeSocket.all.length, 1, 'the same subscribe would be refused again');
  assert.equal(fetches.log.length, 0);
});

// ---------- a binding lost after the ack ----------

const INTERNAL = { code: 'INTERNAL', message: 'internal error' };
const NOT_SUBSCRIBED = { code: 'NOT_SUBSCRIBED', message: 'send subscribe first' };
const subscribes = (ws) => ws.sent.filter((frame) => frame.type === 'subscribe');

/** A subscribed socket whose card applied stream envelope 5 and session event 9. */
function subscribedWithCursors(socket) {
  const ws = subscribed(socket);
  ws.receive('data', { sessionId: 's1', channel: 'log', seq: 5, mode: 'append', payload: 'line 5' });
  ws.receive('render_event', { sessionId: 's1', sequence: 9, type: 'data:submit' });
  return ws;
}

test('a replay that failed after the ack (INTERNAL without a clientSeq, then NOT_SUBSCRIBED for a frame sent meanwhile): subscribed again once on the same socket, from its cursors; the action goes after the new ack and is stored', async () => {
  const { socket, seen } = liveSocket();
  const ws = subscribedWithCursors(socket);
  const seq = action(socket); // read by the server after its replay failed
  ws.receive('error', INTERNAL);
  ws.receive('error', NOT_SUBSCRIBED);
  assert.equal(FakeSocket.all.length, 1, 'the server keeps the socket open: no new one');
  assert.equal(ws.closedWith, undefined);
  const [first, again, ...more] = subscribes(ws);
  assert.ok(again, 'subscribed again');
  assert.equal(more.length, 0, 'once: the NOT_SUBSCRIBED answered the action, not the new subscribe');
  const { wsToken, ...rest } = first.payload;
  assert.equal(wsToken, 'ws-token');
  assert.deepEqual(again.payload, { ...rest, sessionToken: 'session-token', fromSeq: 5, sinceSequence: 9 }, 'the session token and the cursors of the frames applied');
  assert.equal(seen.statuses.at(-1), 'reconnecting: INTERNAL: internal error');
  assert.deepEqual(seen.frames.filter((frame) => frame.type === 'error').map((frame) => frame.payload), [INTERNAL], 'the card shows the INTERNAL (until the next ack); the NOT_SUBSCRIBED answered a frame the new subscribe covers');
  const later = action(socket);
  assert.deepEqual(ws.actionSeqs(), [seq], 'nothing is sent while unbound');
  ws.ack();
  assert.equal(seen.statuses.at(-1), 'live');
  assert.deepEqual(ws.actionSeqs(), [seq, seq, later], 'both go after the new ack');
  ws.receive('system', { event: 'action_stored', clientSeq: seq, actionId: 'a1', sequence: 10, duplicate: false });
  ws.receive('system', { event: 'action_stored', clientSeq: later, actionId: 'a2', sequence: 11, duplicate: false });
  assert.deepEqual(seen.stored, [seq, later]);
  assert.deepEqual(seen.failed, []);
  socket.stop();
});

test('NOT_SUBSCRIBED after the ack (the INTERNAL before it not heard): the card subscribes again on the same socket, once for all the frames refused, and its action is stored', async () => {
  const { socket, seen } = liveSocket();
  const ws = subscribedWithCursors(socket);
  const seq = action(socket);
  assert.equal(socket.send({ type: 'host_context_observed', payload: { theme: 'dark' } }), true);
  ws.receive('error', NOT_SUBSCRIBED); // the action's answer
  ws.receive('error', NOT_SUBSCRIBED); // the host context's
  assert.deepEqual(subscribes(ws).map((frame) => [frame.payload.fromSeq, frame.payload.sinceSequence]), [[0, 0], [5, 9]]);
  assert.equal(seen.statuses.at(-1), 'reconnecting: NOT_SUBSCRIBED: send subscribe first');
  assert.equal(socket.send({ type: 'ping' }), false, 'the card sends nothing while unbound');
  ws.ack();
  assert.deepEqual(ws.actionSeqs(), [seq, seq]);
  ws.receive('system', { event: 'action_stored', clientSeq: seq, actionId: 'a1', sequence: 10, duplicate: false });
  assert.deepEqual(seen.stored, [seq]);
  assert.deepEqual(seen.failed, []);
  assert.equal(seen.statuses.at(-1), 'live');
  socket.stop();
});

test('an action refused INTERNAL with its clientSeq is sent again on the same binding; INTERNAL without one then subscribes again', async () => {
  const { socket, seen } = liveSocket();
  const ws = subscribed(socket);
  const seq = action(socket);
  ws.receive('error', { ...INTERNAL, clientSeq: seq });
  await advance(1_100);
  assert.deepEqual(ws.actionSeqs(), [seq, seq], 'the action went again after its wait');
  assert.equal(subscribes(ws).length, 1, 'an action refused is no lost binding');
  assert.equal(seen.statuses.at(-1), 'live');
  ws.receive('error', INTERNAL);
  assert.equal(subscribes(ws).length, 2);
  socket.stop();
});

test('a binding lost again and again: the first time on the same socket at once, then on new sockets with growing waits, not in a tight loop', async () => {
  const { socket, seen } = liveSocket({ pollingUrl: 'http://svc.test/_svc/poll/s1' });
  socket.start();
  let subscribeCount = 0;
  const answered = new Map();
  for (let elapsed = 0; elapsed < 20_000; elapsed += 50) {
    for (const ws of FakeSocket.all) {
      if (ws.readyState === FakeSocket.CONNECTING && ws.closedWith === undefined) ws.open();
      // Every subscribe is acked, and its replay fails.
      const unanswered = subscribes(ws).length - (answered.get(ws) ?? 0);
      answered.set(ws, subscribes(ws).length);
      for (let i = 0; i < unanswered && ws.closedWith === undefined; i += 1) {
        subscribeCount += 1;
        ws.ack();
        ws.receive('error', INTERNAL);
      }
    }
    await advance(50);
  }
  assert.equal(subscribes(FakeSocket.all[0]).length, 2, 'the first socket was subscribed again once');
  assert.ok(FakeSocket.all.length >= 3, `then new sockets: ${FakeSocket.all.length}`);
  assert.ok(subscribeCount <= 9, `${subscribeCount} subscribes in 20 s`);
  assert.equal(fetches.log.length, 0, 'a server that answers is no blocked socket: no polling');
  assert.ok(!seen.statuses.some((status) => status.startsWith('failed')));
  socket.stop();
});

// ---------- the polling transport ----------

/** Answers GETs with an ack first, then holds them (a long poll) until aborted. */
function pollingServer(onPost) {
  let acked = false;
  const posts = { inFlight: 0, most: 0, seqs: [] };
  fetches.answer = async (request) => {
    if (request.method === 'GET') {
      if (!acked) {
        acked = true;
        return json({ frames: [{ type: 'ack', payload: { sessionId: 's1', sessionToken: 'session-token' } }], cursors: { revision: 1 } });
      }
      return new Promise(() => {}); // held open; aborted when the card stops
    }
    posts.inFlight += 1;
    posts.most = Math.max(posts.most, posts.inFlight);
    posts.seqs.push(request.body.payload.clientSeq);
    try {
      return await onPost(request, posts);
    } finally {
      posts.inFlight -= 1;
    }
  };
  return posts;
}

const pollingSocket = () => liveSocket({ url: undefined, pollingUrl: 'http://svc.test/_svc/poll/s1' });
const stored = (clientSeq) => json({ frames: [{ type: 'system', payload: { event: 'action_stored', clientSeq, actionId: 'a', sequence: 1, duplicate: false } }] });

test('over polling, actions are POSTed one at a time, in order', async () => {
  const posts = pollingServer(async (request) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    return stored(request.body.payload.clientSeq);
  });
  const { socket, seen } = pollingSocket();
  socket.start();
  await settle();
  const seqs = [action(socket), action(socket), action(socket)];
  await advance(2_000);
  assert.equal(posts.most, 1, 'at most one POST at a time');
  assert.deepEqual(posts.seqs, seqs);
  assert.deepEqual(seen.stored, seqs);
  socket.stop();
});

test('over polling, a 429 is POSTed again after its Retry-After; a 413 fails for good and holds nothing back', async () => {
  let refusals = 0;
  const posts = pollingServer(async (request) => {
    const seq = request.body.payload.clientSeq;
    if (request.body.payload.payload.data.note === 'huge') return json({ error: { code: 'PAYLOAD_TOO_LARGE' } }, 413);
    if (refusals++ === 0) return json({ error: { code: 'RATE_LIMITED', message: 'too many frames; wait a second' } }, 429, { 'retry-after': '3' });
    return stored(seq);
  });
  const { socket, seen } = pollingSocket();
  socket.start();
  await settle();
  const limited = action(socket);
  const huge = action(socket, { note: 'huge' });
  await advance(2_900);
  assert.deepEqual(posts.seqs, [limited], 'nothing before the Retry-After is over, nor after the waiting action');
  await advance(200);
  assert.deepEqual(posts.seqs, [limited, limited, huge]);
  assert.deepEqual(seen.stored, [limited]);
  assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[huge, 'FRAME_TOO_LARGE']]);
  await advance(30_000);
  assert.deepEqual(posts.seqs, [limited, limited, huge], 'the refused action is never POSTed again');
  socket.stop();
});

test('over polling, an error frame answering a POST is that action\'s refusal', async () => {
  const posts = pollingServer(async () => json({ frames: [{ type: 'error', payload: { code: 'BAD_FRAME', message: 'no' } }] }));
  const { socket, seen } = pollingSocket();
  socket.start();
  await settle();
  const seq = action(socket);
  await advance(5_000);
  assert.deepEqual(posts.seqs, [seq]);
  assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[seq, 'BAD_FRAME']]);
  socket.stop();
});

/** Answers the GETs in turn with `gets` (a Response, or a function giving one), then holds them
 * open; POSTs with `onPost`. Returns the POSTed bodies. */
function scriptedPollingServer(gets, onPost) {
  let n = 0;
  const posts = [];
  fetches.answer = async (request) => {
    if (request.method === 'POST') {
      posts.push(request);
      return onPost(request, posts.length);
    }
    const answer = gets[n++];
    if (answer === undefined) return new Promise(() => {});
    return typeof answer === 'function' ? answer() : answer;
  };
  return posts;
}
const pollAck = (sessionToken) => json({ frames: [{ type: 'ack', payload: { sessionId: 's1', sessionToken } }], cursors: { revision: 1 } });
const after = (ms, answer) => () => new Promise((resolve) => setTimeout(() => resolve(answer()), ms));

for (const [how, close] of [
  ['stop()', async (socket) => socket.stop()],
  ['a terminal error', async () => advance(200)], // the second GET brings SESSION_EXPIRED
]) {
  test(`over polling, a channel closed by ${how} sends and queues nothing more`, async () => {
    const expired = json({ frames: [{ type: 'error', payload: { code: 'SESSION_EXPIRED', message: 'the session expired' } }], cursors: {} });
    const posts = scriptedPollingServer([pollAck('session-token'), after(100, () => expired)], () => json({ frames: [] }));
    const { socket, seen } = pollingSocket();
    socket.start();
    await settle();
    assert.equal(socket.transport, 'polling');
    await close(socket);
    assert.match(seen.statuses.at(-1), /^(closed|failed)/);
    assert.equal(socket.send({ type: 'channel_subscribe', payload: 'prices' }), false);
    assert.equal(socket.send({ type: 'host_context_observed', payload: { theme: 'dark' } }), false);
    await advance(5_000);
    assert.deepEqual(seen.frames.filter((frame) => frame.type === 'channel_error'), [], 'no answer for a closed channel');
    assert.deepEqual(posts, [], 'nothing POSTed');
    assert.equal(socket.transport, 'closed');
  });
}

test('over polling, an action stored through the poll while its POST is out is never reported failed', async () => {
  let seq;
  const storedFrame = () => json({ frames: [{ type: 'system', payload: { event: 'action_stored', clientSeq: seq, actionId: 'a1', sequence: 1, duplicate: false } }], cursors: { revision: 2 } });
  scriptedPollingServer([pollAck('session-token'), after(100, storedFrame)], after(500, () => json({ error: { code: 'NOPE', message: 'no' } }, 400)));
  const { socket, seen } = pollingSocket();
  socket.start();
  await settle();
  seq = action(socket);
  await advance(2_000);
  assert.deepEqual(seen.stored, [seq]);
  assert.deepEqual(seen.failed, [], 'the late refusal of its POST changes nothing');
  socket.stop();
});

test('over polling, a POST answered without a word on its action is sent again with growing waits', async () => {
  const posts = scriptedPollingServer([pollAck('session-token')], () => json({ frames: [] }));
  const { socket, seen } = pollingSocket();
  socket.start();
  await settle();
  action(socket);
  await advance(60_000, 50);
  // reconnectDelay(n) is at least 250 ms * 2^n, capped at 7.5 s: 13 POSTs in a minute at most.
  assert.ok(posts.length >= 6 && posts.length <= 13, `${posts.length} POSTs in a minute`);
  assert.deepEqual(seen.failed, [], 'never given up: it is not a refusal');
  socket.stop();
});

/** The token and clientSeq of each POST, in order. */
const postedWith = (posts) => posts.map((request) => [new URL(request.url).searchParams.get('token'), request.body.payload.clientSeq]);
/** The token, wait and revision of each GET the card made. */
const polledWith = () =>
  fetches.log.filter((request) => request.method === 'GET').map((request) => ['token', 'wait', 'revision'].map((name) => new URL(request.url).searchParams.get(name)));
/** Answers POSTs: 401 for a token in `stale`, else the action is stored. */
const storesUnless = (...stale) => (request) =>
  stale.includes(new URL(request.url).searchParams.get('token')) ? new Response('', { status: 401 }) : stored(request.body.payload.clientSeq);

test('over polling, an action whose POST is refused with 401 goes again with the next token at once, not after the held poll', async () => {
  const held = json({ frames: [], cursors: { revision: 1 } });
  const posts = scriptedPollingServer([pollAck('stale-token'), after(15_000, () => held), pollAck('session-2')], storesUnless('stale-token'));
  const { socket, seen } = pollingSocket();
  socket.start();
  await settle();
  const first = action(socket);
  const second = action(socket);
  await advance(100);
  // The stale session token falls back to the wsToken, which the server takes.
  assert.deepEqual(postedWith(posts), [['stale-token', first], ['ws-token', first], ['ws-token', second]]);
  assert.deepEqual(seen.stored, [first, second]);
  assert.deepEqual(seen.failed, []);
  await advance(15_000);
  // The poll held with the old token ends as usual; the next asks for the ack with the new token,
  // whose session token outlives the wsToken.
  assert.deepEqual(polledWith(), [
    ['ws-token', '0', null],
    ['stale-token', '20', '1'],
    ['ws-token', '0', null],
    ['session-2', '20', '1'],
  ]);
  socket.stop();
});

test('over polling, a POST and the poll refused together refresh the wsToken once', async () => {
  let refreshes = 0;
  const refreshWsToken = () => {
    refreshes += 1;
    return new Promise((resolve) => setTimeout(() => resolve('fresh-token'), 1_000));
  };
  const refused = () => new Response('', { status: 401 });
  const posts = scriptedPollingServer([pollAck('stale-token'), after(500, refused), pollAck('session-2')], storesUnless('stale-token', 'ws-token'));
  const { socket, seen } = liveSocket({ url: undefined, pollingUrl: 'http://svc.test/_svc/poll/s1', refreshWsToken });
  socket.start();
  await settle();
  const first = action(socket);
  const second = action(socket);
  await advance(2_000);
  assert.equal(refreshes, 1, 'the poll refused during the refresh joins it');
  // The poll was refused too, so the fresh token's first use is the poll that brings the ack.
  assert.deepEqual(postedWith(posts), [['stale-token', first], ['ws-token', first], ['session-2', first], ['session-2', second]]);
  assert.deepEqual(seen.stored, [first, second]);
  assert.deepEqual(polledWith().slice(2), [['fresh-token', '0', null], ['session-2', '20', '1']]);
  assert.deepEqual(seen.statuses.slice(1), ['live', 'reconnecting: refreshing the live-channel token', 'live']);
  socket.stop();
});

test('over polling, a POST refused with 401 refreshes the wsToken itself: the action goes as the fresh one arrives, and the channel is live again', async () => {
  const refreshWsToken = () => new Promise((resolve) => setTimeout(() => resolve('fresh-token'), 1_000));
  const posts = scriptedPollingServer([pollAck(undefined)], storesUnless('ws-token'));
  const { socket, seen } = liveSocket({ url: undefined, pollingUrl: 'http://svc.test/_svc/poll/s1', refreshWsToken });
  socket.start();
  await settle();
  const seq = action(socket);
  await advance(500);
  assert.equal(seen.statuses.at(-1), 'reconnecting: refreshing the live-channel token');
  await advance(600);
  assert.deepEqual(postedWith(posts), [['ws-token', seq], ['fresh-token', seq]]);
  assert.deepEqual(seen.stored, [seq]);
  assert.equal(seen.statuses.at(-1), 'live');
  socket.stop();
});

/** Starts a card whose host blocks the WebSocket: two sockets close before their ack, and polling
 * takes over. */
async function blockedSocket(socket) {
  socket.start();
  lastSocket().serverClose(1006);
  await advance(600);
  lastSocket().serverClose(1006);
  await settle();
}

for (const [what, wsToken] of [
  ['no wsToken', undefined],
  ['an empty wsToken', ''],
]) {
  test(`over polling, a card with ${what} asks the host for one, once, then polls with it and goes live (as on a socket)`, async () => {
    let refreshes = 0;
    const refreshWsToken = () => {
      refreshes += 1;
      return new Promise((resolve) => setTimeout(() => resolve('fresh-token'), 1_000));
    };
    const posts = scriptedPollingServer([pollAck('session-token')], storesUnless());
    const { socket, seen } = liveSocket({ pollingUrl: 'http://svc.test/_svc/poll/s1', wsToken, refreshWsToken });
    await blockedSocket(socket);
    assert.equal(socket.transport, 'polling');
    assert.equal(seen.statuses.at(-1), 'reconnecting: refreshing the live-channel token');
    assert.deepEqual(polledWith(), [], 'nothing is polled before the host answers');
    await advance(1_000);
    assert.equal(refreshes, 1);
    // The fresh token's first poll asks for the ack, which brings a session token for it.
    assert.deepEqual(polledWith(), [
      ['fresh-token', '0', null],
      ['session-token', '20', '1'],
    ]);
    assert.equal(seen.statuses.at(-1), 'live');
    const seq = action(socket);
    await settle();
    assert.deepEqual(postedWith(posts), [['session-token', seq]]);
    assert.deepEqual(seen.stored, [seq]);
    socket.stop();
  });
}

for (const [gives, answer, why] of [
  ['none', () => Promise.resolve(null), ''],
  ['an error', () => Promise.reject(new Error('host gone')), HOST_GONE],
  ['no refresh at all', undefined, ''],
]) {
  test(`over polling, a card without a wsToken whose host gives ${gives} fails as it has no token, and polls nothing`, async () => {
    let refreshes = 0;
    const refreshWsToken = answer && (() => ((refreshes += 1), answer()));
    scriptedPollingServer([pollAck('session-token')], storesUnless());
    const { socket, seen } = liveSocket({ pollingUrl: 'http://svc.test/_svc/poll/s1', wsToken: undefined, refreshWsToken });
    await blockedSocket(socket);
    await advance(5_000);
    assert.equal(refreshes, answer ? 1 : 0, 'the host is asked once, if it can be');
    const failing = answer ? ['reconnecting: refreshing the live-channel token'] : [];
    assert.deepEqual(seen.statuses.slice(-1 - failing.length), [...failing, `failed: ${NO_TOKEN}${why}`]);
    assert.equal(seen.statuses.filter((status) => status.startsWith('failed')).length, 1);
    assert.deepEqual(fetches.log, [], 'no poll, no POST');
    assert.equal(socket.transport, 'closed');
    const seq = action(socket);
    await settle();
    assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[seq, 'NOT_CONNECTED']]);
  });
}

for (const transport of ['websocket', 'polling']) {
  test(`stop() while the token is being refreshed (${transport}): closed is the last status, whatever the refresh brings`, async () => {
    let answerRefresh;
    const refreshWsToken = () => new Promise((resolve) => (answerRefresh = resolve));
    scriptedPollingServer([new Response('', { status: 401 })], () => json({ frames: [] })); // polling: the first poll is refused
    const { socket, seen } = liveSocket({ refreshWsToken, ...(transport === 'polling' ? { url: undefined, pollingUrl: 'http://svc.test/_svc/poll/s1' } : {}) });
    socket.start();
    if (transport === 'websocket') {
      lastSocket().open();
      lastSocket().receive('error', { code: 'AUTH_FAILED', message: 'expired' });
    }
    await settle();
    assert.equal(seen.statuses.at(-1), 'reconnecting: refreshing the live-channel token');
    socket.stop();
    answerRefresh(null);
    await advance(1_000);
    assert.equal(seen.statuses.at(-1), 'closed');
    assert.equal(seen.statuses.filter((status) => status.startsWith('failed')).length, 0);
  });
}

test('a channel closed for good says its transport is closed, polling or not', async () => {
  const polledTransports = [];
  pollingServer(() => json({ frames: [] }));
  const polled = liveSocket({ url: undefined, pollingUrl: 'http://svc.test/_svc/poll/s1', onTransport: (transport) => polledTransports.push(transport) });
  polled.socket.start();
  await settle();
  polled.socket.stop();
  assert.equal(polled.socket.transport, 'closed');
  assert.deepEqual(polledTransports, ['polling', 'closed']);
  const socketTransports = [];
  const { socket } = liveSocket({ onTransport: (transport) => socketTransports.push(transport) });
  const ws = subscribed(socket);
  ws.receive('error', { code: 'SESSION_EXPIRED', message: 'the session expired' });
  assert.equal(socket.transport, 'closed');
  assert.deepEqual(socketTransports, ['closed']);
});

for (const [order, postDelay, pollDelay] of [
  ['the poll first', 500, 100],
  ['the POST first', 100, 500],
]) {
  test(`over polling, an action stored is reported once when both its POST and a poll say so (${order})`, async () => {
    let seq;
    const storedFrames = () => json({ frames: [{ type: 'system', payload: { event: 'action_stored', clientSeq: seq, actionId: 'a1', sequence: 1, duplicate: false } }], cursors: { revision: 2 } });
    scriptedPollingServer([pollAck('session-token'), after(pollDelay, storedFrames)], after(postDelay, storedFrames));
    const { socket, seen } = pollingSocket();
    socket.start();
    await settle();
    seq = action(socket);
    await advance(1_000);
    assert.deepEqual(seen.stored, [seq]);
    socket.stop();
  });
}

/** Answers an action's POST after `delayMs` as the server does: stored once, a repeated clientSeq
 * `duplicate: true`. */
function storesOnce(delayMs) {
  const storedSeqs = new Set();
  return (request) =>
    new Promise((resolve) =>
      setTimeout(() => {
        const clientSeq = request.body.payload.clientSeq;
        const duplicate = storedSeqs.has(clientSeq);
        storedSeqs.add(clientSeq);
        resolve(json({ frames: [{ type: 'system', payload: { event: 'action_stored', clientSeq, actionId: 'a1', sequence: 1, duplicate } }] }));
      }, delayMs),
    );
}
/** A LiveSocket that records each stored action with its `duplicate`. */
const recordingDuplicates = (options = {}) => {
  const storedAs = [];
  const { socket, seen } = liveSocket({ onActionStored: (clientSeq, _actionId, duplicate) => storedAs.push([clientSeq, duplicate]), ...options });
  return { socket, seen, storedAs };
};

test('over polling, an action stored while the poll session was down is reported once, and not as a duplicate', async () => {
  const down = () => new Response('', { status: 502 });
  // The ack; a poll that fails at 100 ms; the ack again at about 2.5 s. The POST is answered at 1 s.
  const posts = scriptedPollingServer([pollAck('session-token'), after(100, down), after(2_000, () => pollAck('session-token'))], storesOnce(1_000));
  const { socket, storedAs } = recordingDuplicates({ url: undefined, pollingUrl: 'http://svc.test/_svc/poll/s1' });
  socket.start();
  await settle();
  const seq = action(socket);
  await advance(5_000);
  assert.deepEqual(storedAs, [[seq, false]]);
  assert.equal(posts.length, 1, 'the next ack does not send it again');
  socket.stop();
});

for (const [what, closes] of [
  ['is reported once, and not sent on the socket', false],
  ['reports nothing once the channel closed', true],
]) {
  test(`an action stored while the card went back from polling to the socket ${what}`, async () => {
    const posts = scriptedPollingServer([pollAck('session-token')], storesOnce(6_000));
    const { socket, seen, storedAs } = recordingDuplicates({ pollingUrl: 'http://svc.test/_svc/poll/s1' });
    socket.start();
    lastSocket().serverClose(1006); // two sockets close before their ack: polling takes over
    await advance(600);
    lastSocket().serverClose(1006);
    await settle();
    assert.equal(socket.transport, 'polling');
    const seq = action(socket);
    const ws = await probeFindsTheSocket(); // while the POST is out
    assert.equal(socket.transport, 'websocket');
    if (closes) socket.stop();
    await advance(1_000); // the POST is answered
    assert.equal(posts.length, 1);
    if (closes) {
      assert.deepEqual(storedAs, [], 'nothing is reported after the channel closed');
      assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[seq, 'NOT_CONNECTED']]);
      return;
    }
    assert.deepEqual(storedAs, [[seq, false]]);
    ws.open();
    ws.ack();
    assert.deepEqual(ws.actionSeqs(), [], 'stored: not sent again on the socket');
    socket.stop();
  });
}

/** A card back on the socket (subscribed at about 5.7 s) while the POST of its one action is out;
 * the POST reaches the server at once, and `onPost(clientSeq)` is its answer at about 8 s. */
async function backOnSocketWithPostOut(onPost) {
  const posts = scriptedPollingServer([pollAck('session-token')], (request) => after(7_400, () => onPost(request.body.payload.clientSeq))());
  const recording = recordingDuplicates({ pollingUrl: 'http://svc.test/_svc/poll/s1' });
  await blockedSocket(recording.socket);
  const seq = action(recording.socket);
  const ws = await probeFindsTheSocket();
  ws.open();
  ws.ack();
  return { ...recording, posts, seq, ws };
}

/** The first probe, 5 s after polling began, finds the socket working: the card's next socket,
 * not yet open. */
async function probeFindsTheSocket() {
  await advance(5_100);
  const probe = lastSocket();
  probe.open();
  probe.receive('pong');
  await settle();
  const ws = lastSocket();
  assert.notEqual(ws, probe, 'a socket of its own, not the probe');
  return ws;
}

test('an action whose POST is still out when the socket acks is not sent on the socket: stored once, not a duplicate', async () => {
  const storedSeqs = new Set(); // the server's: a repeated clientSeq is a duplicate
  const store = (clientSeq) => {
    const duplicate = storedSeqs.has(clientSeq);
    storedSeqs.add(clientSeq);
    return { event: 'action_stored', clientSeq, actionId: 'a1', sequence: 1, duplicate };
  };
  let answer;
  const { socket, posts, seq, ws, storedAs } = await backOnSocketWithPostOut((clientSeq) => json({ frames: [{ type: 'system', payload: answer }] }));
  answer = store(seq); // the POST reached the server first; its answer is slow
  for (const clientSeq of ws.actionSeqs()) ws.receive('system', store(clientSeq));
  await advance(3_000); // the POST is answered
  assert.equal(posts.length + ws.actionSeqs().length, 1, 'sent once in all');
  assert.deepEqual(storedAs, [[seq, false]]);
  socket.stop();
});

for (const [what, answer] of [
  ['says nothing of it', () => json({ frames: [] })],
  ['got no answer', () => Promise.reject(new TypeError('network down'))],
  ['was refused unread (401)', () => new Response('', { status: 401 })],
]) {
  test(`an action whose POST outlived polling and ${what} goes on the socket then, and is stored once`, async () => {
    const { socket, posts, seq, ws, storedAs } = await backOnSocketWithPostOut(answer);
    assert.deepEqual(ws.actionSeqs(), [], 'not sent while its POST is out');
    await advance(3_000); // the POST is answered
    assert.deepEqual(ws.actionSeqs(), [seq]);
    ws.receive('system', { event: 'action_stored', clientSeq: seq, actionId: 'a1', sequence: 1, duplicate: false });
    assert.equal(posts.length, 1);
    assert.deepEqual(storedAs, [[seq, false]]);
    await advance(30_000);
    assert.deepEqual(ws.actionSeqs(), [seq], 'and only then');
    socket.stop();
  });
}

for (const [how, close] of [
  ['stop()', (socket) => socket.stop()],
  ['a terminal error', (_socket, ws) => ws.receive('error', { code: 'SESSION_EXPIRED', message: 'gone' })],
]) {
  test(`a POST still out after the card went back to the socket is cancelled when the channel closes (${how})`, async () => {
    const { socket, seen, seq, ws } = await backOnSocketWithPostOut(() => json({ frames: [] }));
    const post = fetches.log.find((request) => request.method === 'POST');
    assert.equal(post.signal.aborted, false);
    close(socket, ws);
    assert.equal(post.signal.aborted, true, 'its fetch is aborted');
    await advance(15_000);
    assert.deepEqual(seen.failed.map((f) => [f.clientSeq, f.code]), [[seq, 'NOT_CONNECTED']]);
    assert.deepEqual(ws.actionSeqs(), []);
  });
}

/** How often the card rebuilt its streams after the ack (`ack`) and a `system` frame. */
function rebuildsAfter(ack, system) {
  let rebuilds = 0;
  const { socket } = liveSocket({ onReplayGap: () => (rebuilds += 1) });
  socket.start();
  const ws = lastSocket();
  ws.open();
  ws.ack(ack);
  const afterAck = rebuilds;
  ws.receive('system', system);
  socket.stop();
  return [afterAck, rebuilds];
}

test('a replay gap that lost only actions leaves the streams as they are', () => {
  const lost = ['actions'];
  assert.deepEqual(rebuildsAfter({ replay: { gap: true, lost } }, { event: 'replay_gap', lost }), [0, 0]);
});

test('a replay gap that lost stream envelopes rebuilds the streams, from the ack and from the live tail', () => {
  assert.deepEqual(rebuildsAfter({ replay: { gap: true, lost: ['actions', 'streams'] } }, { event: 'replay_gap', lost: ['streams'] }), [1, 2]);
});

test('a replay gap that does not say what it lost is taken to have lost streams', () => {
  assert.deepEqual(rebuildsAfter({ replay: { gap: true } }, { event: 'replay_gap' }), [1, 2]);
});

// ---------- back on the socket while polling swaps its token ----------

/** How a swap begins while polling: the card has no token (`swapMissing`), or its poll is refused
 * (`swapRefused`); and how the channel fails when the host gives none. */
const POLLING_SWAPS = [
  ['a card without a token asks the host for one', undefined, NO_TOKEN],
  ['a refused poll asks the host for a fresh token', 'ws-token', REFUSED],
];

/**
 * A card whose WebSocket is blocked until its first probe, with a swap of its token under way
 * while polling (the host's refresh held until `answerRefresh`) when the probe is answered: the
 * card goes back to the socket, which opens and sends its subscribe with the token of before.
 */
async function backToSocketDuringSwap(wsToken) {
  const refresh = { calls: 0, answer: undefined };
  const refreshWsToken = () => {
    refresh.calls += 1;
    return new Promise((resolve) => (refresh.answer = resolve));
  };
  scriptedPollingServer([new Response('', { status: 401 })], () => json({ frames: [] }));
  const { socket, seen } = liveSocket({ pollingUrl: 'http://svc.test/_svc/poll/s1', wsToken, refreshWsToken });
  await blockedSocket(socket);
  assert.equal(socket.transport, 'polling');
  assert.equal(seen.statuses.at(-1), 'reconnecting: refreshing the live-channel token');
  const ws = await probeFindsTheSocket();
  assert.equal(socket.transport, 'websocket');
  ws.open();
  assert.deepEqual(ws.sent.map((frame) => frame.payload.wsToken), [wsToken], 'the subscribe carries the token of before');
  return { socket, seen, ws, refresh };
}

/** The card's sockets opened after `ws`. */
const socketsAfter = (ws) => FakeSocket.all.slice(FakeSocket.all.indexOf(ws) + 1);

for (const [how, wsToken, failure] of POLLING_SWAPS) {
  test(`back on the socket while polling swaps its token (${how}): the refused subscribe waits for the swap, then subscribes with its token and goes live`, async () => {
    const { socket, seen, ws, refresh } = await backToSocketDuringSwap(wsToken);
    ws.receive('error', { code: 'AUTH_FAILED', message: 'the token was refused' });
    await settle();
    assert.equal(ws.closedWith, 1000, 'the refused socket is closed');
    assert.deepEqual(socketsAfter(ws), [], 'no new socket before the swap gives a token');
    assert.equal(seen.statuses.at(-1), 'reconnecting: refreshing the live-channel token');
    refresh.answer('fresh-token');
    await settle();
    const [again, ...more] = socketsAfter(ws);
    assert.ok(again, 'a socket subscribes with the fresh token');
    assert.deepEqual(more, [], 'one socket');
    again.open();
    assert.deepEqual(again.sent.map((frame) => [frame.type, frame.payload.wsToken]), [['subscribe', 'fresh-token']]);
    again.ack();
    assert.equal(seen.statuses.at(-1), 'live');
    assert.equal(refresh.calls, 1, 'one refresh');
    assert.deepEqual(seen.statuses.filter((status) => status.startsWith('failed')), [], `not ${failure}`);
    assert.equal(socket.transport, 'websocket');
    assert.deepEqual(polledWith().filter(([token]) => token === 'fresh-token'), [], 'the poll loop ended without polling again');
    socket.stop();
  });

  test(`back on the socket while polling swaps its token (${how}): when the host gives none, the channel fails once, as the swap says`, async () => {
    const { socket, seen, ws, refresh } = await backToSocketDuringSwap(wsToken);
    ws.receive('error', { code: 'AUTH_FAILED', message: 'the token was refused' });
    await settle();
    refresh.answer(null);
    await advance(30_000, 1_000);
    assert.deepEqual(seen.statuses.filter((status) => status.startsWith('failed')), [`failed: ${failure}`]);
    assert.equal(seen.statuses.at(-1), `failed: ${failure}`, 'nothing reported after it');
    assert.deepEqual(socketsAfter(ws), [], 'no socket opened after');
    assert.equal(refresh.calls, 1);
    assert.equal(socket.transport, 'closed');
  });

  test(`back on the socket while polling swaps its token (${how}): a swap that ends while the subscribe is out needs no refresh of its own for the refusal`, async () => {
    const { socket, seen, ws, refresh } = await backToSocketDuringSwap(wsToken);
    refresh.answer('fresh-token');
    await settle();
    ws.receive('error', { code: 'AUTH_FAILED', message: 'the token was refused' });
    await settle();
    const [again, ...more] = socketsAfter(ws);
    assert.ok(again, 'a socket subscribes with the token swapped in meanwhile');
    assert.deepEqual(more, []);
    again.open();
    assert.deepEqual(again.sent.map((frame) => [frame.type, frame.payload.wsToken]), [['subscribe', 'fresh-token']]);
    again.ack();
    assert.equal(seen.statuses.at(-1), 'live');
    assert.equal(refresh.calls, 1);
    assert.deepEqual(seen.statuses.filter((status) => status.startsWith('failed')), []);
    socket.stop();
  });
}

// ---------- polling while a refused socket's refresh is under way ----------

test('a poll refused while a refused socket refreshes the token (`online`, then polling took over) waits for that refresh: one refresh, then live', async () => {
  const refresh = { calls: 0, answer: undefined };
  const refreshWsToken = () => {
    refresh.calls += 1;
    return new Promise((resolve) => (refresh.answer = resolve));
  };
  scriptedPollingServer([new Response('', { status: 401 }), pollAck('session-2')], storesUnless());
  const { socket, seen } = liveSocket({ pollingUrl: 'http://svc.test/_svc/poll/s1', refreshWsToken });
  socket.start();
  lastSocket().open();
  lastSocket().receive('error', { code: 'AUTH_FAILED', message: 'expired' }); // the card asks the host
  window.dispatchEvent(new Event('online')); // a socket opens meanwhile, with the token of before
  lastSocket().serverClose(1006); // it and the next close before their ack: polling takes over
  await advance(600);
  lastSocket().serverClose(1006);
  await settle();
  assert.deepEqual(polledWith(), [['ws-token', '0', null]], 'refused with the token of before');
  assert.deepEqual(seen.statuses.filter((status) => status.startsWith('failed')), [], 'the fresh token is on its way');
  assert.equal(socket.transport, 'polling');
  refresh.answer('fresh-token');
  await advance(100);
  assert.equal(refresh.calls, 1, "the poll joined the socket's refresh");
  assert.deepEqual(polledWith(), [
    ['ws-token', '0', null],
    ['fresh-token', '0', null],
    ['session-2', '20', '1'],
  ]);
  assert.equal(seen.statuses.at(-1), 'live');
  assert.equal(socket.transport, 'polling');
  socket.stop();
});

for (const [cause, wsToken, failure] of [
  ['a card without a token', undefined, NO_TOKEN],
  ['a refused token', 'ws-token', REFUSED],
]) {
  for (const [gives, answer, suffix] of [
    ['none', () => Promise.resolve(null), ''],
    ['an error', () => Promise.reject(new Error('host gone')), HOST_GONE],
  ]) {
    test(`${cause} whose host gives ${gives} fails with the same words over a socket and over polling`, async () => {
      const failed = [];
      for (const transport of ['websocket', 'polling']) {
        scriptedPollingServer([new Response('', { status: 401 })], storesUnless());
        const where = transport === 'websocket' ? {} : { url: undefined, pollingUrl: 'http://svc.test/_svc/poll/s1' };
        const { socket, seen } = liveSocket({ ...where, wsToken, refreshWsToken: answer });
        socket.start();
        if (transport === 'websocket') {
          lastSocket().open();
          lastSocket().receive('error', { code: 'AUTH_FAILED', message: 'the credentials do not grant this session' });
        }
        await advance(1_000);
        failed.push(seen.statuses.filter((status) => status.startsWith('failed')));
      }
      assert.deepEqual(failed, [[`failed: ${failure}${suffix}`], [`failed: ${failure}${suffix}`]]);
    });
  }
}
