// Unit tests of the polling transport's POST queue (src/post-queue.ts) on its own: a recorded
// host stands in for the live channel, a real LongPoll POSTs to the fake fetch
// (test/fake-browser.mjs). What is checked is what reaches the server (which frames, in what
// order, one at a time) and what the host is told of each answer, refusal and failure.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { advance, beginTest, endTest, fetches, installFakeBrowser, json } from './fake-browser.mjs';
import { LongPoll } from '../src/long-poll.ts';
import { PostQueue } from '../src/post-queue.ts';

installFakeBrowser();
beforeEach(beginTest);
afterEach(endTest);

/** A subscribed polling channel whose answers to the queue are recorded in `seen`. */
function postQueue() {
  // `swap`: what the channel does with a refused token (by default, swaps in a fresh one at once).
  const state = { poll: new LongPoll('http://svc.test/poll'), subscribed: true, stopped: false, token: 'session-token' };
  state.swap = async () => ((state.token = 'fresh-token'), true);
  const actions = new Map();
  const seen = { applied: [], stored: [], delivered: [], refused: [], retries: [], tokensRefused: [], sentNow: [] };
  const queue = new PostQueue({
    poll: () => state.poll,
    subscribed: () => state.subscribed,
    stopped: () => state.stopped,
    token: () => state.token,
    unacked: (clientSeq) => actions.get(clientSeq),
    applyServerFrame: (frame) => {
      seen.applied.push(frame);
      if (frame.payload?.event === 'action_stored') actions.delete(frame.payload.clientSeq); // as the channel does
    },
    stored: (clientSeq) => {
      seen.stored.push(clientSeq);
      actions.delete(clientSeq);
    },
    deliverFrame: (frame) => seen.delivered.push(frame),
    refused: (action, error) => {
      seen.refused.push(error);
      action.retryTimer = 1; // as the channel does: it waits out the refusal
    },
    sendAgainAfter: (action, delayMs) => {
      seen.retries.push([action.envelope.clientSeq, delayMs]);
      action.retryTimer = 1;
    },
    sendNow: (action) => {
      seen.sentNow.push(action.envelope.clientSeq);
      if (state.poll && state.subscribed) queue.sendAction(action.envelope.clientSeq); // as the channel does
    },
    tokenRefused: (token) => {
      seen.tokensRefused.push(token);
      return state.swap(token);
    },
  });
  /** Adds the unacked action `clientSeq` and queues it. */
  const act = (clientSeq) => {
    const action = { envelope: { sessionId: 's1', type: 'data:submit', payload: { action: 'go' }, clientSeq }, unanswered: 0, retryTimer: undefined };
    actions.set(clientSeq, action);
    queue.sendAction(clientSeq);
    return action;
  };
  return { queue, state, actions, seen, act };
}

/** The answer to a POST the server took: an action is stored. */
const took = (body) => json({ frames: body.type === 'action' ? [stored(body.payload.clientSeq)] : [] });
const stored = (clientSeq) => ({ type: 'system', payload: { event: 'action_stored', clientSeq } });

/** Answers POSTs with `answer(body)` after `delayMs`; records their bodies and the most in flight. */
function server(answer = took, delayMs = 0) {
  const posts = { bodies: [], tokens: [], inFlight: 0, most: 0 };
  fetches.answer = async (request) => {
    posts.bodies.push(request.body);
    posts.tokens.push(new URL(request.url).searchParams.get('token'));
    if (posts.bodies.length > 50) return new Promise(() => {}); // a queue POSTing in a loop is held, not hung
    posts.inFlight += 1;
    posts.most = Math.max(posts.most, posts.inFlight);
    try {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return await answer(request.body);
    } finally {
      posts.inFlight -= 1;
    }
  };
  return posts;
}

/** What was POSTed, short: an action as its clientSeq, another frame as its type. */
const posted = (posts) => posts.bodies.map((body) => (body.type === 'action' ? body.payload.clientSeq : body.type));
const context = (n) => ({ type: 'host_context_observed', payload: { n } });

