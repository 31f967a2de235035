// Which `error` frames, after a socket's `ack`, say the server no longer binds that socket to the
// session (docs/live-channel.md, "A binding lost after the `ack` (the runtime)").

import type { ErrorPayload } from './protocol';

/**
 * Whether `error`, heard on a subscribed socket, means the server may have unbound it, so the
 * card must subscribe again to hear anything live or have an action stored.
 *
 * - `NOT_SUBSCRIBED`: the server answers it to any frame (but `ping`) read while nothing is bound.
 * - `INTERNAL` without a `clientSeq`: after the `ack` the server sends it when the store failed
 *   in the middle of the subscribe's replay, and then unbinds the socket (keeping it open, with a
 *   new subscribe deadline); when the card sent nothing since, it is the only word it gets. The
 *   same frame also answers a `host_context_observed` or `channel_subscribe` the store failed,
 *   which leaves the binding as it was; a subscribe then only binds it anew and replays from the
 *   card's cursors (nothing applied twice), so taking it as lost costs little, and missing the
 *   replay's failure leaves the card deaf. An action's own refusals always name its `clientSeq`
 *   (`INTERNAL` included: the action may be sent again), so they are never taken for this.
 */
export function bindingLost(error: ErrorPayload): boolean {
  if (error.code === 'NOT_SUBSCRIBED') return true;
  return error.code === 'INTERNAL' && typeof error.clientSeq !== 'number';
}
