// What the card does with an action the server did not store (docs/live-channel.md, "Actions
// the server does not store"): send it again after the wait the server asked for, or give up and settle
// its `useAction` promise with the refusal. Pure: `live-socket.ts` applies the verdicts.

import { isObject, type ErrorPayload, type Frame } from './protocol';

/** The largest client frame the server reads: past it `/ws` answers `FRAME_TOO_LARGE` and closes
 * with 1009, and the polling POST answers 413. */
export const MAX_FRAME_BYTES = 256 * 1024;
/** Refusals of one action after which it is given up (Document 2: cap attempts). */
export const MAX_ACTION_REFUSALS = 5;
/** Waits of a refused action when the server names none: min(base * 2^n, cap) (Document 2). */
const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 15_000;
/** The longest wait a timer can hold; a longer `Retry-After` would fire at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Refusals that say "not now": the action (or the subscribe) was not acted on and may be sent
 * again, an action with the same clientSeq (the server deduplicates by it). Any other refusal is
 * final. */
const RETRYABLE = new Set(['SERVER_BUSY', 'RATE_LIMITED', 'INTERNAL']);

/** Whether a refusal with `code` says "not now" rather than "never". */
export function refusedForNow(code: string): boolean {
  return RETRYABLE.has(code);
}

/** Refusals `/ws` sends before it reads a frame, so without its clientSeq, that may answer an
 * action (the socket answers frames in order: they belong to the oldest action not yet
 * answered). Every refusal of a frame it read as an action names the action's clientSeq; one
 * without it answered another frame (a host-context echo, a channel subscribe). */
export const ACTION_REFUSALS_WITHOUT_SEQ = new Set(['FRAME_TOO_LARGE', 'RATE_LIMITED']);

export type RefusalVerdict = { retry: true; delayMs: number } | { retry: false; error: ErrorPayload };

/** What to do with an action refused by `error` after `refusals` earlier refusals. */
export function judgeRefusal(error: ErrorPayload, refusals: number): RefusalVerdict {
  const code = error.code ?? 'ERROR';
  if (!refusedForNow(code)) return { retry: false, error };
  if (refusals + 1 >= MAX_ACTION_REFUSALS) {
    const message = `${error.message ?? code} (refused ${refusals + 1} times; not sent again)`;
    return { retry: false, error: { ...error, message } };
  }
  const retryAfter = typeof error.retryAfterSeconds === 'number' ? error.retryAfterSeconds : undefined;
  return { retry: true, delayMs: retryDelayMs(refusals, retryAfter) };
}

/** The server's wait verbatim when it named one, else min(base * 2^refusals, cap). */
export function retryDelayMs(refusals: number, retryAfterSeconds?: number): number {
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) {
    return Math.min(LONGEST_TIMER_MS, Math.round(retryAfterSeconds * 1000));
  }
  return Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.min(refusals, 10));
}

/**
 * The refusal of a polling POST answered with an HTTP error, in the words `/ws` would have used;
 * `null` for 401, which refuses the token, not the action: nothing more is POSTed with that token
 * (`post-queue.ts`), the channel swaps it, and the action goes again, first, with the new one.
 * 413 is `FRAME_TOO_LARGE`; 408, 429 and 5xx may be retried (429 and 503 as `Retry-After`
 * says); any other 4xx is final.
 */
export function httpRefusal(status: number, body: unknown, retryAfterHeader: string | null, now: number): ErrorPayload | null {
  if (status === 401) return null;
  const error = isObject(body) && isObject(body.error) ? body.error : {};
  const message = typeof error.message === 'string' ? error.message : `HTTP ${status}`;
  const retryAfterSeconds = parseRetryAfter(retryAfterHeader, now) ?? (typeof error.retryAfter === 'number' ? error.retryAfter : undefined);
  const waits = retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
  if (status === 413) return { code: 'FRAME_TOO_LARGE', message: `the action is larger than the server takes (${MAX_FRAME_BYTES / 1024} KiB)` };
  if (status === 429) return { code: 'RATE_LIMITED', message, ...waits };
  if (status === 503) return { code: 'SERVER_BUSY', message, ...waits };
  if (status === 408 || status >= 500) return { code: 'INTERNAL', message, ...waits };
  return { code: typeof error.code === 'string' ? error.code : `HTTP_${status}`, message };
}

/** `Retry-After` as seconds: a number of seconds, or an HTTP date. */
export function parseRetryAfter(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/**
 * Why the server would refuse `frame` before reading it, or null: larger than
 * {@link MAX_FRAME_BYTES} (`FRAME_TOO_LARGE`), or a U+0000 in a string or key (`BAD_FRAME`, with
 * the server's wording). Such a frame is never sent: the socket would close over it, and sending
 * it again after the reconnect would close the next one.
 */
export function refusalBeforeSending(frame: Frame, text: string = JSON.stringify(frame)): ErrorPayload | null {
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > MAX_FRAME_BYTES) {
    return { code: 'FRAME_TOO_LARGE', message: `the ${frame.type} is ${bytes} bytes; the server takes at most ${MAX_FRAME_BYTES} (256 KiB)` };
  }
  const path = nulPath(frame);
  return path === null ? null : { code: 'BAD_FRAME', message: `${path} must not contain U+0000 (NUL)` };
}

/** The dotted path of the first string or key holding U+0000, as the server names it. */
function nulPath(value: unknown): string | null {
  if (typeof value === 'string') return value.includes('\0') ? '' : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const rest = nulPath(value[i]);
      if (rest !== null) return join(String(i), rest);
    }
    return null;
  }
  if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\0')) return key.replaceAll('\0', '\\u0000');
      const rest = nulPath(item);
      if (rest !== null) return join(key, rest);
    }
  }
  return null;
}

function join(head: string, rest: string): string {
  return rest === '' ? head : `${head}.${rest}`;
}
