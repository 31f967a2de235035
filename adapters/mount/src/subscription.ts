// The live channel's subscription (docs/live-channel.md): the subscribe a socket sends and the
// deadline for its ack, the server's answers before the ack on either transport (a refused token,
// a refusal for now sent again after its wait, one for good that closes the channel), the sockets
// that closed before their ack (polling takes over after a few), the heartbeat of a bound socket
// and the steady timer that resets the backoffs, and a binding the server lost after the ack
// (`lost-binding.ts`), subscribed again. `live-socket.ts` owns the transports, the cursors and
// the actions, and reaches this file only through `SubscriptionHost`.

import { refusedForNow } from './action-retry';
import { delayAfterRefusal, reconnectDelay } from './backoff';
import type { ChannelTokens } from './channel-tokens';
import { bindingLost } from './lost-binding';
import {
  PROTOCOL_VERSION,
  isObject,
  streamsLost,
  type AckPayload,
  type ErrorPayload,
  type Frame,
  type SubscribePayload,
} from './protocol';

/** Consecutive sockets that closed before their ack (while online) before polling takes over. */
const FALLBACK_AFTER_FAILED_SOCKETS = 2;
const PING_INTERVAL_MS = 20_000;
/** Time for a socket to open and answer the subscribe before it is abandoned. */
const CONNECT_TIMEOUT_MS = 15_000;
/** The server answers our ping within the interval; silence this long means a dead socket. */
const SILENCE_LIMIT_MS = 50_000;
/** Errors that end the session for this card: no reconnect can fix them. */
export const TERMINAL_ERRORS = new Set(['UNSUPPORTED_VERSION', 'SESSION_EXPIRED']);

/** How a status detail names a server error: `<code>: <message>`. */
export function errorDetail(code: string, error: ErrorPayload): string {
  return `${code}${error.message ? `: ${error.message}` : ''}`;
}

/** What the subscription needs of the live channel: its state, read when needed, and what to do next. */
export interface SubscriptionHost {
  readonly sessionId: string;
  readonly appId?: string;
  /** The current socket (null while polling or between sockets). */
  socket(): WebSocket | null;
  polling(): boolean;
  /** The current transport got its `ack`. */
  subscribed(): boolean;
  /** The resume cursors of the next subscribe. */
  cursors(): Pick<SubscribePayload, 'fromSeq' | 'sinceSequence'>;
  /** The `ack` arrived: the channel is live. */
  acked(ack: AckPayload): void;
  /** The server's replay no longer covers the stream cursor. */
  rebuildStreams(): void;
  /** The socket stayed up a heartbeat: the path is proved and both backoffs start again. */
  steady(): void;
  /** The server no longer binds the socket: nothing is subscribed or in flight on it. */
  unbound(): void;
  /** Claims the first attempt since the channel was steady (true once until it is steady again). */
  firstAttempt(): boolean;
  /** Closes the socket and connects again after `delayOf(attempt)`, saying why. */
  retryAfter(delayOf: (attempt: number) => number, detail: string): void;
  /** The channel is down for now, and why. */
  reconnecting(detail: string): void;
  /** Closes the channel for good. */
  fail(detail: string): void;
  /** Abandons the current socket at once. */
  drop(): void;
  ping(): void;
}

export class Subscription {
  /** The token the current socket's subscribe carried: the one an AUTH_FAILED refuses. */
  private subscribedWith: string | undefined;
  private connectTimer: number | undefined;
  private heartbeatTimer: number | undefined;
  /** Resets the probe backoff once a socket has stayed up for a while. */
  private steadyTimer: number | undefined;
  private lastHeard = 0;
  /** Sockets in a row that closed before their ack; polling takes over at the threshold. */
  private failedSockets = 0;

  constructor(
    private readonly tokens: ChannelTokens,
    private readonly host: SubscriptionHost,
  ) {}

  /** The server answered, or the channel is back on the socket: the sockets that closed before
   * their ack so far are no step toward polling. */
  pathWorks(): void {
    this.failedSockets = 0;
  }

  /** A socket closed before its ack while online: whether one did so often in a row that it is
   * taken as blocked (a CSP, a proxy without WebSocket support) and polling takes over. */
  failedBeforeAck(): boolean {
    this.failedSockets += 1;
    return this.failedSockets >= FALLBACK_AFTER_FAILED_SOCKETS;
  }

  /** The socket said something (or opened): it is not silent. */
  heard(): void {
    this.lastHeard = Date.now();
  }

  /** Sends the subscribe on `ws`, noting which token it carries (a swap may replace it meanwhile). */
  subscribe(ws: WebSocket): void {
    const payload = this.payload();
    this.subscribedWith = payload.sessionToken ?? payload.wsToken;
    ws.send(JSON.stringify({ type: 'subscribe', payload }));
  }

  /** Abandons `ws` if it is not subscribed within {@link CONNECT_TIMEOUT_MS} from now. */
  awaitAck(ws: WebSocket): void {
    window.clearTimeout(this.connectTimer);
    this.connectTimer = window.setTimeout(() => {
      if (this.host.socket() === ws && !this.host.subscribed()) this.host.drop();
    }, CONNECT_TIMEOUT_MS);
  }

  /** The socket opened and closed: its ack is no longer awaited. */
  closed(): void {
    window.clearTimeout(this.connectTimer);
  }

  /** The socket is gone (closed or detached): none of its timers runs on. */
  ended(): void {
    window.clearInterval(this.heartbeatTimer);
    window.clearTimeout(this.connectTimer);
    window.clearTimeout(this.steadyTimer);
  }

