// Unit tests of the WebSocket probes while polling (src/socket-probe.ts) on their own: a recorded
// host stands in for the live channel, the test plays the server of each probe's fake WebSocket
// (test/fake-browser.mjs), on a mocked clock. What is checked is when a probe goes, what it takes
// for an answer, and that the channel hears of it only while it still polls.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { FakeSocket, advance, beginTest, endTest, installFakeBrowser, lastSocket, settle } from './fake-browser.mjs';
import { SocketProbes } from '../src/socket-probe.ts';

installFakeBrowser();
beforeEach(beginTest);
afterEach(endTest);

const START = 1_700_000_000_000;

function socketProbes(url = 'ws://svc.test/ws') {
  const state = { stopped: false, polling: true, answered: [] };
  const probes = new SocketProbes({
    url: () => url,
    stopped: () => state.stopped,
    polling: () => state.polling,
    answered: () => state.answered.push(Date.now() - START),
  });
  return { probes, state };
}

/** The probe socket opened last answers its ping with a pong (or `answer`). */
async function answerProbe(answer = 'pong') {
  const ws = lastSocket();
  ws.open();
  assert.deepEqual(ws.sent, [{ type: 'ping' }]);
  ws.receive(answer, undefined);
  await settle();
  assert.equal(ws.closedWith, 1000, 'a probe socket is always closed');
}

test('the first probe goes after 5 s; each failure doubles the wait; a pong tells the channel', async () => {
  const { probes, state } = socketProbes();
  probes.schedule();
  await advance(4_950);
  assert.equal(FakeSocket.all.length, 0);
  await advance(50);
  assert.equal(FakeSocket.all.length, 1);
  await answerProbe('error'); // not a pong
  await advance(9_950);
  assert.equal(FakeSocket.all.length, 1);
  await advance(50);
  assert.equal(FakeSocket.all.length, 2, 'the second probe waits 10 s');
  await answerProbe();
  assert.deepEqual(state.answered, [15_000]);
});

test('going back counts as a failure: the next fallback probes later, unless the backoff was reset', async () => {
  const { probes } = socketProbes();
  probes.schedule();
  await advance(5_000);
  await answerProbe();
  probes.schedule(); // polling again
  await advance(9_950);
  assert.equal(FakeSocket.all.length, 1);
  await advance(50);
  assert.equal(FakeSocket.all.length, 2);
  await answerProbe();
  probes.resetBackoff(); // a socket stayed up
  probes.schedule();
  await advance(5_000);
  assert.equal(FakeSocket.all.length, 3);
});

test('an answer after the channel stopped polling or closed is not heard, and no probe follows', async () => {
  for (const change of ['polling', 'stopped']) {
    FakeSocket.all = [];
    const { probes, state } = socketProbes();
    probes.schedule();
    await advance(5_000);
    if (change === 'polling') state.polling = false;
    else state.stopped = true;
    await answerProbe();
    await advance(60_000, 1_000);
    assert.deepEqual(state.answered, [], change);
    assert.equal(FakeSocket.all.length, 1, change);
  }
});

test('cancel() stops the next probe; without an address nothing is probed', async () => {
  const { probes } = socketProbes();
  probes.schedule();
  probes.cancel();
  const none = socketProbes('');
  none.probes.schedule();
  await advance(60_000, 1_000);
  assert.equal(FakeSocket.all.length, 0);
});
