// The /ws client: subscribe, keep the resume cursors and the session token, reconnect with
// backoff, heartbeat, and deliver every action at least once (the server dedups by clientSeq).
// When the WebSocket cannot connect it falls back to `pollingUrl` (the same frames over HTTP
// long-poll, `long-poll.ts`), resuming with the same session token and cursors; while polling it
// probes the WebSocket now and then, and goes back to it once the server answers there.

import { reconnectDelay } from './backoff';
import { LONG_POLL_WAIT_SECONDS, LongPoll } from './long-poll';
import {
  PROTOCOL_VERSION,
  isObject,
  type AckPayload,
  type ActionEnvelope,
  type ErrorPayload,
  type Frame,
  type JsonObject,
  type StreamEnvelope,
  type SubscribePayload,
  type SystemPayload,
} from './protocol';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'failed' | 'closed';
export type LiveTransport = 'websocket' | 'polling';

/** Consecutive sockets that closed before their ack (while online) before polling takes over. */
const FALLBACK_AFTER_FAILED_SOCKETS = 2;
/** Client frames the polling transport carries (the rest only mean something on a socket). */
const POSTABLE = new Set(['action', 'host_context_observed']);

const PING_INTERVAL_MS = 20_000;
/** Time for a socket to open and answer the subscribe before it is abandoned. */
const CONNECT_TIMEOUT_MS = 15_000;
/** The server answers our ping within the interval; silence this long means a dead socket. */
const SILENCE_LIMIT_MS = 50_000;
/** Close codes after which the server asked us to slow down (1008 policy, 1013 try later). */
const SLOW_DOWN_CODES = new Set([1008, 1013]);
/** First WebSocket probe after polling took over; each failed probe doubles it, up to the cap. */
const PROBE_FIRST_MS = 5_000;
const PROBE_CAP_MS = 300_000;
/** A probe socket must answer its `ping` within this. */
const PROBE_TIMEOUT_MS = 5_000;
/** Errors that end the session for this card: no reconnect can fix them. */
const TERMINAL_ERRORS = new Set(['UNSUPPORTED_VERSION', 'SESSION_EXPIRED']);

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
  onActionRejected(action: ActionEnvelope, error: ErrorPayload): void;
  /** The server stored the action sent with `clientSeq` (it reaches the agent's svc_consume). */
  onActionStored?(clientSeq: number, actionId: string, duplicate: boolean): void;
  /** A fresh wsToken (from `svc_runtime_refresh_ws_token` through the host), or null. */
  refreshWsToken?(): Promise<string | null>;
  /** The transport changed (the socket is blocked: polling took over; it answers again: back). */
  onTransport?(transport: LiveTransport): void;
}

export class LiveSocket {
  private ws: WebSocket | null = null;
  private subscribed = false;
  private stopped = false;
  private sessionToken: string | undefined;
  private wsToken: string | undefined;
  /** Highest stream envelope seq applied: the `fromSeq` of the next subscribe. */
  private streamCursor = 0;
  /** Highest session event sequence seen: the `sinceSequence` of the next subscribe. */
  private eventCursor: number;
  private nextClientSeq: number;
  /** Actions not yet acknowledged as stored, in clientSeq order. */
  private readonly unacked = new Map<number, ActionEnvelope>();
  /** clientSeqs sent on the current socket and still unanswered, in send order. */
  private inflight: number[] = [];
  private attempt = 0;
  /** A refused wsToken is swapped once per successful subscribe, not in a loop. */
  private tokenRefreshed = false;
  private reconnectTimer: number | undefined;
  private connectTimer: number | undefined;
  private heartbeatTimer: number | undefined;
  private lastHeard = 0;
  /** Sockets in a row that closed before their ack; polling takes over at the threshold. */
  private failedSockets = 0;
  private poll: LongPoll | null = null;
  /** The session revision of the last poll answer; undefined asks for an `ack`. */
  private pollRevision: number | undefined;
  /** A POST of an action failed: every unacknowledged action is sent again when this fires. */
  private actionRetryTimer: number | undefined;
  private actionRetries = 0;
  /** While polling: the next WebSocket probe, and how many probes failed since polling began. */
  private probeTimer: number | undefined;
  private probeFailures = 0;
  /** Resets the probe backoff once a socket has stayed up for a while. */
  private steadyTimer: number | undefined;

