// Unit tests of the polling transport's GET loop (src/poll-loop.ts) on its own: a recorded host
// stands in for the live channel, a real LongPoll GETs from the fake fetch
// (test/fake-browser.mjs). What is checked is what each poll asks the server for (token, cursors,
// wait, revision), when it polls again, and what the host is told of each answer.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { advance, beginTest, endTest, fetches, installFakeBrowser, json, settle } from './fake-browser.mjs';
import { LongPoll } from '../src/long-poll.ts';
import { PollLoop, RETRY_AFTER_CAP_MS } from '../src/poll-loop.ts';

installFakeBrowser();
beforeEach(() => {
  beginTest();
  navigator.onLine = true;
});
afterEach(endTest);

/** A polling channel whose answers to the loop are recorded in `seen`; `tokenRefused` answers
 * with `refusal()` and `tokenMissing` with `missing()` (the next token, or null: the channel
 * closes). */
function pollLoop({ refusal = () => 'ws-token', missing = () => 'fresh-token' } = {}) {
  const poll = new LongPoll('http://svc.test/poll');
  const state = { polling: true, token: 'session-token', fromSeq: 3, sinceSequence: 7, subscribed: false };
  const seen = { applied: [], reconnecting: [], unsubscribed: 0, refused: [], missing: 0 };
  /** The channel's answer to a refused or missing token: `next` to poll with, or none (closed). */
  const swapTo = (next) => {
    if (next === null) {
      state.polling = false;
      return false;
    }
    state.token = next;
    return true;
  };
  const loop = new PollLoop(poll, {
    polling: (p) => p === poll && state.polling,
    token: () => state.token,
    cursors: () => ({ fromSeq: state.fromSeq, sinceSequence: state.sinceSequence }),
    subscribed: () => state.subscribed,
    unsubscribe: () => {
      seen.unsubscribed += 1;
      state.subscribed = false;
    },
    applyServerFrame: (frame) => {
      seen.applied.push(frame);
      // As the channel does: an ack subscribes, a data frame moves the stream cursor on.
      if (frame.type === 'ack') state.subscribed = true;
      if (frame.type === 'data') state.fromSeq = frame.payload.seq;
    },
    reconnecting: (detail) => seen.reconnecting.push([Date.now(), detail]),
    tokenRefused: async (token) => {
      seen.refused.push(token);
      return swapTo(refusal());
    },
    tokenMissing: async () => {
      seen.missing += 1;
      return swapTo(missing());
    },
  });
  return { loop, state, seen, start: () => void loop.run() };
}

/** Answers the GETs in turn with `answers` (a Response, a function of the request, or `throw`),
 * then holds them open; records each GET's query and when it was made. */
function server(answers) {
  const gets = [];
  fetches.answer = async (request) => {
    const url = new URL(request.url);
    gets.push({ at: Date.now(), ...Object.fromEntries(url.searchParams) });
    const answer = answers[gets.length - 1];
    if (answer === undefined) return new Promise(() => {});
    if (answer === 'throw') throw new TypeError('network down');
    return typeof answer === 'function' ? answer(request) : answer;
  };
  return gets;
}

const START = 1_700_000_000_000;
const ack = (revision) => json({ frames: [{ type: 'ack', payload: { sessionId: 's1' } }], cursors: revision === undefined ? {} : { revision } });
const frames = (revision, ...list) => json({ frames: list, cursors: { revision } });

test('the first poll asks for the ack at once; later ones wait, with the revision and the cursors the channel holds', async () => {
  const gets = server([ack(4), frames(5, { type: 'data', payload: { seq: 4 } }), frames(6)]);
  const { seen, start } = pollLoop();
  start();
  await settle();
  assert.deepEqual(gets[0], { at: START, token: 'session-token', fromSeq: '3', sinceSequence: '7', wait: '0' });
  assert.deepEqual(gets.slice(1), [
    { at: START, token: 'session-token', fromSeq: '3', sinceSequence: '7', wait: '20', revision: '4' },
    { at: START, token: 'session-token', fromSeq: '4', sinceSequence: '7', wait: '20', revision: '5' },
    { at: START, token: 'session-token', fromSeq: '4', sinceSequence: '7', wait: '20', revision: '6' },
  ]);
  assert.deepEqual(seen.applied.map((frame) => frame.type), ['ack', 'data']);
  assert.deepEqual(seen.reconnecting, []);
});

