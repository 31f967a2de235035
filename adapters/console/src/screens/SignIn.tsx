// Self-hosted sign-in: the pair code the server printed at start, or any key (a connector key, a
// keys-file key). Either is exchanged for a console session in an HttpOnly cookie.

import { useCallback, useState } from 'react';

import { signIn, type Session } from '../api';
import { ErrorText, useAction } from '../ui';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [pairCode, setPairCode] = useState('');
  const [key, setKey] = useState('');
  const byCode = useAction(
    useCallback(async () => onSignedIn(await signIn({ pairCode: pairCode.trim() })), [pairCode, onSignedIn]),
  );
  const byKey = useAction(useCallback(async () => onSignedIn(await signIn({ key: key.trim() })), [key, onSignedIn]));
  return (
    <section className="signin" aria-labelledby="signin-title">
      <h1 id="signin-title">Sign in to the svc console</h1>
      <p>
        Use the 6-digit pair code the server printed when it started (it mints a key named <code>console</code>), or a
        key you already hold.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void byCode.run();
        }}
      >
        <label htmlFor="pair-code">Pair code</label>
        <input
          id="pair-code"
          inputMode="numeric"
          autoComplete="one-time-code"
          value={pairCode}
          onChange={(e) => setPairCode(e.target.value)}
          aria-describedby="pair-code-error"
          aria-invalid={byCode.error ? true : undefined}
          required
        />
        <button type="submit" disabled={byCode.running}>
          {byCode.running ? 'Signing in…' : 'Sign in with the pair code'}
        </button>
        <ErrorText id="pair-code-error" error={byCode.error} />
      </form>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void byKey.run();
        }}
      >
        <label htmlFor="key">Key</label>
        <input
          id="key"
          type="password"
          autoComplete="off"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          aria-describedby="key-error"
          aria-invalid={byKey.error ? true : undefined}
          required
        />
        <button type="submit" disabled={byKey.running}>
          {byKey.running ? 'Signing in…' : 'Sign in with a key'}
        </button>
        <ErrorText id="key-error" error={byKey.error} />
      </form>
    </section>
  );
}
