// The /ws client: subscribe, keep the resume cursors, reconnect with backoff, heartbeat, and
// deliver every action at least once (the server dedups by clientSeq), sending an action the
// server refused for now again after the wait it asked for and giving up on one it refused for
// good (`action-retry.ts`). Which token a request carries, and what replaces a refused one, is
// `channel-tokens.ts`. A subscribe the server refused for now (`SERVER_BUSY`, ...) is sent again,
// on a new socket, after the wait it asked for; one it refused for good closes the channel. A
// socket the server unbound after its ack (`lost-binding.ts`) is subscribed again from the cursors;
// the subscribe, its answers before the ack and a socket's heartbeat are `subscription.ts`.
// When the WebSocket cannot connect it falls back to `pollingUrl` (the same frames over HTTP
// long-poll, `long-poll.ts`: polled by `poll-loop.ts`, the card's own frames POSTed in order by
// `post-queue.ts`), resuming with the same session token and cursors; while polling it probes the
// WebSocket now and then (`socket-probe.ts`), and goes back to it once the server answers there.

import { ACTION_REFUSALS_WITHOUT_SEQ, judgeRefusal, refusalBeforeSending } from './action-retry';
import { reconnectDelay } from './backoff';
import { ChannelTokens } from './channel-tokens';
import { LongPoll } from './long-poll';
import { PollLoop, type PollLoopHost } from './poll-loop';
import { PostQueue, type QueuedAction } from './post-queue';
import { SocketProbes } from './socket-probe';
import { Subscription, TERMINAL_ERRORS, errorDetail } from './subscription';
import {
  isObject,
  streamsLost,
  type AckPayload,
  type ActionEnvelope,
  type ErrorPayload,
  type Frame,
  type JsonObject,
  type StreamEnvelope,
  type SystemPayload,
} from './protocol';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'failed' | 'closed';
/** `closed`: the channel closed for good (`stop`, or a refusal no reconnect can fix). */
export type LiveTransport = 'websocket' | 'polling' | 'closed';

/** Close codes after which the server asked us to slow down (1008 policy, 1013 try later). */
const SLOW_DOWN_CODES = new Set([1008, 1013]);

export interface LiveSocketOptions {
  /** The `/ws` address; absent: poll from the start. */
  url?: string;
  /** The `pollingUrl` fallback; absent: the socket is the only transport. */
  pollingUrl?: string;
  sessionId: string;
  appId?: string;
  wsToken?: string;
  /** Seed of the session-event cursor (`sinceSequence`). */
  lastSequence?: number;
  onAck(ack: AckPayload): void;
  /** Frames after the ack, minus heartbeats and action receipts; `data` frames deduplicated. */
  onFrame(frame: Frame): void;
  onStatus(status: LiveStatus, detail?: string): void;
  /** The server's replay buffer no longer covers our cursor: stream state must be rebuilt. */
  onReplayGap(): void;
  /** An action that will never be stored: refused for good (or too often), or the channel
   * closed for good (`NOT_CONNECTED`). Called once per action, possibly right after `sendAction`. */
  onActionFailed(action: ActionEnvelope, error: ErrorPayload): void;
  /** The server stored the action sent with `clientSeq` (it reaches the agent's svc_consume).
   * Called once per clientSeq, however many answers say so. */
  onActionStored?(clientSeq: number, actionId: string, duplicate: boolean): void;
  /** A fresh wsToken (from `svc_runtime_refresh_ws_token` through the host), or null. */
  refreshWsToken?(): Promise<string | null>;
  /** The transport changed (the socket is blocked: polling took over; it answers again: back;
   * the channel closed for good: `closed`). */
  onTransport?(transport: LiveTransport): void;
}

/** An action not yet stored. */
interface PendingAction extends QueuedAction {
  /** Refusals by the server that may be retried (SERVER_BUSY, RATE_LIMITED, INTERNAL). */
  refusals: number;
}

