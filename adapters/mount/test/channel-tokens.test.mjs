// Unit tests of the live channel's tokens (src/channel-tokens.ts) on their own: a recorded host
// stands in for the live channel, the host's refresh is a promise the test answers. What is
// checked is which token a request carries, what a refusal swaps it for (and when it needs no
// swap), how often the host is asked for a fresh wsToken, and what the channel is told meanwhile.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { beginTest, endTest, installFakeBrowser, settle } from './fake-browser.mjs';
import { ChannelTokens } from '../src/channel-tokens.ts';

installFakeBrowser();
beforeEach(beginTest);
afterEach(endTest);

/** How the channel fails when the host gives no token, by what the refused request carried. */
const REFUSED = 'AUTH_FAILED: the live-channel token was refused';
const NO_TOKEN = 'AUTH_FAILED: the card has no token for the live channel';
/** What a failure adds when the host's refresh threw `host gone`. */
const HOST_GONE = " and the host's refresh failed (host gone)";

/** Tokens whose host records every call in `log`; `refresh` answers the host's refreshes in
 * turn (a token, null, or an Error to reject with), held until `answer()` when `held`;
 * `bootstrap` is what the card's bootstrap gave. */
function channelTokens({ refreshes = ['fresh-token'], held = false, canRefresh = true, bootstrap = { wsToken: 'ws-token' } } = {}) {
  const state = { stopped: false, subscribed: true, asked: 0 };
  const log = [];
  const pending = [];
  const refreshWsToken = () => {
    const answer = refreshes[state.asked++];
    const settleWith = (resolve, reject) => (answer instanceof Error ? reject(answer) : resolve(answer ?? null));
    return new Promise((resolve, reject) => (held ? pending.push(() => settleWith(resolve, reject)) : settleWith(resolve, reject)));
  };
  const tokens = new ChannelTokens(
    { ...bootstrap, ...(canRefresh ? { refreshWsToken } : {}) },
    {
      stopped: () => state.stopped,
      subscribed: () => state.subscribed,
      reconnecting: (detail) => log.push(`reconnecting: ${detail}`),
      live: () => log.push('live'),
      fail: (detail) => {
        log.push(`fail: ${detail}`);
        state.stopped = true; // as the channel does
      },
      closeSocket: () => {
        log.push('closeSocket');
        state.subscribed = false; // as the channel does
      },
      connect: () => log.push(`connect with ${tokens.current()}`),
    },
  );
  return { tokens, state, log, answer: () => pending.shift()() };
}

test('a request carries the session token an ack brought, else the wsToken; a subscribe names only one', () => {
  const { tokens } = channelTokens();
  assert.equal(tokens.current(), 'ws-token');
  assert.equal(tokens.hasSessionToken(), false);
  assert.deepEqual(tokens.credentials(), { wsToken: 'ws-token' });
  tokens.acked('session-token');
  assert.equal(tokens.current(), 'session-token');
  assert.equal(tokens.hasSessionToken(), true);
  assert.deepEqual(tokens.credentials(), { sessionToken: 'session-token' });
  tokens.acked(undefined);
  assert.equal(tokens.current(), 'session-token', 'an ack without one keeps the session token held');
});

test('a refused session token falls back to the wsToken before the host is asked for anything', async () => {
  const { tokens, state, log } = channelTokens();
  tokens.acked('session-token');
  assert.equal(await tokens.swapRefused('session-token'), true);
  assert.equal(tokens.current(), 'ws-token');
  assert.deepEqual(tokens.credentials(), { wsToken: 'ws-token' });
  assert.equal(state.asked, 0);
  assert.deepEqual(log, [], 'nothing to report: the next request simply carries the wsToken');
  assert.equal(await tokens.swapRefused('ws-token'), true);
  assert.equal(state.asked, 1, 'only the refused wsToken asks the host');
  assert.equal(tokens.current(), 'fresh-token');
});

test('a refusal with a token replaced since needs no swap', async () => {
  const { tokens, state, log } = channelTokens();
  tokens.acked('session-token');
  // A request that went out with the wsToken before the ack brought the session token.
  assert.equal(await tokens.swapRefused('ws-token'), true);
  assert.equal(tokens.current(), 'session-token', 'the session token is kept');
  assert.equal(state.asked, 0);
  assert.deepEqual(log, []);
});