  /** The channel closed for good: the steady timer too, whether or not a socket is up. */
  cancelSteady(): void {
    window.clearTimeout(this.steadyTimer);
  }

  /** A server frame before the ack, from the socket or from a poll answer. */
  beforeAck(frame: Frame): void {
    if (frame.type === 'ack') {
      this.pathWorks();
      this.host.acked((isObject(frame.payload) ? frame.payload : {}) as unknown as AckPayload);
      return;
    }
    if (frame.type === 'system' && isObject(frame.payload) && frame.payload.event === 'replay_gap') {
      if (streamsLost(frame.payload.lost)) this.host.rebuildStreams();
      return;
    }
    if (frame.type !== 'error') return;
    const error = (isObject(frame.payload) ? frame.payload : {}) as ErrorPayload;
    const code = error.code ?? 'ERROR';
    // A refused token: another is tried on a new socket, if one is left (`channel-tokens.ts`).
    // Over polling (a 401 is the usual refusal there) the poll carried the current token.
    const refused = this.host.polling() ? this.tokens.current() : this.subscribedWith;
    if (code === 'AUTH_FAILED' && this.tokens.refusedOnSocket(refused)) return;
    if (code === 'AUTH_FAILED' || TERMINAL_ERRORS.has(code)) {
      this.host.fail(errorDetail(code, error));
      return;
    }
    // Over polling an error before the ack answers a POST (`post-queue.ts`), not a subscribe.
    const ws = this.host.socket();
    if (!this.host.polling() && ws) this.subscribeRefused(code, error);
  }

  /**
   * After the ack on a socket: pings it, abandons it when it falls silent, and once it has stayed
   * up a heartbeat resets both backoffs (`SubscriptionHost.steady`); one that drops sooner keeps
   * them where they were, so a socket the server closes soon after its ack is not reopened at
   * once, again and again, and a flapping path is not switched to every few seconds.
   */
  keepAlive(): void {
    window.clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = window.setInterval(() => {
      if (Date.now() - this.lastHeard > SILENCE_LIMIT_MS) {
        this.host.drop();
        return;
      }
      this.host.ping();
    }, PING_INTERVAL_MS);
    window.clearTimeout(this.steadyTimer);
    this.steadyTimer = window.setTimeout(() => {
      if (!this.host.subscribed() || this.host.polling()) return;
      this.host.steady();
    }, PING_INTERVAL_MS);
  }

  /**
   * Whether `error`, heard after the ack, says the server unbound the socket (`lost-binding.ts`);
   * if so it is subscribed again. Over polling each GET carries the token and cursors: only a
   * socket has a binding to lose.
   */
  subscribeAgainIfLost(error: ErrorPayload): boolean {
    const ws = this.host.socket();
    if (this.host.polling() || !ws || !bindingLost(error)) return false;
    this.subscribeAgain(ws, errorDetail(error.code ?? 'ERROR', error));
    return true;
  }

  /**
   * The server answered the subscribe on the socket with `error` (not an `AUTH_FAILED` or a
   * terminal one, handled above): never left to the connect timeout. `NOT_SUBSCRIBED` is no
   * answer to it (below); a refusal for now (`SERVER_BUSY` while the replay budget is taken,
   * `INTERNAL`, `RATE_LIMITED`) is sent again on a new socket after its wait, which then has the
   * server's whole subscribe deadline; any other (`BAD_FRAME`: the same subscribe would be
   * refused again) closes the channel, saying why.
   */
  private subscribeRefused(code: string, error: ErrorPayload): void {
    // The server answered: the path to it works, so this socket is no step toward polling.
    this.pathWorks();
    // The server never answers a subscribe so, and answers frames in order: this one answers a
    // frame sent before the subscribe still out on the socket (one sent while the binding was
    // lost), and that subscribe's own answer follows. Sending another would bind, replay and ack
    // twice. (The one of a socket left unsubscribed too long comes with its 1008 close.)
    if (code === 'NOT_SUBSCRIBED') return;
    if (!refusedForNow(code)) {
      this.host.fail(errorDetail(code, error));
      return;
    }
    this.host.retryAfter((attempt) => delayAfterRefusal(attempt, error.retryAfterSeconds), errorDetail(code, error));
  }

  /**
   * The server unbound `ws` after its ack (`lost-binding.ts`): nothing live arrives and every
   * frame is refused until it is subscribed again, from the cursors of the frames applied. The
   * first loss since the channel was last steady subscribes again at once on `ws` (the server
   * keeps it open and gives it its whole subscribe deadline again); another before the channel
   * has stayed up a heartbeat interval reconnects after the backoff, on a new socket (which has
   * that deadline whatever the wait), so a server whose replays keep failing is not asked again
   * and again. Either way the actions not yet stored go again after the next ack.
   */
  private subscribeAgain(ws: WebSocket, detail: string): void {
    this.host.unbound();
    window.clearInterval(this.heartbeatTimer);
    window.clearTimeout(this.steadyTimer);
    if (ws.readyState === WebSocket.OPEN && this.host.firstAttempt()) {
      this.host.reconnecting(detail);
      this.subscribe(ws);
      this.awaitAck(ws);
      return;
    }
    this.host.retryAfter((attempt) => reconnectDelay(attempt), detail);
  }

  private payload(): SubscribePayload {
    const { sessionId, appId } = this.host;
    return {
      sessionId,
      ...(appId ? { appId } : {}),
      ...this.tokens.credentials(),
      ...this.host.cursors(),
      role: 'user',
      supportedVersions: [PROTOCOL_VERSION],
    };
  }
}