test('frames and actions are POSTed one at a time, in the order they were queued', async () => {
  const posts = server((body) => json({ frames: [body.type === 'action' ? stored(body.payload.clientSeq) : { type: 'system', payload: { noted: body.payload.n } }] }), 100);
  const { queue, seen, act } = postQueue();
  queue.send(context(1));
  act(7);
  queue.send(context(2));
  act(8);
  await advance(1_000);
  assert.deepEqual(posted(posts), ['host_context_observed', 7, 'host_context_observed', 8]);
  assert.equal(posts.most, 1, 'never two POSTs at once');
  assert.deepEqual(seen.applied.map((frame) => frame.payload.noted ?? frame.payload.clientSeq), [1, 7, 2, 8], 'every answer is applied, in order');
  assert.deepEqual(seen.retries, []);
  assert.deepEqual(posts.bodies[1], { type: 'action', payload: { sessionId: 's1', type: 'data:submit', payload: { action: 'go' }, clientSeq: 7 } });
});

test('a channel subscribe is answered with TRANSPORT_UNSUPPORTED; pings and unsubscribes are not POSTed', async () => {
  const posts = server();
  const { queue, seen } = postQueue();
  assert.equal(queue.send({ type: 'channel_subscribe', payload: 'prices' }), true);
  assert.equal(queue.send({ type: 'channel_subscribe', payload: { channel: 'news' } }), true);
  assert.equal(queue.send({ type: 'ping' }), true);
  assert.equal(queue.send({ type: 'channel_unsubscribe', payload: 'prices' }), true);
  await advance(1_000);
  assert.deepEqual(posts.bodies, []);
  assert.deepEqual(
    seen.delivered.map((frame) => [frame.type, frame.payload.channel, frame.payload.code]),
    [['channel_error', 'prices', 'TRANSPORT_UNSUPPORTED'], ['channel_error', 'news', 'TRANSPORT_UNSUPPORTED']],
  );
});

test('nothing is queued while no polling transport is in use', async () => {
  const posts = server();
  const { queue, state, seen } = postQueue();
  state.poll = null;
  assert.equal(queue.send(context(1)), false);
  assert.equal(queue.send({ type: 'channel_subscribe', payload: 'prices' }), false);
  await advance(1_000);
  assert.deepEqual(posts.bodies, []);
  assert.deepEqual(seen.delivered, []);
});

test('an action queued twice is POSTed once; one stored before its turn is skipped', async () => {
  const posts = server(took, 100);
  const { queue, actions, act } = postQueue();
  act(1);
  act(2);
  act(3);
  queue.sendAction(1);
  actions.delete(2); // stored (its system frame came with a GET) before its turn
  await advance(1_000);
  assert.deepEqual(posted(posts), [1, 3]);
});

test("an error frame answering an action is that action's: its clientSeq is added when missing", async () => {
  server(() =>
    json({
      frames: [
        { type: 'error', payload: { code: 'RATE_LIMITED', message: 'slow down' } },
        { type: 'error', payload: { code: 'BAD_FRAME', clientSeq: 99 } },
        { type: 'system', payload: { event: 'noted' } },
      ],
    }),
  );
  const { seen, act } = postQueue();
  act(5);
  await advance(100);
  assert.deepEqual(seen.applied, [
    { type: 'error', payload: { code: 'RATE_LIMITED', message: 'slow down', clientSeq: 5 } },
    { type: 'error', payload: { code: 'BAD_FRAME', clientSeq: 99 } },
    { type: 'system', payload: { event: 'noted' } },
  ]);
});

test('an error frame answering another frame is applied as it came', async () => {
  server(() => json({ frames: [{ type: 'error', payload: { code: 'BAD_FRAME' } }] }));
  const { queue, seen } = postQueue();
  queue.send(context(1));
  await advance(100);
  assert.deepEqual(seen.applied, [{ type: 'error', payload: { code: 'BAD_FRAME' } }]);
});