export class LiveSocket {
  private ws: WebSocket | null = null;
  private subscribed = false;
  private stopped = false;
  /** The session token and the wsToken: which a request carries, and the swap of a refused one. */
  private readonly tokens: ChannelTokens;
  /** Highest stream envelope seq applied: the `fromSeq` of the next subscribe. */
  private streamCursor = 0;
  /** Highest session event sequence seen: the `sinceSequence` of the next subscribe. */
  private eventCursor: number;
  private nextClientSeq: number;
  /** Actions not yet acknowledged as stored, in clientSeq order. */
  private readonly unacked = new Map<number, PendingAction>();
  /** clientSeqs sent on the current socket and still unanswered, in send order. */
  private inflight: number[] = [];
  /** The current socket's `FRAME_TOO_LARGE` was applied: the 1009 close after it drops nothing more. */
  private tooLargeAnswered = false;
  /** Why the channel closed for good (`stop`, `fail`): actions sent from then on fail with it. */
  private closedReason: string | null = null;
  private attempt = 0;
  /** The clientSeqs reported stored: a poll and the POST's answer may both say so. */
  private readonly storedReported = new Set<number>();
  private reconnectTimer: number | undefined;
  private poll: LongPoll | null = null;
  /** Polling transports replaced by the socket whose POST may still be out: `stop` and `fail`
   * cancel it (and its timer) too. Pruned of idle ones as more are added. */
  private readonly retiredPolls = new Set<LongPoll>();
  /** What each poll loop (one per polling transport) reads of the channel and hands back. */
  private readonly pollHost: PollLoopHost = {
    polling: (poll) => this.poll === poll && !this.stopped,
    token: () => this.tokens.current(),
    cursors: () => ({ fromSeq: this.streamCursor, sinceSequence: this.eventCursor }),
    subscribed: () => this.subscribed,
    unsubscribe: () => this.unbind(),
    applyServerFrame: (frame) => this.onServerFrame(frame),
    reconnecting: (detail) => this.report('reconnecting', detail),
    tokenRefused: (token) => this.tokens.swapRefused(token),
    tokenMissing: () => this.tokens.swapMissing(),
  };
  /** While polling, the client frames and the actions of `unacked` still to be POSTed. */
  private readonly postQueue = new PostQueue<PendingAction>({
    poll: () => this.poll,
    subscribed: () => this.subscribed,
    stopped: () => this.stopped,
    token: () => this.tokens.current(),
    unacked: (clientSeq) => this.unacked.get(clientSeq),
    applyServerFrame: (frame) => this.onServerFrame(frame),
    stored: (clientSeq, answer) => this.settleStored(clientSeq, answer),
    deliverFrame: (frame) => this.options.onFrame(frame),
    refused: (pending, error) => this.onRefused(pending, error),
    sendAgainAfter: (pending, delayMs) => this.sendAgainAfter(pending, delayMs),
    sendNow: (pending) => this.transmitAction(pending),
    tokenRefused: (token) => this.tokens.swapRefused(token),
  });
  /** While polling, whether the WebSocket works again. */
  private readonly probes = new SocketProbes({
    url: () => this.options.url,
    stopped: () => this.stopped,
    polling: () => this.poll !== null,
    answered: () => this.backToSocket(),
  });
  /** The subscribe and its answers before the ack, and the heartbeat of a subscribed socket. */
  private readonly subscription: Subscription;

  constructor(private readonly options: LiveSocketOptions) {
    this.tokens = new ChannelTokens(options, {
      stopped: () => this.stopped,
      subscribed: () => this.subscribed,
      reconnecting: (detail) => this.report('reconnecting', detail),
      live: () => this.report('live'),
      fail: (detail) => this.fail(detail),
      closeSocket: () => this.detach(1000),
      connect: () => this.connect(),
    });
    this.subscription = new Subscription(this.tokens, {
      sessionId: options.sessionId,
      appId: options.appId,
      socket: () => this.ws,
      polling: () => this.poll !== null,
      subscribed: () => this.subscribed,
      cursors: () => ({ fromSeq: this.streamCursor, sinceSequence: this.eventCursor }),
      acked: (ack) => this.acked(ack),
      rebuildStreams: () => this.rebuildStreams(),
      steady: () => {
        this.probes.resetBackoff();
        this.attempt = 0;
      },
      unbound: () => this.unbind(),
      firstAttempt: () => {
        if (this.attempt !== 0) return false;
        this.attempt = 1;
        return true;
      },
      retryAfter: (delayOf, detail) => {
        this.detach(1000);
        this.scheduleReconnect(delayOf, detail);
      },
      reconnecting: (detail) => this.report('reconnecting', detail),
      fail: (detail) => this.fail(detail),
      drop: () => this.drop(),
      ping: () => this.send({ type: 'ping' }),
    });
    this.eventCursor = options.lastSequence ?? 0;
    // Unique across mounts of the same session (a reload, a second card): the server treats a
    // repeated clientSeq as a duplicate, so a counter restarting at 1 would lose actions.
    this.nextClientSeq = Date.now() * 1000 + Math.floor(Math.random() * 1000);
    window.addEventListener('online', this.onOnline);
    window.addEventListener('offline', this.onOffline);
  }

