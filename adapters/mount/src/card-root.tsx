// The root view: the component inside an error boundary, and the status lines for what the user
// should know: a notice (a failure, a refused action) and the channel's state (loading,
// generating, reconnecting), both when both apply.

import { createElement, useSyncExternalStore, type ReactNode } from 'react';
import { ErrorBoundary } from './error-boundary';
import { NOTICE_PRIORITY, type CardState, type Store } from './store';

const LIVE_OFF = "Live updates are off: this host does not allow the card to connect to its server. It shows the data it was rendered with, and buttons cannot reach the agent.";

const PREVIEW = 'Preview with example props: buttons reach no agent.';

interface StatusLine {
  kind: 'info' | 'error';
  text: string;
}

export function CardRoot({ store }: { store: Store }): ReactNode {
  const state = useSyncExternalStore(store.subscribe, store.get);
  return (
    <>
      {state.component && (
        // New props (an update, an amend, a new epoch) or a new component give a card that threw
        // another chance.
        <ErrorBoundary resetKeys={[state.component, state.props, state.epoch]}>{createElement(state.component)}</ErrorBoundary>
      )}
      {statusLines(state).map((status) => (
        <div key={status.kind} className="svc-status" role={status.kind === 'error' ? 'alert' : 'status'} data-kind={status.kind}>
          {status.text}
        </div>
      ))}
    </>
  );
}

/** At most one error line (the most important notice) and one info line. */
export function statusLines(state: CardState): StatusLine[] {
  const lines: StatusLine[] = [];
  const cause = NOTICE_PRIORITY.find((candidate) => state.notices[candidate] !== undefined);
  if (cause) lines.push({ kind: 'error', text: state.notices[cause]! });
  else if (state.phase === 'failed') lines.push({ kind: 'error', text: 'This card could not be shown.' });
  const info = infoLine(state);
  if (info) lines.push({ kind: 'info', text: info });
  return lines;
}

function infoLine(state: CardState): string | null {
  if (state.live === 'off') return LIVE_OFF;
  if (state.live === 'preview') return PREVIEW;
  if (state.phase === 'generating') return state.progress ?? 'Generating…';
  if (state.phase === 'connecting') return state.live === 'reconnecting' ? 'Connecting… (retrying)' : 'Loading…';
  if (state.live === 'reconnecting') return 'Reconnecting…';
  return null;
}
