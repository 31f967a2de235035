// While polling, the card probes whether its WebSocket works again: a socket that opens and
// answers a `ping` with a `pong` (the server answers `ping` before any subscribe) proves the
// whole path, which an `open` alone does not behind some proxies. `SocketProbes` probes after
// growing waits and tells `live-socket.ts` (through `SocketProbesHost`) once a probe is answered.

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

/** What the probes need of the live channel: its state, read when needed, and where to go back. */
export interface SocketProbesHost {
  /** The `/ws` address; absent: nothing to probe. */
  url(): string | undefined;
  /** The channel closed for good. */
  stopped(): boolean;
  /** The channel polls: what a probe's answer would end. */
  polling(): boolean;
  /** A probe was answered: polling ends and the card subscribes on a socket again. */
  answered(): void;
}

export class SocketProbes {
  /** The next probe. */
  private timer: number | undefined;
  /** Probes that failed since polling began; each makes the next wait longer. */
  private failures = 0;

  constructor(private readonly host: SocketProbesHost) {}

  /** Probes after the wait the failures so far call for. */
  schedule(): void {
    if (this.host.stopped() || !this.host.url()) return;
    window.clearTimeout(this.timer);
    const delay = probeDelay(this.failures);
    this.timer = window.setTimeout(() => {
      this.timer = undefined;
      void this.probe();
    }, delay);
  }

  /** A socket stayed up long enough to prove the path: the next fallback probes soon again. */
  resetBackoff(): void {
    this.failures = 0;
  }

  /** The channel closed for good: no probe more. */
  cancel(): void {
    window.clearTimeout(this.timer);
  }

  /** Once the socket answers, polling ends; otherwise the next probe waits longer. */
  private async probe(): Promise<void> {
    const url = this.host.url();
    if (this.host.stopped() || !this.host.polling() || !url) return;
    const answered = await probeSocket(url);
    if (this.host.stopped() || !this.host.polling()) return;
    // Going back counts too: a path that answers pings but fails subscribes would bring polling
    // back, and counting the switch keeps such flapping slow.
    this.failures += 1;
    if (answered) this.host.answered();
    else this.schedule();
  }
}
