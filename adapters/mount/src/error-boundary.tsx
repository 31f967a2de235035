// Catches a throwing component and shows what went wrong instead of a blank frame.

import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  /** A new value (new props, a new component) gives the card another chance. */
  resetKey: unknown;
  children: ReactNode;
}

interface State {
  error: Error | null;
  key: unknown;
}

export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null, key: this.props.resetKey };

  static getDerivedStateFromError(error: unknown): Partial<State> {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  static getDerivedStateFromProps(props: Props, state: State): Partial<State> | null {
    return props.resetKey !== state.key ? { error: null, key: props.resetKey } : null;
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