  start(): void {
    if (this.options.url) this.connect();
    else if (this.options.pollingUrl) this.startPolling();
    else this.fail('this card has neither a live-channel address (wsUrl) nor a pollingUrl');
  }

  get transport(): LiveTransport {
    if (this.stopped) return 'closed';
    return this.poll ? 'polling' : 'websocket';
  }

  /**
   * Queues one `data:submit`; it is sent now or after the next subscribe, until stored or given
   * up. One the server would refuse unread (too large, a NUL), or sent after the channel closed
   * for good, fails at once (`onActionFailed`, after this returns).
   */
  sendAction(action: string, data: unknown, uiContext: JsonObject | undefined): number {
    const clientSeq = this.nextClientSeq++;
    const envelope: ActionEnvelope = {
      sessionId: this.options.sessionId,
      type: 'data:submit',
      payload: data === undefined ? { action } : { action, data },
      clientSeq,
      ...(uiContext ? { uiContext } : {}),
    };
    const refusal: ErrorPayload | null =
      this.closedReason !== null
        ? { code: 'NOT_CONNECTED', message: this.closedReason }
        : refusalBeforeSending({ type: 'action', payload: envelope });
    if (refusal) {
      queueMicrotask(() => this.options.onActionFailed(envelope, { ...refusal, clientSeq }));
      return clientSeq;
    }
    const pending: PendingAction = { envelope, refusals: 0, unanswered: 0, retryTimer: undefined };
    this.unacked.set(clientSeq, pending);
    if (this.subscribed) this.transmitAction(pending);
    return clientSeq;
  }

  /** Sends a frame if the socket is subscribed; callers re-send their state on every ack. A
   * frame the server would refuse unread is not sent (false). */
  send(frame: Frame): boolean {
    if (!this.subscribed) return false;
    const text = JSON.stringify(frame);
    const refusal = refusalBeforeSending(frame, text);
    if (refusal) {
      console.warn(`[svc] a ${frame.type} frame was not sent: ${refusal.code}: ${refusal.message}`);
      return false;
    }
    if (this.poll) return this.postQueue.send(frame);
    if (!this.ws) return false;
    this.ws.send(text);
    return true;
  }

  get pendingActions(): number {
    return this.unacked.size;
  }

  /** Closes the channel for good; actions not yet stored fail with `NOT_CONNECTED` and `reason`.
   * Once closed (stopped or failed), it reports nothing more. */
  stop(reason = 'the card was closed'): void {
    if (this.stopped) return;
    this.closeTransports();
    this.abandonActions(reason);
    this.options.onStatus('closed');
  }

