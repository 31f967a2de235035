// Blueprints: the app's stored components, searchable by intent, each mounted live with its
// fixture props, a page at a time; register your own, edit a variance, make one the operator
// default of its contract, or delete it.

import { useCallback, useState } from 'react';

import type { ScreenProps } from '../App';
import { callTool } from '../api';
import { TOOLS, type Blueprint } from '../tools';
import { Busy, ConfirmButton, Empty, ErrorText, formatTime, useAction } from '../ui';
import { BlueprintPreview } from './BlueprintPreview';
import { RegisterBlueprint } from './RegisterBlueprint';
import { useList } from './useList';
import { VarianceEditor } from './VarianceEditor';

const PAGE = 20;

/** One page of the listing: `applied` search words, from `cursor` (the first page without). */
async function listPage(applied: string, cursor: string | null) {
  const words = applied.split(/\s+/).filter(Boolean);
  const args: Record<string, unknown> = { limit: PAGE };
  if (words.length) args.intentKeywords = words;
  if (cursor) args.cursor = cursor;
  return callTool<{ blueprints: Blueprint[]; nextCursor?: string }>(TOOLS.listBlueprints, args);
}

export function BlueprintsScreen({ tools }: ScreenProps) {
  const [query, setQuery] = useState('');
  const [applied, setApplied] = useState('');
  // Pages after the first, appended by "Load more"; a reload starts again from the first.
  const [more, setMore] = useState<Blueprint[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const blueprints = useList(
    useCallback(async () => {
      const page = await listPage(applied, null);
      setMore([]);
      setCursor(page.nextCursor ?? null);
      return page.blueprints;
    }, [applied]),
  );
  const loadMore = useAction(
    useCallback(
      async (from: string) => {
        const page = await listPage(applied, from);
        setMore((rows) => [...rows, ...page.blueprints]);
        setCursor(page.nextCursor ?? null);
      },
      [applied],
    ),
  );
  return (
    <>
      <p className="lead">
        Blueprints are the components your agents' cards reuse. They appear as agents render cards, or when registered
        below. Each is shown live with its example props.
      </p>
      {tools.includes(TOOLS.registerBlueprint) && <RegisterBlueprint onRegistered={blueprints.reload} />}
      <form
        className="inline-form"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(query);
        }}
      >
        <label htmlFor="blueprint-search">Search by intent</label>
        <input id="blueprint-search" type="search" value={query} onChange={(e) => setQuery(e.target.value)} />
        <button type="submit">Search</button>
      </form>
      {blueprints.error && <p className="error">{blueprints.error}</p>}
      {blueprints.items === null && !blueprints.error && <Busy label="Loading blueprints…" />}
      {blueprints.items?.length === 0 && (
        <Empty>
          {applied
            ? 'No blueprint matches those words: try fewer or other words.'
            : 'No blueprints yet: they appear when an agent renders a card in this app, or register one above.'}
        </Empty>
      )}
      <ul className="cards">
        {blueprints.items?.concat(more).map((b) => (
          <BlueprintCard key={b.blueprintId} blueprint={b} onChanged={blueprints.reload} />
        ))}
      </ul>
      {blueprints.items && cursor && (
        <button type="button" onClick={() => void loadMore.run(cursor)} disabled={loadMore.running}>
          {loadMore.running ? 'Loading…' : 'Load more blueprints'}
        </button>
      )}
      <ErrorText id="blueprints-more-error" error={loadMore.error} />
    </>
  );
}

function BlueprintCard({ blueprint, onChanged }: { blueprint: Blueprint; onChanged: () => Promise<void> }) {
  const id = blueprint.blueprintId;
  const makeDefault = useAction(
    useCallback(async () => {
      await callTool(TOOLS.updateBlueprint, { blueprintId: id, isOperatorDefault: true });
      await onChanged();
    }, [id, onChanged]),
  );
  const remove = useAction(
    useCallback(async () => {
      await callTool(TOOLS.deleteBlueprint, { blueprintId: id });
      await onChanged();
    }, [id, onChanged]),
  );
  const title = blueprint.intent ?? blueprint.description ?? id;
  return (
    <li className="card" aria-label={`Blueprint ${title}`}>
      <h3>
        {title} {blueprint.isOperatorDefault && <span className="badge">Operator default</span>}
      </h3>
      <BlueprintPreview blueprintId={id} title={title} mountable={blueprint.mountable} />
      <dl className="facts">
        <dt>Generator</dt>
        <dd>{blueprint.generator}</dd>
        <dt>Contract</dt>
        <dd>
          <code>{blueprint.contractHash.slice(0, 12)}</code>
        </dd>
        <dt>Created</dt>
        <dd>{formatTime(blueprint.createdAt)}</dd>
        {blueprint.persona && (
          <>
            <dt>Persona</dt>
            <dd>{blueprint.persona}</dd>
          </>
        )}
      </dl>
      <details className="variance-details">
        <summary>Edit variance</summary>
        <VarianceEditor blueprint={blueprint} onSaved={onChanged} />
      </details>
      <div className="actions">
        {!blueprint.isOperatorDefault && (
          <button type="button" onClick={() => void makeDefault.run()} disabled={makeDefault.running}>
            Make operator default
          </button>
        )}
        <ConfirmButton
          label="Delete"
          question="Delete this blueprint? Cards already rendered keep it."
          confirmLabel="Yes, delete"
          running={remove.running}
          onConfirm={() => void remove.run()}
        />
      </div>
      <ErrorText id={`blueprint-${id}-error`} error={makeDefault.error ?? remove.error} />
    </li>
  );
}
