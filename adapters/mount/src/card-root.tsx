// The root view: the component inside an error boundary, and one status line for what the user
// should know (loading, generating, reconnecting, a failure).

import { createElement, useSyncExternalStore, type ReactNode } from 'react';
import { ErrorBoundary } from './error-boundary';
import type { CardState, Store } from './store';

const LIVE_OFF = "Live updates are off: this host does not allow the card to connect to its server. It shows the data it was rendered with, and buttons cannot reach the agent.";

const PREVIEW = 'Preview with example props: buttons reach no agent.';

export function CardRoot({ store }: { store: Store }): ReactNode {
  const state = useSyncExternalStore(store.subscribe, store.get);
  const status = statusLine(state);
  return (
    <>
      {state.component && (
        <ErrorBoundary resetKey={state.component}>{createElement(state.component)}</ErrorBoundary>
      )}
      {status && (
        <div className="svc-status" role={status.kind === 'error' ? 'alert' : 'status'} data-kind={status.kind}>
          {status.text}
        </div>
      )}
    </>
  );
}

function statusLine(state: CardState): { kind: 'info' | 'error'; text: string } | null {
  if (state.phase === 'failed') return { kind: 'error', text: state.notice ?? 'This card could not be shown.' };
  if (state.notice) return { kind: 'error', text: state.notice };
  if (state.live === 'off') return { kind: 'info', text: LIVE_OFF };
  if (state.live === 'preview') return { kind: 'info', text: PREVIEW };
  if (state.phase === 'generating') return { kind: 'info', text: state.progress ?? 'Generating…' };
  if (state.phase === 'connecting') return { kind: 'info', text: state.live === 'reconnecting' ? 'Connecting… (retrying)' : 'Loading…' };
  if (state.live === 'reconnecting') return { kind: 'info', text: 'Reconnecting…' };
  return null;
}