  private connect(): void {
    if (this.stopped) return;
    if (this.poll) return; // polling runs until a probe finds the socket working again
    if (!this.options.url) {
      this.startPolling();
      return;
    }
    window.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    // One socket at a time: a connect while one is open (a refreshed token arriving after
    // `online` reconnected) replaces it rather than leaving it open and heard.
    this.detach(1000);
    this.tooLargeAnswered = false;
    this.report(this.attempt === 0 && !this.tokens.hasSessionToken() ? 'connecting' : 'reconnecting');
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.options.url);
    } catch (error) {
      // Some browsers throw at once when a CSP forbids the address.
      if (this.options.pollingUrl) this.startPolling();
      else this.fail(`cannot open ${this.options.url}: ${String(error)}`);
      return;
    }
    this.ws = ws;
    const closed = (code: number): void => {
      if (this.ws !== ws) return; // already dropped
      this.subscription.closed();
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      this.onClose(code);
    };
    ws.onopen = () => {
      this.subscription.heard();
      this.subscription.subscribe(ws);
    };
    ws.onmessage = (event) => this.onMessage(event);
    ws.onclose = (event) => closed(event.code);
    // A socket refused before opening (a CSP connect-src block) gets `error` and no `close`.
    ws.onerror = () => {
      if (ws.readyState === WebSocket.CLOSED) closed(1006);
    };
    // A connection that neither opens nor fails (a black-holed network) is abandoned.
    this.subscription.awaitAck(ws);
  }

  private onMessage(event: MessageEvent): void {
    this.subscription.heard();
    if (typeof event.data !== 'string') return;
    let frame: Frame;
    try {
      const parsed: unknown = JSON.parse(event.data);
      if (!isObject(parsed) || typeof parsed.type !== 'string') return;
      frame = parsed as unknown as Frame;
    } catch {
      return;
    }
    this.onServerFrame(frame);
  }

  /** One server frame, from the socket or from a poll answer. */
  private onServerFrame(frame: Frame): void {
    if (!this.subscribed) {
      this.subscription.beforeAck(frame);
      return;
    }
    switch (frame.type) {
      case 'pong':
        return;
      case 'system':
        this.onSystem(isObject(frame.payload) ? (frame.payload as SystemPayload) : {});
        this.options.onFrame(frame);
        return;
      case 'error':
        this.onError(isObject(frame.payload) ? (frame.payload as ErrorPayload) : {});
        return;
      case 'data': {
        const envelope = frame.payload as StreamEnvelope | undefined;
        if (!envelope || typeof envelope.seq !== 'number') return;
        // Replays overlap the live tail after a reconnect: apply every seq exactly once.
        if (envelope.seq <= this.streamCursor) return;
        this.streamCursor = envelope.seq;
        this.options.onFrame(frame);
        return;
      }
      case 'render_event': {
        const sequence = isObject(frame.payload) ? frame.payload.sequence : undefined;
        if (typeof sequence === 'number') {
          if (sequence <= this.eventCursor) return;
          this.eventCursor = sequence;
        }
        this.options.onFrame(frame);
        return;
      }
      default:
        this.options.onFrame(frame);
    }
  }

  /** The subscribe's `ack`: the channel is live, and what it holds back goes out. */
  private acked(ack: AckPayload): void {
    this.subscribed = true;
    this.tokens.acked(ack.sessionToken);
    if (ack.replay?.gap && streamsLost(ack.replay.lost)) this.rebuildStreams();
    // Over polling there is no heartbeat, and the poll loop keeps its own backoff.
    if (!this.poll) this.subscription.keepAlive();
    // Frames queued for an earlier POST session are stale: the host context is echoed again
    // (from `onAck`) and the actions are queued again below, in order.
    this.postQueue.clear();
    this.report('live');
    this.options.onAck(ack);
    // Not one whose POST is still out: its answer may store it (`post-queue.ts` sends it if not).
    for (const pending of this.unacked.values()) {
      if (pending.retryTimer === undefined && !pending.posting) this.transmitAction(pending);
    }
  }

  /** Nothing is subscribed, so nothing sent is still in flight on the transport. */
  private unbind(): void {
    this.subscribed = false;
    this.inflight = [];
  }

  private rebuildStreams(): void {
    this.streamCursor = 0;
    this.options.onReplayGap();
  }

  private onSystem(system: SystemPayload): void {
    if (system.event === 'action_stored' && typeof system.clientSeq === 'number') {
      this.settleStored(system.clientSeq, system);
      if (typeof system.sequence === 'number' && system.sequence > this.eventCursor) {
        this.eventCursor = system.sequence;
      }
    } else if (system.event === 'replay_gap') {
      if (streamsLost(system.lost)) this.rebuildStreams();
    } else if (system.event === 'lagged') {
      // The server dropped live frames for this socket: resubscribe from our cursor to refill.
      this.detach(1000);
      this.connect();
    }
  }

  /** The action `clientSeq` is stored (`answer`): it leaves the queue, and the card hears it once. */
  private settleStored(clientSeq: number, answer: SystemPayload): void {
    window.clearTimeout(this.unacked.get(clientSeq)?.retryTimer);
    this.unacked.delete(clientSeq);
    this.inflight = this.inflight.filter((seq) => seq !== clientSeq);
    if (this.storedReported.has(clientSeq)) return;
    this.storedReported.add(clientSeq);
    this.options.onActionStored?.(clientSeq, typeof answer.actionId === 'string' ? answer.actionId : '', answer.duplicate === true);
  }

  private onError(error: ErrorPayload): void {
    const code = error.code ?? 'ERROR';
    if (TERMINAL_ERRORS.has(code)) {
      this.fail(errorDetail(code, error));
      return;
    }
    // The card still shows the error (its notice ends at the next ack).
    if (this.subscription.subscribeAgainIfLost(error)) {
      this.options.onFrame({ type: 'error', payload: error });
      return;
    }
    if (code === 'FRAME_TOO_LARGE') this.tooLargeAnswered = true;
    if (typeof error.clientSeq === 'number') {
      // An action given up already (or never ours) needs nothing more.
      const pending = this.unacked.get(error.clientSeq);
      if (pending) this.onRefused(pending, error);
      return;
    }
    // The socket answers frames in order, so a refusal without a clientSeq belongs to the oldest
    // action still unanswered on it.
    const oldest = ACTION_REFUSALS_WITHOUT_SEQ.has(code) ? this.inflight[0] : undefined;
    const pending = oldest === undefined ? undefined : this.unacked.get(oldest);
    if (pending) {
      this.onRefused(pending, { ...error, clientSeq: pending.envelope.clientSeq }, true);
      return;
    }
    this.options.onFrame({ type: 'error', payload: error });
  }

  /**
   * The server did not store `pending`: it is sent again after the wait, or given up. `guessed`:
   * the refusal named no clientSeq and was given to this action by order; it may have answered
   * another frame (the flood gate refuses any), so it does not count toward giving the action up.
   */
  private onRefused(pending: PendingAction, error: ErrorPayload, guessed = false): void {
    const clientSeq = pending.envelope.clientSeq;
    if (this.unacked.get(clientSeq) !== pending) return; // settled already: reported once
    this.inflight = this.inflight.filter((seq) => seq !== clientSeq);
    const verdict = judgeRefusal(error, pending.refusals);
    if (verdict.retry) {
      if (!guessed) pending.refusals += 1;
      this.sendAgainAfter(pending, verdict.delayMs);
      return;
    }
    window.clearTimeout(pending.retryTimer);
    this.unacked.delete(clientSeq);
    this.options.onActionFailed(pending.envelope, { ...verdict.error, clientSeq });
  }

  /** Sends `pending` again after `delayMs` (or at the next ack, if the channel is down then). */
  private sendAgainAfter(pending: PendingAction, delayMs: number): void {
    window.clearTimeout(pending.retryTimer);
    pending.retryTimer = window.setTimeout(() => {
      pending.retryTimer = undefined;
      if (this.unacked.get(pending.envelope.clientSeq) === pending) this.transmitAction(pending);
    }, delayMs);
  }

  private transmitAction(pending: PendingAction): void {
    if (!this.subscribed || this.stopped) return;
    const clientSeq = pending.envelope.clientSeq;
    if (this.poll) {
      this.postQueue.sendAction(clientSeq);
      return;
    }
    if (!this.ws) return;
    if (!this.inflight.includes(clientSeq)) this.inflight.push(clientSeq);
    this.ws.send(JSON.stringify({ type: 'action', payload: pending.envelope }));
  }

  /** Every action not yet stored fails with `NOT_CONNECTED`; later ones fail at once. */
  private abandonActions(reason: string): void {
    this.closedReason ??= reason;
    const abandoned = [...this.unacked.values()];
    this.unacked.clear();
    this.inflight = [];
    this.postQueue.clear();
    for (const pending of abandoned) {
      window.clearTimeout(pending.retryTimer);
      this.options.onActionFailed(pending.envelope, { code: 'NOT_CONNECTED', message: this.closedReason, clientSeq: pending.envelope.clientSeq });
    }
  }

  private onClose(code: number): void {
    const beforeAck = !this.subscribed;
    // Closed for a frame too large without the `FRAME_TOO_LARGE` frame first: as with it, the
    // oldest action unanswered is the one, and it must not be sent again after the reconnect.
    const oldest = code === 1009 && !this.tooLargeAnswered ? this.inflight[0] : undefined;
    const tooLarge = oldest === undefined ? undefined : this.unacked.get(oldest);
    if (tooLarge) this.onRefused(tooLarge, { code: 'FRAME_TOO_LARGE', message: 'the server closed the channel (1009): a frame was too large', clientSeq: oldest });
    this.subscription.ended();
    this.ws = null;
    this.unbind();
    if (this.stopped) return;
    // A socket that never gets to its ack while the network is up is blocked somewhere (a CSP,
    // a proxy without WebSocket support): after a second such socket, poll over HTTP instead.
    if (beforeAck && navigator.onLine !== false && this.options.pollingUrl && this.subscription.failedBeforeAck()) {
      this.startPolling();
      return;
    }
    const floorMs = SLOW_DOWN_CODES.has(code) ? 5000 : 0;
    this.scheduleReconnect((attempt) => reconnectDelay(attempt, floorMs));
  }

  // ---------- the polling transport ----------

  private startPolling(): void {
    if (this.stopped || this.poll || !this.options.pollingUrl) return;
    this.detach(1000);
    window.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const poll = new LongPoll(this.options.pollingUrl);
    this.poll = poll;
    this.subscribed = false;
    this.options.onTransport?.('polling');
    this.report('reconnecting', 'the WebSocket is blocked; polling over HTTP');
    this.probes.schedule();
    void new PollLoop(poll, this.pollHost).run();
  }

  // ---------- back from polling to the WebSocket ----------

  /**
   * A probe found the socket working again (socket-probe.ts): polling ends (its GET in flight is
   * abandoned; a POST out is not, since what it answers of its action still counts) and the card
   * subscribes with the same session token and cursors.
   */
  private backToSocket(): void {
    const poll = this.poll;
    this.poll = null;
    poll?.abortPolls();
    for (const retired of this.retiredPolls) if (!retired.busy) this.retiredPolls.delete(retired);
    if (poll?.busy) this.retiredPolls.add(poll);
    this.unbind();
    this.subscription.pathWorks();
    this.attempt = 0;
    this.options.onTransport?.('websocket');
    this.connect();
  }

  /** Abandons the current socket at once (its close handshake may never finish offline). */
  private drop(): void {
    const ws = this.ws;
    this.detach(4000);
    if (ws) this.onClose(1006);
  }

  private detach(code: number): void {
    const ws = this.ws;
    if (!ws) return;
    ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
    try {
      ws.close(code);
    } catch {
      // Already closing.
    }
    this.ws = null;
    this.unbind();
    this.subscription.ended();
  }

  /** Connects again after `delayOf(attempt)`, the attempt counting up until a socket stays up. */
  private scheduleReconnect(delayOf: (attempt: number) => number, detail?: string): void {
    if (this.stopped || this.reconnectTimer !== undefined) return;
    this.report('reconnecting', detail);
    const delay = delayOf(this.attempt++);
    this.reconnectTimer = window.setTimeout(() => {
      this.reconnectTimer = undefined;
      if (navigator.onLine === false) return; // `online` reconnects
      this.connect();
    }, delay);
  }

  private fail(detail: string): void {
    if (this.stopped) return; // a refresh answered after `stop`: the channel said `closed` already
    this.closeTransports();
    this.abandonActions(`the live channel closed: ${detail}`);
    this.options.onStatus('failed', detail);
  }

  /** A status while the channel is open; once it closed, `closed` or `failed` was the last. */
  private report(status: LiveStatus, detail?: string): void {
    if (!this.stopped) this.options.onStatus(status, detail);
  }

  /** Ends both transports for good (`stop`, `fail`). The polling one too: `send` then refuses
   * every frame (none is queued or answered) and `transport` says closed. */
  private closeTransports(): void {
    this.stopped = true;
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('offline', this.onOffline);
    window.clearTimeout(this.reconnectTimer);
    this.probes.cancel();
    this.subscription.cancelSteady();
    this.detach(1000);
    this.poll?.abort();
    this.poll = null;
    for (const retired of this.retiredPolls) retired.abort();
    this.retiredPolls.clear();
    this.subscribed = false;
    this.options.onTransport?.('closed');
  }

  private readonly onOnline = (): void => {
    if (this.stopped || this.ws || this.poll) return;
    window.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.attempt = 0;
    this.connect();
  };

  private readonly onOffline = (): void => {
    if (this.stopped || this.poll) return;
    this.drop();
  };
}
