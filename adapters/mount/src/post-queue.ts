// The client half of the polling transport (`long-poll.ts`): the frames the card sends go out as
// POSTs, one request at a time and in order, since requests in parallel reach the server in any
// order. `live-socket.ts` owns the actions and the channel's state and reaches this queue only
// through `PostQueueHost`; this file decides what is POSTed when, and hands every answer back.

import { reconnectDelay } from './backoff';
import type { LongPoll, PollResult } from './long-poll';
import { isObject, type ActionEnvelope, type ErrorPayload, type Frame } from './protocol';

/** Client frames the polling transport carries (the rest only mean something on a socket). */
const POSTABLE = new Set(['action', 'host_context_observed']);

/** What the queue reads and writes of an action not yet stored. */
export interface QueuedAction {
  envelope: ActionEnvelope;
  /** POSTs in a row that brought no word on it (no answer, or one that neither stored nor
   * refused it): retried with growing backoff, never given up. */
  unanswered: number;
  /** Set while it waits to be sent again: neither an `ack` nor the POST queue sends it sooner. */
  retryTimer: number | undefined;
}

/** What the queue needs of the live channel: its state, read when needed, and where answers go. */
export interface PostQueueHost<A extends QueuedAction> {
  /** The polling transport in use; null while the WebSocket is. */
  poll(): LongPoll | null;
  /** The current transport got its `ack`: only then are POSTs sent. */
  subscribed(): boolean;
  /** The channel closed for good. */
  stopped(): boolean;
  /** The token a request carries (the session token, else the wsToken). */
  token(): string | undefined;
  /** The action with this clientSeq while it is neither stored nor given up. */
  unacked(clientSeq: number): A | undefined;
  /** A server frame from a POST's answer, applied as if the socket had sent it. */
  applyServerFrame(frame: Frame): void;
  /** A frame for the card itself (what the fallback answers a tool channel subscribe with). */
  deliverFrame(frame: Frame): void;
  /** The server refused the action (it is sent again after the wait, or given up). */
  refused(action: A, error: ErrorPayload): void;
  /** Queues the action again after `delayMs` (setting its `retryTimer`). */
  sendAgainAfter(action: A, delayMs: number): void;
  /** `token` was refused (401): true once the channel has another to try, false if it closed instead. */
  tokenRefused(token: string): Promise<boolean>;
}

export class PostQueue<A extends QueuedAction> {
  /** What is POSTed next, in this order: a clientSeq of an unacked action, or another client
   * frame (the host context). */
  private items: Array<number | Frame> = [];
  /** The polling transport whose queue is being POSTed (one sender per transport). */
  private postingFor: LongPoll | null = null;

  constructor(private readonly host: PostQueueHost<A>) {}

  /** Queues one client frame other than an action; false while no polling transport is in use. */
  send(frame: Frame): boolean {
    if (!this.host.poll()) return false;
    if (frame.type === 'channel_subscribe') {
      // Tool channels are polled by the server per socket; the HTTP fallback has none.
      const channel = typeof frame.payload === 'string' ? frame.payload : isObject(frame.payload) ? String(frame.payload.channel ?? '') : '';
      this.host.deliverFrame({
        type: 'channel_error',
        payload: { channel, code: 'TRANSPORT_UNSUPPORTED', message: 'tool channels need the WebSocket, which this host blocks' },
      });
      return true;
    }
    if (!POSTABLE.has(frame.type)) return true; // ping, channel_unsubscribe: nothing to carry
    this.items.push(frame);
    void this.pump();
    return true;
  }

  /** Queues the unacked action `clientSeq` (once) behind what is queued already. */
  sendAction(clientSeq: number): void {
    if (!this.items.includes(clientSeq)) this.items.push(clientSeq);
    void this.pump();
  }

  /** Forgets what is queued: after an `ack` (it is queued again in order) or when the channel closes. */
  clear(): void {
    this.items = [];
  }

