// Provider keys (hosted only): set or rotate, remove; only the last four characters are shown.

import { useCallback, useState } from 'react';

import type { ScreenProps } from '../App';
import { callTool } from '../api';
import { TOOLS, type ProviderKey } from '../tools';
import { Busy, ConfirmButton, Empty, ErrorText, formatTime, useAction } from '../ui';
import { useList } from './useList';

const PROVIDERS = ['openai', 'anthropic', 'google', 'mistral'];

export function ProviderKeysScreen(_: ScreenProps) {
  const keys = useList(
    useCallback(async () => (await callTool<{ keys: ProviderKey[] }>(TOOLS.listProviderKeys)).keys, []),
  );
  const [provider, setProvider] = useState('openai');
  const [secret, setSecret] = useState('');
  const [label, setLabel] = useState('');
  const save = useAction(
    useCallback(async () => {
      const args: Record<string, unknown> = { provider, plaintextKey: secret };
      if (label.trim()) args.label = label;
      await callTool(TOOLS.setProviderKey, args);
      setSecret('');
      setLabel('');
      await keys.reload();
    }, [provider, secret, label, keys]),
  );
  return (
    <>
      <p className="lead">Your model provider keys pay for generation. Setting a key again rotates it.</p>
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save.run();
        }}
      >
        <label htmlFor="provider">Provider</label>
        <select id="provider" value={provider} onChange={(e) => setProvider(e.target.value)}>
          {PROVIDERS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
        <label htmlFor="provider-secret">API key</label>
        <input
          id="provider-secret"
          type="password"
          autoComplete="off"
          required
          value={secret}
          onChange={(e) => setSecret(e.target.value)}
          aria-describedby="provider-error"
        />
        <label htmlFor="provider-label">Label (optional)</label>
        <input id="provider-label" value={label} onChange={(e) => setLabel(e.target.value)} />
        <button type="submit" disabled={save.running}>
          {save.running ? 'Saving…' : 'Set key'}
        </button>
        <ErrorText id="provider-error" error={save.error} />
      </form>
      {keys.error && <p className="error">{keys.error}</p>}
      {keys.items === null && !keys.error && <Busy label="Loading provider keys…" />}
      {keys.items?.length === 0 && <Empty>No provider key yet: set one above to generate with your own account.</Empty>}
      <ul className="cards">
        {keys.items?.map((k) => (
          <ProviderKeyCard key={k.provider} item={k} onChanged={keys.reload} />
        ))}
      </ul>
    </>
  );
}

function ProviderKeyCard({ item, onChanged }: { item: ProviderKey; onChanged: () => Promise<void> }) {
  const remove = useAction(
    useCallback(async () => {
      await callTool(TOOLS.removeProviderKey, { provider: item.provider });
      await onChanged();
    }, [item.provider, onChanged]),
  );
  return (
    <li className="card" aria-label={`${item.provider} key`}>
      <h3>
        {item.provider} {item.label && <span className="badge">{item.label}</span>}
      </h3>
      <dl className="facts">
        <dt>Key</dt>
        <dd>
          <code>••••{item.lastFour}</code>
        </dd>
        <dt>Set</dt>
        <dd>{formatTime(item.createdAt)}</dd>
        <dt>Last used</dt>
        <dd>{formatTime(item.lastUsedAt)}</dd>
      </dl>
      <ConfirmButton
        label="Remove"
        question={`Remove the ${item.provider} key?`}
        confirmLabel="Yes, remove"
        running={remove.running}
        onConfirm={() => void remove.run()}
      />
      <ErrorText id={`provider-${item.provider}-error`} error={remove.error} />
    </li>
  );
}