test('an HTTP refusal is the action\'s refusal, and the frames queued after it wait for it', async () => {
  const posts = server(() => json({ error: { code: 'RATE_LIMITED', message: 'wait' } }, 429, { 'retry-after': '3' }));
  const { queue, seen, act } = postQueue();
  const limited = act(4);
  queue.send(context(1));
  await advance(1_000);
  assert.deepEqual(seen.refused, [{ code: 'RATE_LIMITED', message: 'wait', retryAfterSeconds: 3, clientSeq: 4 }]);
  assert.deepEqual(seen.retries, [], 'a refusal is not also retried as unanswered');
  assert.deepEqual(posted(posts), [4], 'the host context waits behind the refused action');
  // Its wait is over: the channel queues it again, and the queue goes on in order.
  fetches.answer = async (request) => (posts.bodies.push(request.body), took(request.body));
  limited.retryTimer = undefined;
  queue.sendAction(4);
  await advance(100);
  assert.deepEqual(posted(posts), [4, 4, 'host_context_observed']);
});

test('an action without an answer is sent again with growing backoff, and never refused', async () => {
  const posts = server(() => {
    throw new TypeError('network down');
  });
  const { queue, seen, act } = postQueue();
  const action = act(6);
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    await advance(100);
    assert.equal(posts.bodies.length, attempt);
    action.retryTimer = undefined; // its timer fired: queued again
    queue.sendAction(6);
  }
  await advance(100);
  assert.deepEqual(seen.refused, []);
  const delays = seen.retries.map(([clientSeq, delayMs]) => (assert.equal(clientSeq, 6), delayMs));
  assert.equal(delays.length, 4);
  // reconnectDelay(n): random in [d/2, d], d = 500 ms * 2^n.
  delays.forEach((delayMs, n) => assert.ok(delayMs >= 250 * 2 ** n && delayMs <= 500 * 2 ** n, `retry ${n}: ${delayMs} ms`));
  assert.equal(action.unanswered, 4);
});

test('an answer that says nothing of the action counts as unanswered: sent again with growing backoff', async () => {
  server(() => json({ frames: [{ type: 'system', payload: { event: 'noted' } }] }));
  const { queue, seen, act } = postQueue();
  const action = act(6);
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    await advance(100);
    action.retryTimer = undefined; // its timer fired: queued again
    queue.sendAction(6);
  }
  await advance(100);
  assert.deepEqual(seen.refused, []);
  const delays = seen.retries.map(([, delayMs]) => delayMs);
  assert.equal(delays.length, 4);
  delays.forEach((delayMs, n) => assert.ok(delayMs >= 250 * 2 ** n && delayMs <= 500 * 2 ** n, `retry ${n}: ${delayMs} ms`));
  assert.equal(action.unanswered, 4);
});

test('a refusal resets the count of unanswered POSTs', async () => {
  server(() => json({ error: { code: 'SERVER_BUSY', message: 'busy' } }, 503));
  const { seen, act } = postQueue();
  const action = act(6);
  action.unanswered = 3;
  await advance(100);
  assert.deepEqual(seen.refused.map((error) => error.code), ['SERVER_BUSY']);
  assert.deepEqual(seen.retries, [], 'the refusal decides its wait');
  assert.equal(action.unanswered, 0);
});

test('the refusal of an action stored while its POST was out is not reported', async () => {
  const posts = server(() => json({ error: { code: 'NOPE', message: 'no' } }, 400), 500);
  const { actions, seen, act } = postQueue();
  act(5);
  act(6);
  await advance(100);
  actions.delete(5); // its action_stored came with a GET
  await advance(1_000);
  assert.deepEqual(seen.refused.map((error) => error.clientSeq), [6], 'only the action still pending is refused');
  assert.deepEqual(posted(posts), [5, 6]);
});

/** What was POSTed with which token. */
const postedWith = (posts) => posted(posts).map((item, i) => [posts.tokens[i], item]);
const unauthorized = () => new Response('', { status: 401 });