  /**
   * POSTs the queue one request at a time, in order: an action waiting out a refusal holds back
   * the frames queued after it, and a refused token everything until the channel has another.
   */
  private async pump(): Promise<void> {
    const poll = this.host.poll();
    if (!poll || this.postingFor === poll) return;
    this.postingFor = poll;
    try {
      while (this.host.poll() === poll && this.host.subscribed() && !this.host.stopped()) {
        const head = this.items[0];
        if (head === undefined) return;
        if (typeof head !== 'number') {
          this.items.shift();
          await this.postFrame(poll, head);
          continue;
        }
        const pending = this.host.unacked(head);
        if (!pending) {
          this.items.shift();
          continue;
        }
        if (pending.retryTimer !== undefined) return; // its timer queues it, and pumps, again
        await this.postAction(poll, pending);
        if (this.host.unacked(head) !== pending) this.items = this.items.filter((item) => item !== head);
      }
    } finally {
      if (this.postingFor === poll) this.postingFor = null;
    }
  }

  /** A frame other than an action: its answer is applied; a failed one is not sent again (the
   * host context is echoed again after the next ack), one refused unread (401) goes first again
   * with the next token, so the host context still comes before the actions queued after it. */
  private async postFrame(poll: LongPoll, frame: Frame): Promise<void> {
    const token = this.host.token();
    if (!token) return;
    const result = await poll.post(token, frame);
    if (this.host.stopped() || this.host.poll() !== poll) return;
    if (result.kind === 'refused') {
      this.items.unshift(frame);
      await this.host.tokenRefused(token);
      return;
    }
    if (result.kind !== 'ok') return;
    for (const answer of result.frames) this.host.applyServerFrame(answer);
  }

  /**
   * POSTs one action; afterwards it is stored, given up, waiting (`retryTimer`) to go again, or,
   * its token refused, first in the queue again once the channel has another token.
   */
  private async postAction(poll: LongPoll, pending: A): Promise<void> {
    const clientSeq = pending.envelope.clientSeq;
    const token = this.host.token();
    const result: PollResult = token
      ? await poll.post(token, { type: 'action', payload: pending.envelope })
      : { kind: 'failed', detail: 'no token' };
    if (this.host.stopped() || this.host.poll() !== poll) return;
    if (result.kind === 'refused') {
      // Refused unread, so not stored: the next token sends it at once, not the next ack (which
      // waits for the poll held open with the old token).
      if (token) await this.host.tokenRefused(token);
      return;
    }
    if (result.kind === 'ok') {
      // The answer is this action's, an error without a clientSeq (BAD_FRAME, RATE_LIMITED) too.
      for (const answer of result.frames) this.host.applyServerFrame(answer.type === 'error' ? ownedBy(answer, clientSeq) : answer);
    } else if (result.refusal && this.host.unacked(clientSeq) === pending) {
      // Only while pending: one stored while the POST was out (its `action_stored` came with a
      // poll) must not be reported failed after all.
      this.host.refused(pending, { ...result.refusal, clientSeq });
    }
    if (this.host.unacked(clientSeq) !== pending) return; // stored, or given up
    if (pending.retryTimer !== undefined) {
      pending.unanswered = 0; // the server spoke of it; the wait it asked for applies
      return;
    }
    // No word on it (the network, or an answer that neither stored nor refused it): sent again
    // with the reconnect backoff, growing. As on the socket, only the server's refusals count
    // toward giving an action up.
    this.host.sendAgainAfter(pending, reconnectDelay(pending.unanswered++));
  }
}

/** An `error` frame answering a POSTed action, with that action's clientSeq when it has none. */
function ownedBy(frame: Frame, clientSeq: number): Frame {
  if (!isObject(frame.payload) || typeof frame.payload.clientSeq === 'number') return frame;
  return { ...frame, payload: { ...frame.payload, clientSeq } };
}