  constructor(private readonly options: LiveSocketOptions) {
    this.wsToken = options.wsToken;
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
    return this.poll ? 'polling' : 'websocket';
  }

  /** Queues one `data:submit`; it is sent now or after the next subscribe, until stored. */
  sendAction(action: string, data: unknown, uiContext: JsonObject | undefined): number {
    const clientSeq = this.nextClientSeq++;
    const envelope: ActionEnvelope = {
      sessionId: this.options.sessionId,
      type: 'data:submit',
      payload: data === undefined ? { action } : { action, data },
      clientSeq,
      ...(uiContext ? { uiContext } : {}),
    };
    this.unacked.set(clientSeq, envelope);
    if (this.subscribed) this.transmitAction(envelope);
    return clientSeq;
  }

  /** Sends a frame if the socket is subscribed; callers re-send their state on every ack. */
  send(frame: Frame): boolean {
    if (!this.subscribed) return false;
    if (this.poll) return this.sendByPost(frame);
    if (!this.ws) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  get pendingActions(): number {
    return this.unacked.size;
  }

  stop(): void {
    this.stopped = true;
    window.removeEventListener('online', this.onOnline);
    window.removeEventListener('offline', this.onOffline);
    window.clearTimeout(this.reconnectTimer);
    this.detach(1000);
    this.poll?.abort();
    window.clearTimeout(this.actionRetryTimer);
    window.clearTimeout(this.probeTimer);
    window.clearTimeout(this.steadyTimer);
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
    this.options.onStatus(this.attempt === 0 && this.sessionToken === undefined ? 'connecting' : 'reconnecting');
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
      window.clearTimeout(this.connectTimer);
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      this.onClose(code);
    };
    ws.onopen = () => {
      this.lastHeard = Date.now();
      ws.send(JSON.stringify({ type: 'subscribe', payload: this.subscribePayload() }));
    };
    ws.onmessage = (event) => this.onMessage(event);
    ws.onclose = (event) => closed(event.code);
    // A socket refused before opening (a CSP connect-src block) gets `error` and no `close`.
    ws.onerror = () => {
      if (ws.readyState === WebSocket.CLOSED) closed(1006);
    };
    // A connection that neither opens nor fails (a black-holed network) is abandoned.
    window.clearTimeout(this.connectTimer);
    this.connectTimer = window.setTimeout(() => {
      if (this.ws === ws && !this.subscribed) this.drop();
    }, CONNECT_TIMEOUT_MS);
  }

  private subscribePayload(): SubscribePayload {
    const { sessionId, appId } = this.options;
    return {
      sessionId,
      ...(appId ? { appId } : {}),
      ...(this.sessionToken ? { sessionToken: this.sessionToken } : this.wsToken ? { wsToken: this.wsToken } : {}),
      fromSeq: this.streamCursor,
      sinceSequence: this.eventCursor,
      role: 'user',
      supportedVersions: [PROTOCOL_VERSION],
    };
  }