test('a failed poll loses the ack, says why, and polls again after a growing wait; an answer resets the wait', async () => {
  const gets = server([ack(1), 'throw', 'throw', json({ error: { code: 'INTERNAL' } }, 500), ack(2), 'throw']);
  const { seen, start } = pollLoop();
  start();
  await advance(10_000, 10);
  assert.deepEqual(
    seen.reconnecting.map(([, detail]) => detail),
    ['polling failed: network down', 'polling failed: network down', 'polling failed: HTTP 500', 'polling failed: network down'],
  );
  assert.equal(seen.unsubscribed, 4);
  // reconnectDelay(n): random in [d/2, d], d = 500 ms * 2^n; the ack resets n.
  const waits = gets.slice(1).map((get, i) => gets[i + 2]?.at - get.at).slice(0, 4);
  [0, 1, 2].forEach((n) => assert.ok(waits[n] >= 250 * 2 ** n && waits[n] <= 500 * 2 ** n + 10, `wait ${n}: ${waits[n]} ms`));
  assert.ok(waits[3] === 0, 'the poll after the ack goes at once');
  const afterAck = gets.at(-1).at - gets.at(-2).at;
  assert.ok(afterAck >= 250 && afterAck <= 510, `the first wait after an answer: ${afterAck} ms`);
  assert.deepEqual(
    gets.slice(1, 5).map((get) => [get.wait, get.revision]),
    [['20', '1'], ['0', undefined], ['0', undefined], ['0', undefined]],
    'every poll after a failure asks for the ack again',
  );
});

test('a refused token: the channel swaps it, and the next poll asks for the ack with it', async () => {
  const gets = server([ack(1), new Response('', { status: 401 }), ack()]);
  const { seen, start } = pollLoop();
  start();
  await settle(10);
  assert.deepEqual(seen.refused, ['session-token']);
  assert.equal(seen.unsubscribed, 1);
  assert.deepEqual(
    gets.map((get) => [get.token, get.wait, get.revision]),
    [
      ['session-token', '0', undefined],
      ['session-token', '20', '1'],
      ['ws-token', '0', undefined],
      ['ws-token', '20', undefined], // the ack named no revision: the refused session's is forgotten
    ],
  );
  assert.deepEqual(seen.reconnecting, [], 'a refusal is not a failure');
});

test('a refused token the channel cannot replace ends the loop', async () => {
  const gets = server([new Response('', { status: 401 })]);
  const { seen, start } = pollLoop({ refusal: () => null });
  start();
  await advance(60_000, 1_000);
  assert.deepEqual(seen.refused, ['session-token']);
  assert.equal(gets.length, 1);
});

test("a token swapped while a poll was out (a POST's 401): the next poll asks for the ack with it", async () => {
  const held = () => new Promise((resolve) => setTimeout(() => resolve(frames(2)), 5_000));
  const gets = server([ack(1), held, ack(3)]);
  const { state, seen, start } = pollLoop();
  start();
  await advance(100);
  state.token = 'ws-token'; // the channel swapped it for a refused POST
  await advance(5_000);
  assert.deepEqual(
    gets.map((get) => [get.token, get.wait, get.revision]),
    [
      ['session-token', '0', undefined],
      ['session-token', '20', '1'],
      ['ws-token', '0', undefined], // the ack brings a session token for it
      ['ws-token', '20', '3'],
    ],
  );
  assert.equal(seen.unsubscribed, 1, 'no POST goes before that ack');
  assert.deepEqual(seen.refused, []);
});