test('a token refused with 401: the queue waits for the channel to swap it, then POSTs the action again first, and goes on', async () => {
  const posts = server((body) => (posts.tokens.at(-1) === 'session-token' ? unauthorized() : took(body)));
  const { queue, state, seen, act } = postQueue();
  state.swap = () => new Promise((resolve) => setTimeout(() => resolve(((state.token = 'fresh-token'), true)), 1_000));
  act(1);
  queue.send(context(1));
  act(2);
  await advance(900);
  assert.deepEqual(postedWith(posts), [['session-token', 1]], 'nothing more while the swap is under way');
  await advance(200);
  assert.deepEqual(postedWith(posts), [['session-token', 1], ['fresh-token', 1], ['fresh-token', 'host_context_observed'], ['fresh-token', 2]]);
  assert.deepEqual(seen.tokensRefused, ['session-token']);
  assert.deepEqual(seen.retries, [], 'no backoff: the new token goes at once');
  assert.deepEqual(seen.refused, [], 'not a refusal of the action');
});

test('a 401 answering a host context: it goes again first with the next token, then the actions after it', async () => {
  const posts = server((body) => (posts.tokens.at(-1) === 'session-token' ? unauthorized() : took(body)));
  const { queue, seen, act } = postQueue();
  queue.send(context(1));
  act(1);
  await advance(1_000);
  assert.deepEqual(postedWith(posts), [['session-token', 'host_context_observed'], ['fresh-token', 'host_context_observed'], ['fresh-token', 1]]);
  assert.deepEqual(seen.tokensRefused, ['session-token']);
});

test('a refused token the channel cannot replace (it closes) ends the queue', async () => {
  const posts = server(unauthorized);
  const { queue, state, seen, act } = postQueue();
  state.swap = async () => ((state.stopped = true), false);
  act(1);
  queue.send(context(1));
  await advance(30_000, 1_000);
  assert.deepEqual(posted(posts), [1]);
  assert.deepEqual(seen.retries, []);
});

test('a 401 names the token its POST carried, though the channel has replaced it meanwhile', async () => {
  let first = true;
  const posts = server((body) => {
    if (!first) return took(body);
    first = false;
    return new Promise((resolve) => setTimeout(() => resolve(unauthorized()), 500));
  });
  const { state, seen, act } = postQueue();
  state.swap = async () => true; // the channel has another token already: nothing to swap
  act(1);
  await advance(100);
  state.token = 'fresh-token'; // a poll's 401 swapped it while the POST was out
  await advance(1_000);
  assert.deepEqual(seen.tokensRefused, ['session-token']);
  assert.deepEqual(postedWith(posts), [['session-token', 1], ['fresh-token', 1]]);
});

test('a frame other than an action that got no answer is not POSTed again; the next item goes', async () => {
  let first = true;
  const posts = server((body) => {
    if (first) {
      first = false;
      throw new TypeError('network down');
    }
    return took(body);
  });
  const { queue, seen, act } = postQueue();
  queue.send(context(1));
  act(2);
  await advance(5_000);
  assert.deepEqual(posted(posts), ['host_context_observed', 2]);
  assert.deepEqual(seen.retries, [], 'nothing waits to go again');
});

test('without a token a frame is dropped unsent and an action waits as unanswered', async () => {
  const posts = server();
  const { queue, state, seen, act } = postQueue();
  state.token = undefined;
  queue.send(context(1));
  act(3);
  await advance(1_000);
  assert.deepEqual(posts.bodies, []);
  assert.deepEqual(seen.retries.map(([clientSeq]) => clientSeq), [3]);
});

test('nothing is POSTed before the ack or after the channel closed, and clear() forgets the queue', async () => {
  const posts = server();
  const { queue, state, act } = postQueue();
  state.subscribed = false;
  queue.send(context(1));
  act(1);
  await advance(1_000);
  assert.deepEqual(posts.bodies, [], 'waits for the ack');
  queue.clear();
  state.subscribed = true;
  act(2); // the ack queues the actions again; the host context is echoed again
  queue.send(context(2));
  await advance(1_000);
  assert.deepEqual(posted(posts), [2, 'host_context_observed']);
  assert.deepEqual(posts.bodies[1].payload, { n: 2 }, 'the stale host context was forgotten');
  state.stopped = true;
  act(3);
  await advance(1_000);
  assert.equal(posts.bodies.length, 2, 'nothing after the channel closed');
});