  private onMessage(event: MessageEvent): void {
    this.lastHeard = Date.now();
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
      this.beforeAck(frame);
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

  private beforeAck(frame: Frame): void {
    if (frame.type === 'ack') {
      const ack = (isObject(frame.payload) ? frame.payload : {}) as unknown as AckPayload;
      this.subscribed = true;
      this.attempt = 0;
      this.failedSockets = 0;
      this.tokenRefreshed = false;
      if (ack.sessionToken) this.sessionToken = ack.sessionToken;
      if (ack.replay?.gap) this.rebuildStreams();
      if (!this.poll) {
        this.startHeartbeat();
        // A socket that stays up a heartbeat proves the path; one that drops sooner keeps the
        // probe backoff where it was, so a flapping path is not switched to every few seconds.
        window.clearTimeout(this.steadyTimer);
        this.steadyTimer = window.setTimeout(() => {
          if (this.subscribed && !this.poll) this.probeFailures = 0;
        }, PING_INTERVAL_MS);
      }
      this.options.onStatus('live');
      this.options.onAck(ack);
      for (const envelope of this.unacked.values()) this.transmitAction(envelope);
      return;
    }
    if (frame.type === 'system' && isObject(frame.payload) && frame.payload.event === 'replay_gap') {
      this.rebuildStreams();
      return;
    }
    if (frame.type !== 'error') return;
    const error = (isObject(frame.payload) ? frame.payload : {}) as ErrorPayload;
    const code = error.code ?? 'ERROR';
    if (code === 'AUTH_FAILED' && this.sessionToken) {
      // The session token is refused (expired, or a rotated secret): fall back to the wsToken.
      this.sessionToken = undefined;
      this.detach(1000);
      this.connect();
      return;
    }
    if (code === 'AUTH_FAILED' && this.options.refreshWsToken && !this.tokenRefreshed) {
      // Most likely an expired wsToken (a card reopened later): ask the host for a fresh one.
      this.tokenRefreshed = true;
      this.detach(1000);
      this.options.onStatus('reconnecting', 'refreshing the live-channel token');
      this.options.refreshWsToken().then(
        (token) => {
          if (!token) {
            this.fail(`${code}: the wsToken was refused and no fresh one is available`);
            return;
          }
          this.wsToken = token;
          this.connect();
        },
        (refresh: unknown) => this.fail(`${code}: the wsToken was refused and refreshing it failed (${refresh instanceof Error ? refresh.message : String(refresh)})`),
      );
      return;
    }
    if (code === 'AUTH_FAILED' || TERMINAL_ERRORS.has(code)) {
      this.fail(`${code}${error.message ? `: ${error.message}` : ''}`);
      return;
    }
    if (code === 'NOT_SUBSCRIBED' && this.ws?.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify({ type: 'subscribe', payload: this.subscribePayload() }));
    }
  }

  private rebuildStreams(): void {
    this.streamCursor = 0;
    this.options.onReplayGap();
  }

  private onSystem(system: SystemPayload): void {
    if (system.event === 'action_stored' && typeof system.clientSeq === 'number') {
      const clientSeq = system.clientSeq;
      this.unacked.delete(clientSeq);
      this.inflight = this.inflight.filter((seq) => seq !== clientSeq);
      this.options.onActionStored?.(clientSeq, typeof system.actionId === 'string' ? system.actionId : '', system.duplicate === true);
      if (typeof system.sequence === 'number' && system.sequence > this.eventCursor) {
        this.eventCursor = system.sequence;
      }
    } else if (system.event === 'replay_gap') {
      this.rebuildStreams();
    } else if (system.event === 'lagged') {
      // The server dropped live frames for this socket: resubscribe from our cursor to refill.
      this.detach(1000);
      this.connect();
    }
  }

  private onError(error: ErrorPayload): void {
    const code = error.code ?? 'ERROR';
    if (code === 'CONTRACT_VIOLATION') {
      // Actions are answered in order; an error without a clientSeq belongs to the oldest one.
      const clientSeq = typeof error.clientSeq === 'number' ? error.clientSeq : this.inflight[0];
      if (clientSeq === undefined) return;
      this.inflight = this.inflight.filter((seq) => seq !== clientSeq);
      const action = this.unacked.get(clientSeq);
      this.unacked.delete(clientSeq);
      if (action) this.options.onActionRejected(action, error);
      return;
    }
    if (TERMINAL_ERRORS.has(code)) {
      this.fail(`${code}${error.message ? `: ${error.message}` : ''}`);
      return;
    }
    this.options.onFrame({ type: 'error', payload: error });
  }

  private transmitAction(envelope: ActionEnvelope): void {
    if (!this.subscribed || (!this.ws && !this.poll)) return;
    if (!this.inflight.includes(envelope.clientSeq)) this.inflight.push(envelope.clientSeq);
    const frame: Frame = { type: 'action', payload: envelope };
    if (this.poll) this.sendByPost(frame);
    else this.ws?.send(JSON.stringify(frame));
  }