test('while the browser is offline nothing is polled; it looks again every second', async () => {
  const gets = server([ack(1)]);
  const { start } = pollLoop();
  navigator.onLine = false;
  start();
  await advance(5_300, 100);
  assert.equal(gets.length, 0);
  navigator.onLine = true;
  await advance(1_000, 100);
  assert.equal(gets.length, 2);
  assert.equal(gets[0].at - START, 6_000, 'polled at the next look');
});

test('without a token the loop asks the channel for one; the first poll carries it and asks for the ack', async () => {
  const gets = server([ack(1)]);
  const { state, seen, start } = pollLoop();
  state.token = undefined;
  start();
  await settle();
  assert.equal(seen.missing, 1);
  assert.deepEqual(
    gets.map((get) => [get.token, get.wait, get.revision]),
    [
      ['fresh-token', '0', undefined],
      ['fresh-token', '20', '1'],
    ],
  );
  assert.deepEqual(seen.applied.map((frame) => frame.type), ['ack']);
});

test('without a token the channel cannot give, nothing is polled and the loop ends', async () => {
  const gets = server([ack(1)]);
  const { state, seen, loop } = pollLoop({ missing: () => null });
  state.token = undefined;
  await loop.run();
  await advance(5_000);
  assert.equal(seen.missing, 1);
  assert.equal(gets.length, 0);
});

test('without a token while the browser is offline, the channel is asked for one only once it is back', async () => {
  const gets = server([ack(1)]);
  const { state, seen, start } = pollLoop();
  state.token = undefined;
  navigator.onLine = false;
  start();
  await advance(3_000, 100);
  assert.equal(seen.missing, 0, 'the host cannot be reached offline');
  navigator.onLine = true;
  await advance(1_000, 100);
  assert.equal(seen.missing, 1);
  assert.equal(gets[0].token, 'fresh-token');
});

test('an answer that arrives once the channel no longer polls with this transport is dropped, and the loop ends', async () => {
  // The WebSocket took over, or the channel closed: either way `polling` turns false.
  const gets = server([() => new Promise((resolve) => setTimeout(() => resolve(ack(1)), 500))]);
  const { state, seen, start } = pollLoop();
  start();
  await advance(100);
  state.polling = false;
  await advance(60_000, 1_000);
  assert.deepEqual(seen.applied, []);
  assert.equal(gets.length, 1);
});

test("a poll refused with 429 or 503 waits at least the Retry-After before the next, at most a minute", async () => {
  const busy = (status, retryAfter) => json({ error: { code: 'RATE_LIMITED', message: 'busy' } }, status, { 'retry-after': retryAfter });
  const gets = server([ack(1), busy(429, '4'), busy(503, '3'), busy(429, '86400'), ack(2)]);
  const { seen, start } = pollLoop();
  start();
  await advance(4_000 + 3_000 + RETRY_AFTER_CAP_MS + 3_000, 100);
  assert.deepEqual(
    seen.reconnecting.map(([, detail]) => detail),
    ['polling failed: HTTP 429', 'polling failed: HTTP 503', 'polling failed: HTTP 429'],
  );
  const waits = gets.slice(1, 5).map((get, i) => gets[i + 2].at - get.at);
  // The backoff alone would wait 250 to 500 ms, then 500 to 1000, then 1000 to 2000.
  assert.ok(waits[0] >= 4_000 && waits[0] <= 4_100, `after Retry-After: 4, ${waits[0]} ms`);
  assert.ok(waits[1] >= 3_000 && waits[1] <= 3_100, `after a 503's Retry-After: 3, ${waits[1]} ms`);
  assert.ok(waits[2] >= RETRY_AFTER_CAP_MS && waits[2] <= RETRY_AFTER_CAP_MS + 100, `a day is capped: ${waits[2]} ms`);
  assert.deepEqual(gets.map((get) => get.wait), ['0', '20', '0', '0', '0', '20'], 'then the ack is asked for again');
});