test('an answer that arrives after the transport changed is dropped, and the queue stops', async () => {
  // The late answer says nothing of the action (one that does settles it: below); later ones store it.
  const posts = server((body) => json({ frames: [{ type: 'system', payload: { event: 'late' } }, ...(body.type === 'action' && posts.bodies.length > 1 ? [stored(body.payload.clientSeq)] : [])] }), 500);
  const { queue, state, seen, act } = postQueue();
  act(1);
  queue.send(context(1));
  await advance(100);
  state.poll = null; // the WebSocket took over while the POST was out
  await advance(1_000);
  assert.deepEqual(posted(posts), [1]);
  assert.deepEqual(seen.applied, []);
  assert.deepEqual(seen.retries, [], 'the action waits for the next ack, not a timer');
  // A new polling transport sends what is still queued, in order.
  state.poll = new LongPoll('http://svc.test/poll');
  queue.sendAction(1);
  await advance(2_000);
  assert.deepEqual(posted(posts), [1, 1, 'host_context_observed']);
});

for (const [when, change] of [
  ['the transport changed', (state) => (state.poll = null)],
  ['the channel closed', (state) => (state.stopped = true)],
]) {
  test(`the answer to a frame that arrives after ${when} is dropped`, async () => {
    const posts = server(() => json({ frames: [{ type: 'system', payload: { event: 'late' } }] }), 500);
    const { queue, state, seen } = postQueue();
    queue.send(context(1));
    queue.send(context(2));
    await advance(100);
    change(state);
    await advance(1_000);
    assert.deepEqual(posted(posts), ['host_context_observed']);
    assert.deepEqual(seen.applied, []);
  });
}

/** An answer to action 1: frames of every kind about no action, then `about`, the ones about it. */
const mixedAnswer = (about) =>
  json({
    frames: [
      { type: 'data', payload: { channel: 'log', seq: 9, payload: 'x' } },
      { type: 'system', payload: { event: 'late' } },
      { type: 'error', payload: { code: 'SESSION_EXPIRED', message: 'the session expired' } },
      { type: 'error', payload: { code: 'BAD_FRAME', clientSeq: 2 } },
      ...about,
    ],
  });

for (const [when, change] of [
  ['the poll session went down', (state) => (state.subscribed = false)],
  ['the transport changed', (state) => (state.poll = new LongPoll('http://svc.test/poll'))],
]) {
  test(`an answer that arrives after ${when} still settles its action; nothing else of it is applied`, async () => {
    const posts = server(() => mixedAnswer([stored(1)]), 500);
    const { state, seen, act } = postQueue();
    act(1);
    await advance(100);
    change(state);
    await advance(1_000);
    assert.deepEqual(seen.stored, [1], 'its action_stored counts: the action is not POSTed again');
    assert.deepEqual(seen.applied, [], 'the stream data, cursors and errors of a session that is over are not');
    assert.deepEqual(seen.refused, []);
    assert.deepEqual(seen.retries, []);
    assert.deepEqual(posted(posts), [1]);
  });

  test(`a refusal of its action that arrives after ${when} still counts; one about no action does not`, async () => {
    server(() => mixedAnswer([{ type: 'error', payload: { code: 'RATE_LIMITED', message: 'slow down' } }, { type: 'error', payload: { code: 'NOPE', clientSeq: 1 } }]), 500);
    const { state, seen, act } = postQueue();
    act(1);
    await advance(100);
    change(state);
    await advance(1_000);
    assert.deepEqual(seen.refused, [
      { code: 'RATE_LIMITED', message: 'slow down', clientSeq: 1 },
      { code: 'NOPE', clientSeq: 1 },
    ]);
    assert.deepEqual(seen.applied, []);
    assert.deepEqual(seen.stored, []);
  });
}

test('an answer that arrives after the transport changed and the channel closed settles nothing', async () => {
  server(() => mixedAnswer([stored(1)]), 500);
  const { state, seen, act } = postQueue();
  act(1);
  await advance(100);
  state.poll = null;
  state.stopped = true;
  await advance(1_000);
  assert.deepEqual([seen.stored, seen.applied, seen.refused, seen.retries], [[], [], [], []]);
});