  private startHeartbeat(): void {
    window.clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = window.setInterval(() => {
      if (Date.now() - this.lastHeard > SILENCE_LIMIT_MS) {
        this.drop();
        return;
      }
      this.send({ type: 'ping' });
    }, PING_INTERVAL_MS);
  }

  private onClose(code: number): void {
    const beforeAck = !this.subscribed;
    this.ws = null;
    this.subscribed = false;
    this.inflight = [];
    window.clearInterval(this.heartbeatTimer);
    window.clearTimeout(this.connectTimer);
    if (this.stopped) return;
    // A socket that never gets to its ack while the network is up is blocked somewhere (a CSP,
    // a proxy without WebSocket support): after a second such socket, poll over HTTP instead.
    if (beforeAck && navigator.onLine !== false && this.options.pollingUrl) {
      this.failedSockets += 1;
      if (this.failedSockets >= FALLBACK_AFTER_FAILED_SOCKETS) {
        this.startPolling();
        return;
      }
    }
    this.scheduleReconnect(SLOW_DOWN_CODES.has(code) ? 5000 : 0);
  }

  // ---------- the polling transport ----------

  private startPolling(): void {
    if (this.stopped || this.poll || !this.options.pollingUrl) return;
    this.detach(1000);
    window.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.poll = new LongPoll(this.options.pollingUrl);
    this.subscribed = false;
    this.pollRevision = undefined;
    this.attempt = 0;
    this.options.onTransport?.('polling');
    this.options.onStatus('reconnecting', 'the WebSocket is blocked; polling over HTTP');
    this.scheduleProbe();
    void this.pollLoop();
  }

  // ---------- back from polling to the WebSocket ----------

  private scheduleProbe(): void {
    if (this.stopped || !this.options.url) return;
    window.clearTimeout(this.probeTimer);
    const delay = Math.min(PROBE_CAP_MS, PROBE_FIRST_MS * 2 ** Math.min(this.probeFailures, 10));
    this.probeTimer = window.setTimeout(() => {
      this.probeTimer = undefined;
      void this.probe();
    }, delay);
  }

