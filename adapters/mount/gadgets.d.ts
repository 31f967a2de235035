// Types of `@svc/gadgets`, the package every svc card imports its hooks and components from: the
// built-in generator's cards and a language model's alike. Served at `/_svc/gadgets.d.ts`;
// `src/kit-types.ts` checks the runtime's exports against it on every `npm run check`.

declare module '@svc/gadgets' {
  import type { ReactNode } from 'react';

  /** What became of one `useAction` call: stored for the agent, or refused with the reasons. */
  export type ActionOutcome =
    | { ok: true; actionId: string; duplicate: boolean }
    | { ok: false; code: string; message: string; violations: { path: string; message: string }[] };

  // ---- hooks ----

  /** The render's current props; replaced on every `svc_update` / `svc_amend`. */
  export function useProps<T = Record<string, unknown>>(): T;
  /** Sends one `data:submit` for `intent`; the promise says stored or refused (never rejects). */
  export function useAction(intent: string): (data?: unknown) => Promise<ActionOutcome>;
  /** Every payload on a streamSpec channel so far, the latest, and the terminal marker. */
  export function useStream<T = unknown>(channel: string): { items: T[]; last: T | undefined; complete: boolean };
  /** A contextSpec slot: its value (the slot's default until set) and a setter. */
  export function useContextSlot<T = unknown>(name: string): [T, (next: T | ((previous: T) => T)) => void];
  /** The active theme: id, light/dark mode, and the `--svc-*` variables applied at the root. */
  export function useTheme(): { id: string; mode: 'light' | 'dark'; vars: Record<string, string> };
  /** What the host reported about where the card is shown (theme, displayMode, locale, ...). */
  export function useHostContext(): { [key: string]: unknown };
  /** The latest result of a `source.tool` channel, and the latest error message (or null). */
  export function useToolChannel<T = unknown>(channel: string): { payload: T | undefined; error: string | null };

  // ---- components ----

  /** A button sending one intent: tone-styled, disabled while sending (a double click sends
   * once), then "Sent", or the server's reason when it refused the data. */
  export function ActionButton(props: {
    intent: string;
    data?: unknown;
    tone?: 'primary' | 'secondary' | 'danger';
    children: ReactNode;
    onOutcome?: (outcome: ActionOutcome) => void;
  }): ReactNode;

  /** A bar chart, a line chart or a sparkline as accessible SVG: one image whose label names
   * every point (a sparkline: its values in order). Keep the numbers on the card too (a list or
   * a DataTable). */
  export function Chart(props: {
    kind: 'bar' | 'line' | 'sparkline';
    label: string;
    points: { label: string; value: number }[];
    format?: (value: number) => string;
  }): ReactNode;

  /** Rows as a table with right-aligned numbers while every column fits; a stacked list with
   * every column labelled when the card is narrower. */
  export function DataTable<Row>(props: {
    rows: Row[];
    columns: { label: string; numeric?: boolean; cell: (row: Row) => ReactNode }[];
    empty?: string;
  }): ReactNode;

  export type StatusTone = 'danger' | 'success' | 'accent' | 'muted';
  /** A status word as a badge, coloured by its meaning (or by `tone`). */
  export function StatusBadge(props: { value: string; tone?: StatusTone }): ReactNode;
  /** The tone StatusBadge gives a status word. */
  export function statusTone(value: string): StatusTone;
}
