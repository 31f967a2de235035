// Sign-in: hosted, an account's email and password; self-hosted, the pair code the server printed
// at start; either way, or any key (a connector key, a keys-file key). Each is exchanged for a
// console session in an HttpOnly cookie. The server says which in `<body data-sign-in>`.

import { useCallback, useState } from 'react';

import { signIn, type Session } from '../api';
import { ErrorText, useAction } from '../ui';

/** `account` on a hosted server (email and password), `key` otherwise (the pair code). */
function offered(): 'account' | 'key' {
  return document.body.dataset.signIn === 'account' ? 'account' : 'key';
}

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const accounts = offered() === 'account';
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const byAccount = useAction(
    useCallback(async () => onSignedIn(await signIn({ email: email.trim(), password })), [email, password, onSignedIn]),
  );
  const [pairCode, setPairCode] = useState('');
  const [key, setKey] = useState('');
  const byCode = useAction(
    useCallback(async () => onSignedIn(await signIn({ pairCode: pairCode.trim() })), [pairCode, onSignedIn]),
  );
  const byKey = useAction(useCallback(async () => onSignedIn(await signIn({ key: key.trim() })), [key, onSignedIn]));
  return (
    <section className="signin" aria-labelledby="signin-title">
      <h1 id="signin-title">Sign in to the svc console</h1>
      {accounts ? (
        <>
          <p>Sign in with your account's email and password, or with a key you hold.</p>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void byAccount.run();
            }}
          >
            <label htmlFor="email">Email</label>
            <input
              id="email"
              type="email"
              autoComplete="username"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              aria-describedby="account-error"
              aria-invalid={byAccount.error ? true : undefined}
              required
            />
            <label htmlFor="password">Password</label>
            <input
              id="password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-describedby="account-error"
              aria-invalid={byAccount.error ? true : undefined}
              required
            />
            <button type="submit" disabled={byAccount.running}>
              {byAccount.running ? 'Signing in…' : 'Sign in'}
            </button>
            <ErrorText id="account-error" error={byAccount.error} />
          </form>
        </>
      ) : (
        <>
          <p>
            Use the 6-digit pair code the server printed when it started (it mints a key named <code>console</code>), or
            a key you already hold.
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
        </>
      )}
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
