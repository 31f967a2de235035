// The client half of the polling transport (`long-poll.ts`): the frames the card sends go out as
// POSTs, one request at a time and in order, since requests in parallel reach the server in any
// order. `live-socket.ts` owns the actions and the channel's state and reaches this queue only
// through `PostQueueHost`; this file decides what is POSTed when, and hands every answer back.

import { ACTION_REFUSALS_WITHOUT_SEQ } from './action-retry';
import { reconnectDelay } from './backoff';
import type { LongPoll, PollResult } from './long-poll';
import { isObject, type ActionEnvelope, type ErrorPayload, type Frame, type JsonObject, type SystemPayload } from './protocol';

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
  /** Set while its POST is out: an `ack` meanwhile does not send it again (that answer may store
   * it, and a second copy would be reported a duplicate); the answer's handling does, if need be. */
  posting?: boolean;
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
  /** The server stored the action `clientSeq` (`answer` is its `action_stored`), said by an
   * answer that came after its poll session was over: settled, the resume cursors left alone. */
  stored(clientSeq: number, answer: SystemPayload): void;
  /** A frame for the card itself (what the fallback answers a tool channel subscribe with). */
  deliverFrame(frame: Frame): void;
  /** The server refused the action (it is sent again after the wait, or given up). */
  refused(action: A, error: ErrorPayload): void;
  /** Queues the action again after `delayMs` (setting its `retryTimer`). */
  sendAgainAfter(action: A, delayMs: number): void;
  /** Sends the action on the current transport now, or at its next `ack` if it has none yet:
   * its POST came back settling nothing (too late for its poll session, or refused unread), and
   * an `ack` while it was out skipped it. */
  sendNow(action: A): void;
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
    let result: PollResult = { kind: 'failed', detail: 'no token' };
    pending.posting = true;
    try {
      if (token) result = await poll.post(token, { type: 'action', payload: pending.envelope });
    } finally {
      pending.posting = false;
    }
    if (this.host.stopped()) return;
    const replaced = this.host.poll() !== poll;
    if (result.kind === 'refused') {
      // Refused unread, so not stored: the next token sends it at once, not the next ack (which
      // waits for the poll held open with the old token). An ack while it was out skipped it.
      if (token && !replaced) await this.host.tokenRefused(token);
      this.sendUnsettled(pending);
      return;
    }
    if (replaced || !this.host.subscribed()) {
      // Its poll session is over (a poll failed, or the socket is back): unless this answer
      // settles it, the action goes now on the current transport (an ack while the POST was out
      // skipped it), or at the next ack.
      this.settleLate(pending, result);
      this.sendUnsettled(pending);
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

  /** `pending`, neither stored, given up nor waiting out a refusal, goes on the current transport
   * (the queue keeps one copy of it while polling). */
  private sendUnsettled(pending: A): void {
    if (this.host.stopped() || this.host.unacked(pending.envelope.clientSeq) !== pending) return;
    if (pending.retryTimer === undefined) this.host.sendNow(pending);
  }

  /**
   * What an answer that came after its poll session was over says of its action: stored, or
   * refused. Dropped, a store would go unheard, and the action POSTed again would be reported a
   * duplicate. Nothing else of it is applied: its stream data and cursors are of a session the
   * card no longer resumes from, and an error about no action (SESSION_EXPIRED) is the current
   * transport's to find out.
   */
  private settleLate(pending: A, result: PollResult): void {
    const clientSeq = pending.envelope.clientSeq;
    const settled = (): boolean => this.host.unacked(clientSeq) !== pending; // reported once only
    if (result.kind === 'failed' && result.refusal && !settled()) this.host.refused(pending, { ...result.refusal, clientSeq });
    if (result.kind !== 'ok') return;
    for (const frame of result.frames) {
      if (settled()) return;
      const payload = isObject(frame.payload) ? frame.payload : {};
      if (frame.type === 'system' && payload.event === 'action_stored' && payload.clientSeq === clientSeq) {
        this.host.stored(clientSeq, payload as SystemPayload);
      } else if (frame.type === 'error' && refusesAction(payload, clientSeq)) {
        this.host.refused(pending, { ...(payload as ErrorPayload), clientSeq });
      }
    }
  }
}

/** Whether an `error` answering the POST of action `clientSeq` refuses it: it names the action,
 * or names none and is sent before a frame is read (RATE_LIMITED), so refuses whatever it answers. */
function refusesAction(error: JsonObject, clientSeq: number): boolean {
  return error.clientSeq === clientSeq || (error.clientSeq === undefined && ACTION_REFUSALS_WITHOUT_SEQ.has(String(error.code)));
}

/** An `error` frame answering a POSTed action, with that action's clientSeq when it has none. */
function ownedBy(frame: Frame, clientSeq: number): Frame {
  if (!isObject(frame.payload) || typeof frame.payload.clientSeq === 'number') return frame;
  return { ...frame, payload: { ...frame.payload, clientSeq } };
}
