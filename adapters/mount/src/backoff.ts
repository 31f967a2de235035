// Reconnect delays: exponential with full jitter, capped.

const BASE_MS = 500;
const CAP_MS = 15_000;

/** Delay before reconnect attempt `attempt` (0-based): random in [d/2, d], d = min(cap, base * 2^attempt). */
export function reconnectDelay(attempt: number, floorMs = 0): number {
  const ceiling = Math.min(CAP_MS, BASE_MS * 2 ** Math.min(attempt, 10));
  const delay = ceiling / 2 + Math.random() * (ceiling / 2);
  return Math.max(floorMs, Math.round(delay));
}
