// Connector keys: issue (the secret is revealed once, with a copy button), list (prefix, app lock,
// last use, expiry), revoke with confirmation.

import { useCallback, useState } from 'react';

import type { ScreenProps } from '../App';
import { callTool } from '../api';
import { TOOLS, type App, type ConnectorKey } from '../tools';
import { Busy, ConfirmButton, Empty, ErrorText, formatTime, useAction } from '../ui';
import { useList } from './useList';

export function KeysScreen({ tools }: ScreenProps) {
  const keys = useList(
    useCallback(async () => (await callTool<{ keys: ConnectorKey[] }>(TOOLS.listKeys)).keys, []),
  );
  const canListApps = tools.includes(TOOLS.listApps);
  const apps = useList(
    useCallback(
      async () => (canListApps ? (await callTool<{ apps: App[] }>(TOOLS.listApps)).apps : []),
      [canListApps],
    ),
  );
  const [name, setName] = useState('');
  const [appId, setAppId] = useState('');
  const [expires, setExpires] = useState('');
  const [revealed, setRevealed] = useState<string | null>(null);
  const issue = useAction(
    useCallback(async () => {
      const args: Record<string, unknown> = {};
      if (name.trim()) args.name = name;
      if (appId) args.appId = appId;
      if (expires) args.expiresAt = new Date(`${expires}T23:59:59`).toISOString();
      const issued = await callTool<{ plaintextKey: string }>(TOOLS.issueKey, args);
      setRevealed(issued.plaintextKey);
      setName('');
      await keys.reload();
    }, [name, appId, expires, keys]),
  );
  const appName = (id: string | undefined) =>
    id ? (apps.items?.find((a) => a.appId === id)?.displayName ?? id) : 'any app (universal)';
  return (
    <>
      <p className="lead">
        A connector key lets an agent or MCP client call this server. Keep it secret: it is shown once, when issued.
      </p>
      {revealed && <Reveal secret={revealed} onDone={() => setRevealed(null)} />}
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          void issue.run();
        }}
      >
        <label htmlFor="key-name">Name</label>
        <input id="key-name" value={name} placeholder="laptop" onChange={(e) => setName(e.target.value)} />
        {canListApps && (
          <>
            <label htmlFor="key-app">Lock to app</label>
            <select id="key-app" value={appId} onChange={(e) => setAppId(e.target.value)}>
              <option value="">No lock (the default app)</option>
              {apps.items?.map((a) => (
                <option key={a.appId} value={a.appId}>
                  {a.displayName}
                </option>
              ))}
            </select>
          </>
        )}
        <label htmlFor="key-expires">Expires (optional)</label>
        <input id="key-expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        <button type="submit" disabled={issue.running} aria-describedby="issue-key-error">
          {issue.running ? 'Issuing…' : 'Issue key'}
        </button>
        <ErrorText id="issue-key-error" error={issue.error} />
      </form>
      {keys.error && <p className="error">{keys.error}</p>}
      {keys.items === null && !keys.error && <Busy label="Loading keys…" />}
      {keys.items?.length === 0 && <Empty>No keys yet: issue one above and give it to your agent.</Empty>}
      <ul className="cards">
        {keys.items?.map((key) => (
          <KeyCard key={key.id} item={key} appName={appName(key.appId)} onChanged={keys.reload} />
        ))}
      </ul>
    </>
  );
}

function Reveal({ secret, onDone }: { secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  return (
    <section className="reveal" aria-labelledby="reveal-title">
      <h3 id="reveal-title">Your new key</h3>
      <p>Copy it now: it is never shown again.</p>
      <label htmlFor="revealed-key">Key</label>
      <input id="revealed-key" readOnly value={secret} onFocus={(e) => e.target.select()} />
      <div className="actions">
        <button
          type="button"
          onClick={() => {
            navigator.clipboard
              .writeText(secret)
              .then(() => setCopied('Copied to the clipboard.'))
              .catch(() => setCopied('Copying was refused: select the key and copy it by hand.'));
          }}
        >
          Copy
        </button>
        <button type="button" onClick={onDone}>
          I stored it
        </button>
      </div>
      <p role="status">{copied}</p>
    </section>
  );
}

function KeyCard({ item, appName, onChanged }: { item: ConnectorKey; appName: string; onChanged: () => Promise<void> }) {
  const revoke = useAction(
    useCallback(async () => {
      await callTool(TOOLS.revokeKey, { keyId: item.id });
      await onChanged();
    }, [item.id, onChanged]),
  );
  const label = item.name ?? 'unnamed key';
  return (
    <li className="card" aria-label={`Key ${label}`}>
      <h3>
        {label} <span className={`badge ${item.status}`}>{item.status}</span>
      </h3>
      <dl className="facts">
        <dt>Prefix</dt>
        <dd>
          <code>svc_user_{item.apiKeyPrefix}…</code>
        </dd>
        <dt>App</dt>
        <dd>{appName}</dd>
        <dt>Last used</dt>
        <dd>{formatTime(item.lastUsedAt)}</dd>
        <dt>Expires</dt>
        <dd>{item.expiresAt ? formatTime(item.expiresAt) : 'never'}</dd>
      </dl>
      {item.status === 'active' && (
        <ConfirmButton
          label="Revoke"
          question={`Revoke ${label}? Clients using it are refused at once.`}
          confirmLabel="Yes, revoke"
          running={revoke.running}
          onConfirm={() => void revoke.run()}
        />
      )}
      <ErrorText id={`key-${item.id}-error`} error={revoke.error} />
    </li>
  );
}
