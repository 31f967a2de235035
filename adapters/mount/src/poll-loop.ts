// The GET half of the polling transport (`long-poll.ts`): poll after poll while the channel polls
// with one transport, resuming from the channel's cursors. The first poll, the first after a
// failed or refused one, and the first with a token swapped in meanwhile ask for the `ack` (no
// `revision`, no wait). `live-socket.ts` owns the channel's state and tokens and reaches this
// loop only through `PollLoopHost`; the card's own frames go out through `post-queue.ts`.

import { reconnectDelay, retryAfterMs } from './backoff';
import { LONG_POLL_WAIT_SECONDS, type LongPoll } from './long-poll';
import type { Frame } from './protocol';

/** While the browser says it is offline, how long the loop waits before looking again. */
const OFFLINE_CHECK_MS = 1000;
/** The longest a refused poll's `Retry-After` holds the loop back (`backoff.ts`). */
export { RETRY_AFTER_CAP_MS } from './backoff';

/** What the loop needs of the live channel: its state, read when needed, and where answers go. */
export interface PollLoopHost {
  /** Whether the channel still polls with `poll`: not closed, and the WebSocket did not take over. */
  polling(poll: LongPoll): boolean;
  /** The token a poll carries (the session token, else the wsToken). */
  token(): string | undefined;
  /** Where the next poll resumes: after stream envelope `fromSeq` and session event `sinceSequence`. */
  cursors(): { fromSeq: number; sinceSequence: number };
  /** The current poll session got its `ack`. */
  subscribed(): boolean;
  /** The poll session is lost (a failed or refused poll): nothing is POSTed until the next `ack`. */
  unsubscribe(): void;
  /** A server frame from a poll's answer, applied as if the socket had sent it. */
  applyServerFrame(frame: Frame): void;
  /** The channel is down for now, and why (`onStatus('reconnecting', detail)`). */
  reconnecting(detail: string): void;
  /** `token` was refused: true once the channel has another to try, false if it closed instead. */
  tokenRefused(token: string): Promise<boolean>;
  /** There is no token to poll with: true once the channel has one, false if it closed instead. */
  tokenMissing(): Promise<boolean>;
}

export class PollLoop {
  /** The session revision of the last answer; undefined asks for an `ack`. */
  private revision: number | undefined;
  /** Polls in a row that got no answer: the wait before the next one grows with them. */
  private failures = 0;
  /** The token of this poll session: the last poll's, or the one its `ack` brought. */
  private pollToken: string | undefined;

  constructor(
    private readonly poll: LongPoll,
    private readonly host: PollLoopHost,
  ) {}

  /** GET after GET until the channel closes or stops polling with this transport. */
  async run(): Promise<void> {
    const { poll, host } = this;
    while (host.polling(poll)) {
      if (navigator.onLine === false) {
        await pause(OFFLINE_CHECK_MS);
        continue;
      }
      const token = host.token();
      if (!token) {
        // A bootstrap without a wsToken: the host is asked for one (online, as a socket's refused
        // subscribe asks it), and the channel fails if it gives none.
        if (!(await host.tokenMissing())) return;
        continue;
      }
      if (this.pollToken !== undefined && token !== this.pollToken) {
        // Swapped while the last poll was out (a POST's 401): only an `ack` brings a session
        // token for it, without which polling would end with the wsToken's 180 s.
        host.unsubscribe();
        this.revision = undefined;
      }
      this.pollToken = token;
      const subscribed = host.subscribed();
      const result = await poll.get({
        token,
        ...host.cursors(),
        wait: subscribed ? LONG_POLL_WAIT_SECONDS : 0,
        ...(subscribed && this.revision !== undefined ? { revision: this.revision } : {}),
      });
      if (!host.polling(poll)) return;
      if (result.kind === 'refused') {
        host.unsubscribe();
        this.revision = undefined;
        if (!(await host.tokenRefused(token))) return;
        this.pollToken = host.token();
        continue;
      }
      if (result.kind === 'failed') {
        host.unsubscribe();
        host.reconnecting(`polling failed: ${result.detail}`);
        // A 429 or 503 says how long to stay away (too many polls of this session in flight or in a
        // second): polling sooner would only be refused again.
        await pause(reconnectDelay(this.failures++, retryAfterMs(result.refusal?.retryAfterSeconds)));
        continue;
      }
      this.failures = 0;
      for (const frame of result.frames) host.applyServerFrame(frame);
      if (result.frames.some((frame) => frame.type === 'ack')) this.pollToken = host.token();
      if (typeof result.cursors.revision === 'number') this.revision = result.cursors.revision;
    }
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => window.setTimeout(resolve, ms));
}