test('a refusal while a swap is under way joins it: one refresh, and both go on with the fresh token', async () => {
  const { tokens, state, log, answer } = channelTokens({ held: true });
  const first = tokens.swapRefused('ws-token');
  const second = tokens.swapRefused('ws-token');
  assert.equal(second, first, 'the second refusal waits for the same swap');
  await settle();
  assert.equal(state.asked, 1);
  assert.deepEqual(log, ['reconnecting: refreshing the live-channel token']);
  answer();
  assert.deepEqual(await Promise.all([first, second]), [true, true]);
  assert.equal(tokens.current(), 'fresh-token');
  assert.deepEqual(log, ['reconnecting: refreshing the live-channel token', 'live'], 'still subscribed: live again at once');
  // Once settled, a refusal of the token it replaced needs no swap at all.
  assert.equal(await tokens.swapRefused('ws-token'), true);
  assert.equal(state.asked, 1);
});

test('the host is asked for one fresh wsToken per ack; a second refusal fails the channel with AUTH_FAILED', async () => {
  const { tokens, state, log } = channelTokens({ refreshes: ['fresh-1', 'fresh-2'] });
  assert.equal(await tokens.swapRefused('ws-token'), true);
  assert.equal(await tokens.swapRefused('fresh-1'), false);
  assert.equal(state.asked, 1);
  assert.deepEqual(log, ['reconnecting: refreshing the live-channel token', 'live', `fail: ${REFUSED}`]);
  assert.equal(await tokens.swapRefused('fresh-1'), false, 'a closed channel swaps nothing');

  // After an ack the host may be asked again.
  const again = channelTokens({ refreshes: ['fresh-1', 'fresh-2'] });
  assert.equal(await again.tokens.swapRefused('ws-token'), true);
  again.tokens.acked(undefined);
  assert.equal(await again.tokens.swapRefused('fresh-1'), true);
  assert.equal(again.state.asked, 2);
  assert.equal(again.tokens.current(), 'fresh-2');
});

test('no fresh token (none given, or no host refresh at all) fails the channel with AUTH_FAILED', async () => {
  const none = channelTokens({ refreshes: [null] });
  assert.equal(await none.tokens.swapRefused('ws-token'), false);
  assert.deepEqual(none.log, ['reconnecting: refreshing the live-channel token', `fail: ${REFUSED}`]);
  const without = channelTokens({ canRefresh: false });
  assert.equal(await without.tokens.swapRefused('ws-token'), false);
  assert.deepEqual(without.log, [`fail: ${REFUSED}`]);
});

test('a swap whose refresh answers after the channel closed reports nothing more', async () => {
  const { tokens, state, log, answer } = channelTokens({ held: true, refreshes: [null] });
  const swap = tokens.swapRefused('ws-token');
  await settle();
  state.stopped = true;
  answer();
  assert.equal(await swap, false);
  assert.deepEqual(log, ['reconnecting: refreshing the live-channel token']);
});

test('a socket refused: the session token falls back to the wsToken on a new socket at once, then one refresh per ack', async () => {
  const { tokens, state, log } = channelTokens({ refreshes: ['fresh-token'] });
  tokens.acked('session-token');
  assert.equal(tokens.refusedOnSocket('session-token'), true);
  assert.deepEqual(log, ['closeSocket', 'connect with ws-token']);
  assert.equal(tokens.refusedOnSocket('ws-token'), true);
  assert.deepEqual(log.slice(2), ['closeSocket', 'reconnecting: refreshing the live-channel token']);
  await settle();
  assert.deepEqual(log.slice(4), ['connect with fresh-token']);
  assert.equal(tokens.refusedOnSocket('fresh-token'), false, 'nothing left: the channel fails it');
  assert.equal(state.asked, 1);
  assert.equal(log.length, 5);
});

test('a socket refused: a refresh that brings nothing or fails fails the channel, saying which', async () => {
  const none = channelTokens({ refreshes: [null] });
  assert.equal(none.tokens.refusedOnSocket('ws-token'), true);
  await settle();
  assert.equal(none.log.at(-1), `fail: ${REFUSED}`);
  const broken = channelTokens({ refreshes: [new Error('host gone')] });
  assert.equal(broken.tokens.refusedOnSocket('ws-token'), true);
  await settle();
  assert.equal(broken.log.at(-1), `fail: ${REFUSED}${HOST_GONE}`);
});

test('the socket and the polling transport share the refresh of an ack', async () => {
  const { tokens, state } = channelTokens();
  assert.equal(await tokens.swapRefused('ws-token'), true);
  assert.equal(tokens.refusedOnSocket('fresh-token'), false);
  assert.equal(state.asked, 1);
});