  /**
   * Opens a WebSocket and pings it (the server answers `ping` before any subscribe): a `pong`
   * proves the whole path works, which an `open` alone does not behind some proxies. Then
   * polling stops and the card subscribes on a socket again; otherwise the next probe waits
   * longer.
   */
  private async probe(): Promise<void> {
    if (this.stopped || !this.poll || !this.options.url) return;
    const answered = await new Promise<boolean>((resolve) => {
      let ws: WebSocket;
      try {
        ws = new WebSocket(this.options.url!);
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
    if (this.stopped || !this.poll) return;
    if (!answered) {
      this.probeFailures += 1;
      this.scheduleProbe();
      return;
    }
    // The socket works again: polling ends (its GET in flight is abandoned) and the card
    // subscribes with the same session token and cursors. A path that answers pings but fails
    // subscribes would bring polling back; counting the switch keeps such flapping slow.
    this.probeFailures += 1;
    const poll = this.poll;
    this.poll = null;
    poll.abort();
    this.subscribed = false;
    this.inflight = [];
    this.pollRevision = undefined;
    this.failedSockets = 0;
    this.attempt = 0;
    this.options.onTransport?.('websocket');
    this.connect();
  }

  /** GET after GET while the mount lives: the first (and any after a refusal) brings an `ack`. */
  private async pollLoop(): Promise<void> {
    const poll = this.poll;
    // Ends when the mount stops or the WebSocket took over again (`this.poll` changed).
    while (poll && this.poll === poll && !this.stopped) {
      const token = this.sessionToken ?? this.wsToken;
      if (!token) {
        this.fail('the card has no token for the live channel');
        return;
      }
      if (navigator.onLine === false) {
        await this.pause(1000);
        continue;
      }
      const result = await poll.get({
        token,
        fromSeq: this.streamCursor,
        sinceSequence: this.eventCursor,
        wait: this.subscribed ? LONG_POLL_WAIT_SECONDS : 0,
        ...(this.subscribed && this.pollRevision !== undefined ? { revision: this.pollRevision } : {}),
      });
      if (this.stopped || this.poll !== poll) return;
      if (result.kind === 'refused') {
        if (!(await this.onPollRefused())) return;
        continue;
      }
      if (result.kind === 'failed') {
        if (this.subscribed) {
          this.subscribed = false;
          this.inflight = [];
        }
        this.options.onStatus('reconnecting', `polling failed: ${result.detail}`);
        await this.pause(reconnectDelay(this.attempt++));
        continue;
      }
      this.attempt = 0;
      for (const frame of result.frames) this.onServerFrame(frame);
      if (typeof result.cursors.revision === 'number') this.pollRevision = result.cursors.revision;
    }
  }

  /** Sends every unacknowledged action again soon (the server deduplicates by clientSeq). */
  private retryActions(): void {
    if (this.actionRetryTimer !== undefined || this.stopped) return;
    this.actionRetryTimer = window.setTimeout(() => {
      this.actionRetryTimer = undefined;
      // Not subscribed: the next ack sends them.
      if (this.stopped || !this.poll || !this.subscribed) return;
      for (const envelope of this.unacked.values()) this.transmitAction(envelope);
    }, reconnectDelay(this.actionRetries++));
  }

  /** The token was refused: the session token falls back to the wsToken, which may be refreshed once. */
  private async onPollRefused(): Promise<boolean> {
    this.subscribed = false;
    this.pollRevision = undefined;
    if (this.sessionToken) {
      this.sessionToken = undefined;
      return true;
    }
    if (this.options.refreshWsToken && !this.tokenRefreshed) {
      this.tokenRefreshed = true;
      this.options.onStatus('reconnecting', 'refreshing the live-channel token');
      const token = await this.options.refreshWsToken().catch(() => null);
      if (token) {
        this.wsToken = token;
        return !this.stopped;
      }
    }
    this.fail('AUTH_FAILED: the live-channel token was refused');
    return false;
  }

  /** POSTs one client frame; the answer's frames are applied like the socket's. */
  private sendByPost(frame: Frame): boolean {
    const poll = this.poll;
    if (!poll) return false;
    if (frame.type === 'channel_subscribe') {
      // Tool channels are polled by the server per socket; the HTTP fallback has none.
      const channel = typeof frame.payload === 'string' ? frame.payload : isObject(frame.payload) ? String(frame.payload.channel ?? '') : '';
      this.options.onFrame({
        type: 'channel_error',
        payload: { channel, code: 'TRANSPORT_UNSUPPORTED', message: 'tool channels need the WebSocket, which this host blocks' },
      });
      return true;
    }
    if (!POSTABLE.has(frame.type)) return true; // ping, channel_unsubscribe: nothing to carry
    const token = this.sessionToken ?? this.wsToken;
    if (!token) return false;
    void poll.post(token, frame).then((result) => {
      if (this.stopped || this.poll !== poll) return;
      if (result.kind === 'ok') {
        if (frame.type === 'action') this.actionRetries = 0;
        for (const answer of result.frames) this.onServerFrame(answer);
      } else if (frame.type === 'action') {
        // Still unacknowledged: sent again with backoff, not after the long poll's wait.
        this.retryActions();
      }
    });
    return true;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => window.setTimeout(resolve, ms));
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
    this.subscribed = false;
    this.inflight = [];
    window.clearInterval(this.heartbeatTimer);
    window.clearTimeout(this.connectTimer);
  }

  private scheduleReconnect(floorMs: number): void {
    if (this.stopped || this.reconnectTimer !== undefined) return;
    this.options.onStatus('reconnecting');
    const delay = reconnectDelay(this.attempt++, floorMs);
    this.reconnectTimer = window.setTimeout(() => {
      this.reconnectTimer = undefined;
      if (navigator.onLine === false) return; // `online` reconnects
      this.connect();
    }, delay);
  }

  private fail(detail: string): void {
    this.stopped = true;
    window.clearTimeout(this.reconnectTimer);
    this.detach(1000);
    this.poll?.abort();
    this.options.onStatus('failed', detail);
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
