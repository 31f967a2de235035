// Apps: create, rename, the system prompt (counted against the 10,000-character limit), the
// default app (what universal keys act in), delete with confirmation.

import { useCallback, useState } from 'react';

import type { ScreenProps } from '../App';
import { callTool } from '../api';
import { SYSTEM_PROMPT_LIMIT, TOOLS, type App } from '../tools';
import { Busy, ConfirmButton, Empty, ErrorText, formatTime, useAction } from '../ui';
import { useList } from './useList';

export function AppsScreen({ session, refreshSession }: ScreenProps) {
  const apps = useList(useCallback(async () => (await callTool<{ apps: App[] }>(TOOLS.listApps)).apps, []));
  const [name, setName] = useState('');
  const create = useAction(
    useCallback(async () => {
      await callTool(TOOLS.createApp, name.trim() ? { displayName: name } : {});
      setName('');
      await apps.reload();
    }, [name, apps]),
  );
  return (
    <>
      <p className="lead">
        An app holds an agent's sessions and blueprints. Universal keys act in the default app; a key locked to an app
        acts only there.
      </p>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <label htmlFor="new-app-name">New app name</label>
        <input
          id="new-app-name"
          value={name}
          placeholder="My app"
          onChange={(e) => setName(e.target.value)}
          aria-describedby="new-app-error"
        />
        <button type="submit" disabled={create.running}>
          {create.running ? 'Creating…' : 'Create app'}
        </button>
        <ErrorText id="new-app-error" error={create.error} />
      </form>
      {apps.error && <p className="error">{apps.error}</p>}
      {apps.items === null && !apps.error && <Busy label="Loading apps…" />}
      {apps.items?.length === 0 && <Empty>No apps yet: create one above.</Empty>}
      <ul className="cards">
        {apps.items?.map((app) => (
          <AppCard
            key={app.appId}
            app={app}
            isDefault={!session.appLocked && app.appId === session.appId}
            onChanged={async () => {
              await apps.reload();
              await refreshSession();
            }}
          />
        ))}
      </ul>
    </>
  );
}

function AppCard({ app, isDefault, onChanged }: { app: App; isDefault: boolean; onChanged: () => Promise<void> }) {
  const [displayName, setDisplayName] = useState(app.displayName);
  const [prompt, setPrompt] = useState(app.systemPrompt ?? '');
  const id = app.appId;
  const rename = useAction(
    useCallback(async () => {
      await callTool(TOOLS.renameApp, { appId: id, displayName });
      await onChanged();
    }, [id, displayName, onChanged]),
  );
  const savePrompt = useAction(
    useCallback(async () => {
      await callTool(TOOLS.updateSystemPrompt, { appId: id, systemPrompt: prompt });
      await onChanged();
    }, [id, prompt, onChanged]),
  );
  const makeDefault = useAction(
    useCallback(async () => {
      await callTool(TOOLS.setDefaultApp, { appId: id });
      await onChanged();
    }, [id, onChanged]),
  );
  const remove = useAction(
    useCallback(async () => {
      await callTool(TOOLS.deleteApp, { appId: id });
      await onChanged();
    }, [id, onChanged]),
  );
  const over = prompt.length > SYSTEM_PROMPT_LIMIT;
  return (
    <li className="card" aria-labelledby={`app-${id}-title`}>
      <h3 id={`app-${id}-title`}>
        {app.displayName} {isDefault && <span className="badge">Default</span>}
      </h3>
      <p className="meta">
        <code>{id}</code> · created {formatTime(app.createdAt)}
      </p>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void rename.run();
        }}
      >
        <label htmlFor={`app-${id}-name`}>Name</label>
        <input
          id={`app-${id}-name`}
          value={displayName}
          onChange={(e) => setDisplayName(e.target.value)}
          aria-describedby={`app-${id}-name-error`}
          aria-invalid={rename.error ? true : undefined}
        />
        <button type="submit" disabled={rename.running || displayName === app.displayName}>
          {rename.running ? 'Renaming…' : 'Rename'}
        </button>
        <ErrorText id={`app-${id}-name-error`} error={rename.error} />
      </form>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void savePrompt.run();
        }}
      >
        <label htmlFor={`app-${id}-prompt`}>System prompt</label>
        <textarea
          id={`app-${id}-prompt`}
          rows={4}
          value={prompt}
          onChange={(e) => setPrompt(e.target.value)}
          aria-describedby={`app-${id}-prompt-count app-${id}-prompt-error`}
          aria-invalid={over || savePrompt.error ? true : undefined}
        />
        <p id={`app-${id}-prompt-count`} className={over ? 'count over' : 'count'}>
          {prompt.length.toLocaleString()} / {SYSTEM_PROMPT_LIMIT.toLocaleString()} characters
          {over ? ': too long' : ''}
        </p>
        <button type="submit" disabled={savePrompt.running || over || prompt === (app.systemPrompt ?? '')}>
          {savePrompt.running ? 'Saving…' : 'Save system prompt'}
        </button>
        <ErrorText id={`app-${id}-prompt-error`} error={savePrompt.error} />
      </form>
      <div className="actions">
        {!isDefault && (
          <button type="button" onClick={() => void makeDefault.run()} disabled={makeDefault.running}>
            {makeDefault.running ? 'Setting…' : 'Make default'}
          </button>
        )}
        <ConfirmButton
          label="Delete app"
          question={`Delete ${app.displayName}? Its sessions stay stored but no universal key reaches them again.`}
          confirmLabel="Yes, delete"
          running={remove.running}
          onConfirm={() => void remove.run()}
        />
      </div>
      <ErrorText id={`app-${id}-actions-error`} error={makeDefault.error ?? remove.error} />
    </li>
  );
}