test('a socket refused while a swap is under way (back from polling) waits for it: one refresh, one reconnect with its token', async () => {
  const { tokens, state, log, answer } = channelTokens({ held: true });
  const swap = tokens.swapRefused('ws-token');
  await settle();
  state.subscribed = false; // back on a socket, not yet acked
  assert.equal(tokens.refusedOnSocket('ws-token'), true);
  assert.equal(tokens.refusedOnSocket('ws-token'), true, 'a socket refused again meanwhile waits for the same swap');
  await settle();
  assert.deepEqual(log.slice(1), ['closeSocket', 'reconnecting: refreshing the live-channel token', 'closeSocket', 'reconnecting: refreshing the live-channel token']);
  answer();
  assert.equal(await swap, true);
  await settle();
  assert.deepEqual(log.slice(5), ['connect with fresh-token'], 'one reconnect');
  assert.equal(state.asked, 1);
  assert.equal(tokens.refusedOnSocket('fresh-token'), false, 'its token refused too: nothing left, as before');
});

test('a socket refused while a swap is under way that brings none: the swap fails the channel, once', async () => {
  const { tokens, state, log, answer } = channelTokens({ held: true, refreshes: [null] });
  const swap = tokens.swapRefused('ws-token');
  await settle();
  state.subscribed = false;
  assert.equal(tokens.refusedOnSocket('ws-token'), true, 'the swap decides, not the refusal');
  answer();
  assert.equal(await swap, false);
  await settle();
  assert.deepEqual(log.filter((entry) => entry.startsWith('fail') || entry.startsWith('connect')), [`fail: ${REFUSED}`]);
});

test('a socket refused with a token a swap replaced since reconnects with the new one at once, asking the host nothing', async () => {
  const { tokens, state, log } = channelTokens();
  assert.equal(await tokens.swapRefused('ws-token'), true);
  state.subscribed = false;
  assert.equal(tokens.refusedOnSocket('ws-token'), true);
  assert.deepEqual(log.slice(2), ['closeSocket', 'connect with fresh-token']);
  assert.equal(state.asked, 1);
});

for (const [what, bootstrap] of [
  ['no wsToken', {}],
  ['an empty wsToken', { wsToken: '' }],
]) {
  test(`a card with ${what}: the host is asked once, however many ask meanwhile (a refusal too), and all go on with its token`, async () => {
    const { tokens, state, log, answer } = channelTokens({ bootstrap, held: true });
    state.subscribed = false; // no token, so no ack yet
    assert.equal(tokens.current(), undefined);
    assert.deepEqual(tokens.credentials(), {});
    const first = tokens.swapMissing();
    const second = tokens.swapMissing();
    const refused = tokens.swapRefused('stale-token');
    assert.equal(second, first, 'a second ask waits for the same swap');
    assert.equal(refused, first, 'so does a refusal meanwhile');
    await settle();
    assert.equal(state.asked, 1);
    assert.deepEqual(log, ['reconnecting: refreshing the live-channel token']);
    answer();
    assert.deepEqual(await Promise.all([first, second, refused]), [true, true, true]);
    assert.equal(tokens.current(), 'fresh-token');
    assert.deepEqual(tokens.credentials(), { wsToken: 'fresh-token' });
    assert.deepEqual(log, ['reconnecting: refreshing the live-channel token'], 'not live before the ack');
    // Once there is a token, an ask needs no swap at all.
    assert.equal(await tokens.swapMissing(), true);
    assert.equal(state.asked, 1);
  });
}

test('a card without a token whose host gives none (null, a failed refresh, no refresh at all) fails the channel saying it has none', async () => {
  for (const [refreshes, why] of [[[null], ''], [[new Error('host gone')], HOST_GONE]]) {
    const { tokens, state, log } = channelTokens({ bootstrap: {}, refreshes });
    assert.equal(await tokens.swapMissing(), false);
    assert.equal(state.asked, 1);
    assert.deepEqual(log, ['reconnecting: refreshing the live-channel token', `fail: ${NO_TOKEN}${why}`]);
    assert.equal(await tokens.swapMissing(), false, 'a closed channel swaps nothing');
  }
  const without = channelTokens({ bootstrap: {}, canRefresh: false });
  assert.equal(await without.tokens.swapMissing(), false);
  assert.deepEqual(without.log, [`fail: ${NO_TOKEN}`]);
});

test("an empty token refused is none: a card without one asks the host, rather than taking '' for a token replaced already", async () => {
  const { tokens, state } = channelTokens({ bootstrap: {} });
  assert.equal(await tokens.swapRefused(''), true);
  assert.equal(state.asked, 1, 'the host was asked');
  assert.equal(tokens.current(), 'fresh-token');
});

