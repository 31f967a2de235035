// Small shared pieces: an action's running and error state, errors in words beside their control,
// confirmation before anything destructive, empty states that say what to do.

import { useCallback, useId, useState, type ReactNode } from 'react';

import { describe } from './messages';

export interface Action<A extends unknown[]> {
  run: (...args: A) => Promise<boolean>;
  running: boolean;
  error: string | null;
  clear: () => void;
}

/** Runs `work`, keeping whether it runs and its error in words; resolves to whether it succeeded. */
export function useAction<A extends unknown[]>(work: (...args: A) => Promise<void>): Action<A> {
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(
    async (...args: A) => {
      setRunning(true);
      setError(null);
      try {
        await work(...args);
        return true;
      } catch (e) {
        setError(describe(e));
        return false;
      } finally {
        setRunning(false);
      }
    },
    [work],
  );
  return { run, running, error, clear: () => setError(null) };
}

/** The error of a control, announced to screen readers, referenced by the control's aria-describedby. */
export function ErrorText({ id, error }: { id: string; error: string | null }) {
  return (
    <p id={id} className="error" role="alert" hidden={!error}>
      {error}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export function Busy({ label }: { label: string }) {
  return (
    <p className="busy" role="status">
      {label}
    </p>
  );
}

/** A destructive button that asks once more, in place, before it acts. */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  running,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  running: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const questionId = useId();
  if (!asking) {
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)} disabled={running}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-labelledby={questionId}>
      <span id={questionId}>{question}</span>
      <button
        type="button"
        className="danger"
        autoFocus
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

export function formatTime(iso: string | undefined | null): string {
  if (!iso) return 'never';
  const time = new Date(iso);
  return Number.isNaN(time.getTime()) ? iso : time.toLocaleString();
}

export function formatCents(cents: number): string {
  return (cents / 100).toLocaleString(undefined, { style: 'currency', currency: 'USD' });
}
