// What the runtime needs of a browser, faked for Node: `window` (globalThis, whose timers the
// tests mock with node:test's `mock.timers`), `navigator.onLine`, `document` events, a
// `WebSocket` the test plays the server of, and `fetch` answered by the test. Not a test file
// itself (scripts/unit-tests.mjs runs only *.test.mjs).

import { mock } from 'node:test';

/** A WebSocket whose server is the test: it opens, answers and closes it by hand. */
export class FakeSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  /** Every socket the runtime opened, oldest first. */
  static all = [];

  constructor(url) {
    this.url = url;
    this.readyState = FakeSocket.CONNECTING;
    /** Frames the runtime sent, parsed. */
    this.sent = [];
    this.closedWith = undefined;
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
    FakeSocket.all.push(this);
  }

  send(text) {
    if (this.readyState !== FakeSocket.OPEN) throw new Error(`send on a socket in state ${this.readyState}`);
    this.sent.push(JSON.parse(text));
  }

  close(code) {
    this.readyState = FakeSocket.CLOSED;
    this.closedWith = code;
  }

  // ---- the server's side ----

  open() {
    this.readyState = FakeSocket.OPEN;
    this.onopen?.({});
  }

  receive(type, payload) {
    this.onmessage?.({ data: JSON.stringify({ type, payload }) });
  }

  ack(payload = {}) {
    this.receive('ack', { sessionId: 's1', sessionToken: 'session-token', ...payload });
  }

  serverClose(code) {
    this.readyState = FakeSocket.CLOSED;
    this.onclose?.({ code });
  }

  /** The action frames sent on this socket, as their clientSeqs. */
  actionSeqs() {
    return this.sent.filter((frame) => frame.type === 'action').map((frame) => frame.payload.clientSeq);
  }
}

const events = new EventTarget();
/** Requests the runtime made with `fetch`; `answer` decides each reply. */
export const fetches = { log: [], answer: async () => new Response('{}', { status: 404 }) };

export function installFakeBrowser() {
  globalThis.window = globalThis;
  globalThis.addEventListener = events.addEventListener.bind(events);
  globalThis.removeEventListener = events.removeEventListener.bind(events);
  globalThis.dispatchEvent = events.dispatchEvent.bind(events);
  Object.defineProperty(globalThis, 'navigator', { value: { onLine: true }, configurable: true, writable: true });
  globalThis.document = new EventTarget();
  globalThis.WebSocket = FakeSocket;
  globalThis.fetch = (url, init = {}) => {
    const request = { url: String(url), method: init.method ?? 'GET', body: init.body ? JSON.parse(init.body) : undefined, signal: init.signal };
    fetches.log.push(request);
    return new Promise((resolve, reject) => {
      init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      Promise.resolve(fetches.answer(request)).then(resolve, reject);
    });
  };
}

/** Starts a test: fresh sockets and fetches, timers mocked from a fixed clock. */
export function beginTest() {
  FakeSocket.all = [];
  fetches.log = [];
  fetches.answer = async () => new Response('{}', { status: 404 });
  mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 1_700_000_000_000 });
}

export function endTest() {
  mock.timers.reset();
}

/** Lets promises and fetch answers run (setImmediate is not mocked). */
export async function settle(rounds = 5) {
  for (let i = 0; i < rounds; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** Moves the mocked clock on by `ms`, letting promises run between steps of at most `step` ms. */
export async function advance(ms, step = 50) {
  for (let done = 0; done < ms; done += step) {
    mock.timers.tick(Math.min(step, ms - done));
    await settle(2);
  }
}

export function lastSocket() {
  return FakeSocket.all.at(-1);
}

/** A JSON answer of the polling endpoint. */
export function json(body, status = 200, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}
