// `@svc/gadgets`: the seven standard hooks (domain/src/gadgets.rs documents their contracts).
// They read the active mount's store and talk to the agent only through it.

import { useCallback, useEffect, useSyncExternalStore } from 'react';
import { EMPTY_STREAM, EMPTY_TOOL_CHANNEL, type CardState, type Store, type StreamState, type ThemeState, type ToolChannelState } from './store';
import type { ActionOutcome, JsonObject } from './protocol';

/** What the hooks need from the card they run in: the mounted card (`Mount`), or the server's
 * render check (`render-check.tsx`), which runs these same hooks against fixture props. */
export interface GadgetHost {
  readonly store: Store;
  act(intent: string, data: unknown): Promise<ActionOutcome>;
  slotValue(state: CardState, name: string): unknown;
  isToolChannel(channel: string): boolean;
  retainChannel(channel: string): () => void;
}

let active: GadgetHost | null = null;

export function setActiveMount(mount: GadgetHost | null): void {
  active = mount;
}

function mount(): GadgetHost {
  if (!active) throw new Error('@svc/gadgets hooks only work inside a mounted svc card');
  return active;
}

function useCard<T>(select: (state: CardState) => T): T {
  const store = mount().store;
  const snapshot = (): T => select(store.get());
  // The third argument serves server rendering (the render check); the browser never calls it.
  return useSyncExternalStore(store.subscribe, snapshot, snapshot);
}

/** The render's current props; replaced on every `svc_update` / `svc_amend`. */
export function useProps<T = Record<string, unknown>>(): T {
  return useCard((state) => state.props) as T;
}

/** A function sending one `data:submit` with `intent` and the context slot snapshot. Its promise
 * says whether the server stored the action or refused it (with the fields it named); it never
 * rejects, and a caller may ignore it. */
export function useAction(intent: string): (data?: unknown) => Promise<ActionOutcome> {
  const current = mount();
  return useCallback((data?: unknown) => current.act(intent, data), [current, intent]);
}

/** Every payload on `channel` so far (`items`), the latest (`last`), and the terminal marker. */
export function useStream<T = unknown>(channel: string): { items: T[]; last: T | undefined; complete: boolean } {
  const current = mount();
  useEffect(() => (current.isToolChannel(channel) ? current.retainChannel(channel) : undefined), [current, channel]);
  const stream: StreamState = useCard((state) => state.streams[channel] ?? EMPTY_STREAM);
  return stream as { items: T[]; last: T | undefined; complete: boolean };
}

/** A contextSpec slot: its value (the slot's default until set) and a setter. */
export function useContextSlot<T = unknown>(name: string): [T, (next: T | ((previous: T) => T)) => void] {
  const current = mount();
  const value = useCard((state) => current.slotValue(state, name)) as T;
  const setValue = useCallback(
    (next: T | ((previous: T) => T)) => {
      const resolved = typeof next === 'function' ? (next as (previous: T) => T)(current.slotValue(current.store.get(), name) as T) : next;
      current.store.setSlot(name, resolved);
    },
    [current, name],
  );
  return [value, setValue];
}

/** The active theme: id, light/dark mode, and the `--svc-*` variables applied at the root. */
export function useTheme(): ThemeState {
  return useCard((state) => state.theme);
}

/** What the host reported about where the card is shown (theme, displayMode, locale, ...). */
export function useHostContext(): JsonObject {
  return useCard((state) => state.hostContext);
}

/** The latest result of a `source.tool` channel, and the latest error message (or null). */
export function useToolChannel<T = unknown>(channel: string): { payload: T | undefined; error: string | null } {
  const current = mount();
  useEffect(() => current.retainChannel(channel), [current, channel]);
  const result: ToolChannelState = useCard((state) => state.toolChannels[channel] ?? EMPTY_TOOL_CHANNEL);
  return result as { payload: T | undefined; error: string | null };
}
