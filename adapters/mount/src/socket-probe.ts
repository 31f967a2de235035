// While polling, the card probes whether its WebSocket works again: a socket that opens and
// answers a `ping` with a `pong` (the server answers `ping` before any subscribe) proves the
// whole path, which an `open` alone does not behind some proxies.

import { isObject } from './protocol';

/** The first probe after polling begins; each failure doubles the wait, up to the cap. */
const PROBE_FIRST_MS = 5_000;
const PROBE_CAP_MS = 300_000;
/** A probe with no `pong` within this long failed. */
const PROBE_TIMEOUT_MS = 5_000;

/** How long to wait before the next probe, after `failures` probes in a row failed. */
export function probeDelay(failures: number): number {
  return Math.min(PROBE_CAP_MS, PROBE_FIRST_MS * 2 ** Math.min(failures, 10));
}

/** Whether a WebSocket to `url` opens and answers a ping within the timeout; always closed after. */
export function probeSocket(url: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let ws: WebSocket;
    try {
      ws = new WebSocket(url);
    } catch {
      resolve(false);
      return;
    }
    const done = (ok: boolean): void => {
      window.clearTimeout(timer);
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      try {
        ws.close(1000);
      } catch {
        // Already closing.
      }
      resolve(ok);
    };
    const timer = window.setTimeout(() => done(false), PROBE_TIMEOUT_MS);
    ws.onopen = () => ws.send(JSON.stringify({ type: 'ping' }));
    ws.onmessage = (event) => {
      try {
        const frame: unknown = JSON.parse(String(event.data));
        done(isObject(frame) && frame.type === 'pong');
      } catch {
        done(false);
      }
    };
    ws.onerror = () => done(false);
    ws.onclose = () => done(false);
  });
}
