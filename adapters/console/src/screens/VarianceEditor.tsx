// Edit a blueprint's variance: change or clear its fields, or add one. Only what changed is sent
// (svc_ops_update_blueprint merges field by field; an empty string removes a field).

import { useCallback, useId, useState } from 'react';

import { callTool } from '../api';
import { TOOLS, type Blueprint } from '../tools';
import { ErrorText, useAction } from '../ui';

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function VarianceEditor({ blueprint, onSaved }: { blueprint: Blueprint; onSaved: () => Promise<void> }) {
  const base = useId();
  const stored = blueprint.variance ?? {};
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [newName, setNewName] = useState('');
  const [newValue, setNewValue] = useState('');
  const [saved, setSaved] = useState(false);
  const save = useAction(
    useCallback(async () => {
      const patch: Record<string, string> = {};
      for (const [name, value] of Object.entries(edits)) {
        if (value !== shown(stored[name])) patch[name] = value;
      }
      if (newName.trim()) patch[newName.trim()] = newValue;
      await callTool(TOOLS.updateBlueprint, { blueprintId: blueprint.blueprintId, variance: patch });
      setEdits({});
      setNewName('');
      setNewValue('');
      setSaved(true);
      await onSaved();
    }, [edits, newName, newValue, stored, blueprint.blueprintId, onSaved]),
  );
  const errorId = `${base}-error`;
  const fields = Object.keys(stored);
  return (
    <form
      className="grid-form variance"
      aria-label="Variance"
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(false);
        void save.run();
      }}
    >
      {fields.length === 0 && <p className="meta">No variance yet: add a field (for example tone or density).</p>}
      {fields.map((name) => (
        <div className="field" key={name}>
          <label htmlFor={`${base}-${name}`}>{name}</label>
          <input
            id={`${base}-${name}`}
            value={edits[name] ?? shown(stored[name])}
            onChange={(e) => setEdits((all) => ({ ...all, [name]: e.target.value }))}
            aria-describedby={errorId}
          />
        </div>
      ))}
      <div className="field">
        <label htmlFor={`${base}-new-name`}>New field</label>
        <input id={`${base}-new-name`} value={newName} onChange={(e) => setNewName(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor={`${base}-new-value`}>Its value</label>
        <input id={`${base}-new-value`} value={newValue} onChange={(e) => setNewValue(e.target.value)} />
      </div>
      <p className="meta">Empty a field to remove it.</p>
      <button type="submit" disabled={save.running}>
        {save.running ? 'Saving…' : 'Save variance'}
      </button>
      <p role="status" className="meta">
        {saved && !save.running ? 'Variance saved.' : ''}
      </p>
      <ErrorText id={errorId} error={save.error} />
    </form>
  );
}
