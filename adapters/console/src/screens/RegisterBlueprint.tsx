// Register your own component: its DataContract (JSON) and TSX with a default-exported React
// component, stored as given (svc_ops_register_blueprint generates and validates nothing).

import { useCallback, useState } from 'react';

import { ConsoleError, callTool } from '../api';
import { TOOLS, type RegisteredBlueprint } from '../tools';
import { ErrorText, useAction } from '../ui';

const EXAMPLE_CONTRACT = `{
  "propsSpec": {
    "type": "object",
    "properties": { "title": { "type": "string" } },
    "required": ["title"]
  }
}`;

const EXAMPLE_CODE = `import { useProps } from '@svc/gadgets';

export default function Title() {
  const { title } = useProps<{ title: string }>();
  return <h2>{title || 'Untitled'}</h2>;
}`;

function parsedContract(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ConsoleError('invalid_params', `Invalid params: contract: not JSON (${(e as Error).message})`, 'contract');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConsoleError('invalid_params', 'Invalid params: contract: must be a JSON object', 'contract');
  }
  return value as Record<string, unknown>;
}

export function RegisterBlueprint({ onRegistered }: { onRegistered: () => Promise<void> }) {
  const [contract, setContract] = useState(EXAMPLE_CONTRACT);
  const [code, setCode] = useState(EXAMPLE_CODE);
  const [description, setDescription] = useState('');
  const [persona, setPersona] = useState('');
  const [makeDefault, setMakeDefault] = useState(false);
  const [registered, setRegistered] = useState<RegisteredBlueprint | null>(null);
  const register = useAction(
    useCallback(async () => {
      const args: Record<string, unknown> = { contract: parsedContract(contract), componentCode: code };
      if (description.trim()) args.context = description.trim();
      if (persona.trim()) args.persona = persona.trim();
      if (makeDefault) args.setAsOperatorDefault = true;
      setRegistered(await callTool<RegisteredBlueprint>(TOOLS.registerBlueprint, args));
      await onRegistered();
    }, [contract, code, description, persona, makeDefault, onRegistered]),
  );
  return (
    <details className="card register">
      <summary>Register a blueprint</summary>
      <form
        className="stack-form"
        onSubmit={(e) => {
          e.preventDefault();
          setRegistered(null);
          void register.run();
        }}
      >
        <label htmlFor="register-contract">Contract (JSON)</label>
        <textarea
          id="register-contract"
          rows={7}
          spellCheck={false}
          value={contract}
          onChange={(e) => setContract(e.target.value)}
          aria-describedby="register-error"
        />
        <label htmlFor="register-code">Component (TSX, default export)</label>
        <textarea
          id="register-code"
          rows={8}
          spellCheck={false}
          value={code}
          onChange={(e) => setCode(e.target.value)}
          aria-describedby="register-error"
        />
        <label htmlFor="register-description">Description (optional)</label>
        <input id="register-description" value={description} onChange={(e) => setDescription(e.target.value)} />
        <label htmlFor="register-persona">Persona (optional)</label>
        <input id="register-persona" value={persona} onChange={(e) => setPersona(e.target.value)} />
        <label className="check">
          <input type="checkbox" checked={makeDefault} onChange={(e) => setMakeDefault(e.target.checked)} /> Make it the
          operator default of its contract
        </label>
        <button type="submit" disabled={register.running}>
          {register.running ? 'Registering…' : 'Register blueprint'}
        </button>
        <p role="status" className="meta">
          {registered ? `Registered ${registered.blueprintId} (code ${registered.codeHash.slice(0, 12)}).` : ''}
        </p>
        <ErrorText id="register-error" error={register.error} />
      </form>
    </details>
  );
}
