// Tells when the host's Content-Security-Policy refuses every way the card has to reach the
// server (the WebSocket and, where there is one, the `pollingUrl`): a host that grants the card
// no `connect-src` at all. Retrying is then pointless, and the user should be told plainly.

/** Calls `onAllBlocked` once, when a connection to each of `urls` was refused by policy. */
export function watchConnectPolicy(urls: readonly string[], onAllBlocked: () => void): () => void {
  const pending = new Set(urls.map(originOf).filter((origin): origin is string => origin !== null));
  if (pending.size === 0) return () => {};
  const listener = (event: SecurityPolicyViolationEvent): void => {
    if (event.effectiveDirective !== 'connect-src') return;
    const origin = originOf(event.blockedURI);
    if (origin === null || !pending.delete(origin) || pending.size > 0) return;
    stop();
    onAllBlocked();
  };
  const stop = (): void => document.removeEventListener('securitypolicyviolation', listener);
  document.addEventListener('securitypolicyviolation', listener);
  return stop;
}

function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return null;
  }
}
