// Catches a throwing component and shows what went wrong instead of a blank frame.

import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  /** When any of these changes (by identity: new props, a new epoch, a new component), the card
   * gets another chance. */
  resetKeys: readonly unknown[];
  children: ReactNode;
}

interface State {
  error: Error | null;
  keys: readonly unknown[];
}

/** Whether two lists of reset keys differ in length or in any element (by `Object.is`). */
export function resetKeysChanged(previous: readonly unknown[], next: readonly unknown[]): boolean {
  return previous.length !== next.length || previous.some((key, i) => !Object.is(key, next[i]));
}

export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null, keys: this.props.resetKeys };

  static getDerivedStateFromError(error: unknown): Partial<State> {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  static getDerivedStateFromProps(props: Props, state: State): Partial<State> | null {
    return resetKeysChanged(state.keys, props.resetKeys) ? { error: null, keys: props.resetKeys } : null;
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    // React gives the component stack; preact/compat (a card's React) gives none.
    console.error('[svc] the card threw while rendering', error, info.componentStack ?? '');
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <div className="svc-error" role="alert" data-svc-error="">
        {`This card failed to render: ${error.message || error.name}`}
      </div>
    );
  }
}
