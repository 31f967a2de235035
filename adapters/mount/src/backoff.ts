// Reconnect delays: exponential with full jitter, capped; and the wait a refusal asked for.

const BASE_MS = 500;
const CAP_MS = 15_000;
/** The longest a refusal's wait (`Retry-After`, `retryAfterSeconds`) holds the card back: a
 * server asking for more (or a proxy's date far ahead) would leave the card silent, so it looks
 * again after a minute. */
export const RETRY_AFTER_CAP_MS = 60_000;

/** Delay before reconnect attempt `attempt` (0-based): random in [d/2, d], d = min(cap, base * 2^attempt). */
export function reconnectDelay(attempt: number, floorMs = 0): number {
  const ceiling = Math.min(CAP_MS, BASE_MS * 2 ** Math.min(attempt, 10));
  const delay = ceiling / 2 + Math.random() * (ceiling / 2);
  return Math.max(floorMs, Math.round(delay));
}

/** A refusal's wait in seconds as milliseconds, at most {@link RETRY_AFTER_CAP_MS}; 0 when it named none. */
export function retryAfterMs(seconds: unknown): number {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) return 0;
  return Math.min(RETRY_AFTER_CAP_MS, Math.ceil(seconds * 1000));
}

/**
 * The wait before asking again after a refusal that named `retryAfterSeconds` (or none): that
 * wait plus reconnect attempt `attempt`'s jittered delay, so cards refused together do not all
 * come back at the same instant and one refused again and again backs off; at most
 * {@link RETRY_AFTER_CAP_MS}.
 */
export function delayAfterRefusal(attempt: number, retryAfterSeconds: unknown): number {
  return Math.min(RETRY_AFTER_CAP_MS, retryAfterMs(retryAfterSeconds) + reconnectDelay(attempt));
}
