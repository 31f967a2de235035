// `ActionButton` of the kit: one button sending one actionSpec intent the way the built-in
// generator's buttons do: styled by tone, disabled while sending (a double click sends once),
// then "Sent", or the server's reason when it refused the data.

import { useRef, useState, type ReactNode } from 'react';
import { useAction } from '../gadgets';
import type { ActionOutcome } from '../protocol';

export interface ActionButtonProps {
  intent: string;
  /** The `actionData` sent; omit for an intent that takes none. */
  data?: unknown;
  /** primary (one per card), secondary, or danger (reject, delete, cancel...). Default: secondary. */
  tone?: 'primary' | 'secondary' | 'danger';
  children: ReactNode;
  /** Told what became of the gesture, e.g. to show the violations on their fields. */
  onOutcome?: (outcome: ActionOutcome) => void;
}

const TONES = {
  primary: { color: 'var(--svc-color-accent-fg)', background: 'var(--svc-color-accent)', border: 'none' },
  secondary: { color: 'var(--svc-color-fg)', background: 'var(--svc-color-bg)', border: '1px solid var(--svc-color-border)' },
  danger: { color: 'var(--svc-color-accent-fg)', background: 'var(--svc-color-danger)', border: 'none' },
} as const;

export function ActionButton({ intent, data, tone = 'secondary', children, onOutcome }: ActionButtonProps): ReactNode {
  const submit = useAction(intent);
  const once = useRef(false);
  const [phase, setPhase] = useState<'idle' | 'sending' | 'sent' | 'refused'>('idle');
  const [reason, setReason] = useState('');
  const send = (): void => {
    if (once.current) return;
    once.current = true;
    setPhase('sending');
    void submit(data).then((outcome) => {
      if (!outcome.ok) {
        once.current = false;
        setReason(outcome.message);
      }
      setPhase(outcome.ok ? 'sent' : 'refused');
      onOutcome?.(outcome);
    });
  };
  return (
    <span style={{ display: 'inline-flex', flexWrap: 'wrap', alignItems: 'center', gap: 'var(--svc-space)' }}>
      <button
        type="button"
        data-intent={intent}
        data-tone={tone}
        disabled={phase === 'sending' || phase === 'sent'}
        aria-busy={phase === 'sending'}
        onClick={send}
        style={{ ...TONES[tone], font: 'inherit', fontWeight: 600, padding: 'var(--svc-space) calc(var(--svc-space) * 2)', borderRadius: 'var(--svc-radius)', cursor: 'pointer', whiteSpace: 'nowrap' }}
      >
        {children}
      </button>
      {phase === 'sending' && <span role="status" style={{ fontSize: '0.9em', color: 'var(--svc-color-muted)' }}>Sending…</span>}
      {phase === 'sent' && <span role="status" style={{ fontSize: '0.9em', color: 'var(--svc-color-success)' }}>Sent</span>}
      {phase === 'refused' && <span role="alert" style={{ fontSize: '0.9em', color: 'var(--svc-color-danger)' }}>{`Not sent — ${reason}`}</span>}
    </span>
  );
}
