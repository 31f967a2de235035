// Runs rewritten module source (inline-module.ts) as an inline `<script type="module">` and
// waits for it to settle its exports. An inline script is what a host's `script-src
// 'unsafe-inline'` admits; where the host uses a nonce instead, the element carries the nonce
// the runtime's own script was given. A module that throws, does not parse, or is blocked by
// the host's policy rejects with a readable reason. Runs are serialised, so an error event is
// always the current run's.

import { ComponentLoadError } from './module-loader-errors';

/** How long a script may take to run its top level before the load is given up. */
const SETTLE_TIMEOUT_MS = 10_000;

export type Exports = Record<string, unknown>;

interface Pending {
  token: string;
  resolve(exports: Exports): void;
  reject(error: Error): void;
}

export class InlineScriptRunner {
  private current: Pending | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private counter = 0;

  /** A token no other run of this document uses. */
  nextToken(): string {
    this.counter += 1;
    return `svc-module-${this.counter}`;
  }

  /** Called by the module's last statement. */
  settle(token: string, exports: Exports): void {
    if (this.current?.token === token) this.current.resolve(exports);
  }

  /** Runs `source` (which settles `token`); `what` names it in errors. */
  run(source: string, token: string, what: string): Promise<Exports> {
    const next = this.queue.then(() => this.runNow(source, token, what));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private runNow(source: string, token: string, what: string): Promise<Exports> {
    return new Promise<Exports>((resolve, reject) => {
      const script = document.createElement('script');
      const onError = (event: ErrorEvent): void => {
        event.preventDefault();
        finish(new ComponentLoadError(`${what} failed to load: ${event.error instanceof Error ? event.error.message : event.message}`));
      };
      const onViolation = (event: SecurityPolicyViolationEvent): void => {
        if (!event.effectiveDirective.startsWith('script-src')) return;
        finish(new ComponentLoadError(`${what} could not run: this host's Content-Security-Policy does not allow inline scripts (${event.effectiveDirective})`));
      };
      const timer = window.setTimeout(() => finish(new ComponentLoadError(`${what} did not run within ${SETTLE_TIMEOUT_MS / 1000} s`)), SETTLE_TIMEOUT_MS);
      const finish = (outcome: Exports | Error): void => {
        if (this.current?.token !== token) return;
        this.current = null;
        window.clearTimeout(timer);
        window.removeEventListener('error', onError);
        document.removeEventListener('securitypolicyviolation', onViolation);
        script.remove();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      this.current = { token, resolve: finish, reject: finish };
      window.addEventListener('error', onError);
      document.addEventListener('securitypolicyviolation', onViolation);
      script.type = 'module';
      const nonce = runtimeNonce();
      if (nonce) script.nonce = nonce;
      script.textContent = source;
      document.head.append(script);
    });
  }
}

/** The nonce the host gave the runtime's own script, if any. */
function runtimeNonce(): string | undefined {
  for (const script of Array.from(document.querySelectorAll('script'))) {
    if (script.nonce) return script.nonce;
  }
  return undefined;
}