for (const stale of [undefined, 'stale-token']) {
  test(`a socket refused again and again with a stale token (${stale}) reconnects at once once per swap, then falls back and fails as usual`, async () => {
    const { tokens, state, log } = channelTokens({ refreshes: ['fresh-token'] });
    tokens.acked('session-token');
    assert.equal(await tokens.swapRefused('session-token'), true, 'a swap: the session token falls back to the wsToken');
    state.subscribed = false;
    const answers = [];
    for (let refusal = 0; refusal < 10 && answers.at(-1) !== false; refusal += 1) {
      answers.push(tokens.refusedOnSocket(stale));
      await settle();
    }
    assert.deepEqual(answers, [true, true, false], 'bounded: nothing left to try in the end');
    assert.deepEqual(log, [
      'closeSocket',
      'connect with ws-token', // the one reconnect for the swap
      'closeSocket',
      'reconnecting: refreshing the live-channel token',
      'connect with fresh-token',
    ]);
    assert.equal(state.asked, 1);
  });
}

// ---------- the socket's refresh shares the swap slot ----------

for (const [what, bootstrap, refused, joins] of [
  ['a poll refused', { wsToken: 'ws-token' }, 'ws-token', (tokens) => tokens.swapRefused('ws-token')],
  ['a card without a token about to poll', {}, undefined, (tokens) => tokens.swapMissing()],
]) {
  test(`${what} while a refused socket's refresh is under way joins it: one refresh, then the fresh token for both`, async () => {
    const { tokens, state, log, answer } = channelTokens({ bootstrap, held: true });
    state.subscribed = false;
    assert.equal(tokens.refusedOnSocket(refused), true);
    await settle();
    const polling = joins(tokens); // the sockets closed before their ack: polling took over
    await settle();
    assert.equal(state.asked, 1);
    answer();
    assert.equal(await polling, true, "the host's token is on its way: nothing fails");
    await settle();
    assert.equal(tokens.current(), 'fresh-token');
    assert.deepEqual(log, ['closeSocket', 'reconnecting: refreshing the live-channel token', 'connect with fresh-token'], 'one reconnect, with its token');
    assert.equal(state.asked, 1);
  });
}

test("a socket refused again while its own refresh is under way (`online`) waits for it: one refresh, one reconnect", async () => {
  const { tokens, state, log, answer } = channelTokens({ held: true });
  state.subscribed = false;
  assert.equal(tokens.refusedOnSocket('ws-token'), true);
  assert.equal(tokens.refusedOnSocket('ws-token'), true, 'not failed: the fresh token is on its way');
  await settle();
  answer();
  await settle();
  assert.deepEqual(log.filter((entry) => entry.startsWith('connect') || entry.startsWith('fail')), ['connect with fresh-token']);
  assert.equal(state.asked, 1);
  assert.equal(tokens.refusedOnSocket('fresh-token'), false, 'its token refused too: nothing left');
});

test('a socket whose refresh brings back the refused token reconnects once, then has nothing left (no loop)', async () => {
  const { tokens, state, log } = channelTokens({ refreshes: ['ws-token'] });
  state.subscribed = false;
  assert.equal(tokens.refusedOnSocket('ws-token'), true);
  await settle();
  assert.equal(tokens.refusedOnSocket('ws-token'), false);
  assert.deepEqual(log, ['closeSocket', 'reconnecting: refreshing the live-channel token', 'connect with ws-token']);
  assert.equal(state.asked, 1);
});

// ---------- one failure message per cause, whichever transport was refused ----------

for (const [cause, bootstrap, carried, expected] of [
  ['no token', {}, undefined, NO_TOKEN],
  ['an empty token', { wsToken: '' }, '', NO_TOKEN],
  ['a refused token', { wsToken: 'ws-token' }, 'ws-token', REFUSED],
]) {
  for (const [gives, refreshes, suffix] of [
    ['none', [null], ''],
    ['an error', [new Error('host gone')], HOST_GONE],
  ]) {
    test(`${cause}, and the host gives ${gives}: the socket and a poll fail the channel with the same words`, async () => {
      const failures = [];
      for (const refusal of [
        (tokens) => tokens.refusedOnSocket(carried),
        (tokens) => (carried ? tokens.swapRefused(carried) : tokens.swapMissing()),
      ]) {
        const { tokens, log } = channelTokens({ bootstrap, refreshes });
        refusal(tokens);
        await settle();
        failures.push(log.filter((entry) => entry.startsWith('fail')));
      }
      assert.deepEqual(failures, [[`fail: ${expected}${suffix}`], [`fail: ${expected}${suffix}`]]);
    });
  }
}
