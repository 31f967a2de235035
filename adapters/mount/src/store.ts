// The card's state, fed by the socket and the host, read by the gadget hooks through
// `useSyncExternalStore`. Updates are immutable per key, so a selector returns the same
// reference until its part of the state changes.

import type { ComponentType } from 'react';
import type { ThemeMode } from './bootstrap';
import type { Contract, JsonObject } from './protocol';

export interface StreamState {
  items: unknown[];
  last: unknown;
  complete: boolean;
}

export interface ToolChannelState {
  payload: unknown;
  error: string | null;
}

export interface ThemeState {
  id: string;
  mode: ThemeMode;
  vars: Record<string, string>;
}

/**
 * Why the card tells the user something, which also says when the message ends
 * (docs/live-channel.md, "What the card tells the user"):
 * - `failure`: the card cannot work (the live channel closed for good); it stays;
 * - `load`: the component (or its render) failed to load; until a component paints;
 * - `action`: an action was not stored; until a later action is;
 * - `channel`: an error the server sent about no action; until the next `ack` or a stored
 *   action, and at most a few seconds.
 */
export type NoticeCause = 'failure' | 'load' | 'action' | 'channel';

/** The order the status line picks the one notice it shows in. */
export const NOTICE_PRIORITY: readonly NoticeCause[] = ['failure', 'load', 'action', 'channel'];

/** What the card shows around the component: the live channel and generation state. */
export type Phase = 'connecting' | 'generating' | 'ready' | 'failed';

export interface CardState {
  phase: Phase;
  /** `off`: the host's policy allows no connection to the server; the card shows what it has.
   * `preview`: no session behind the card (a blueprint preview), so nothing to connect to. */
  live: 'connecting' | 'live' | 'reconnecting' | 'failed' | 'closed' | 'off' | 'preview';
  /** How the live frames travel: the WebSocket, or `pollingUrl` where the socket is blocked;
   * `closed` once the channel closed for good; `none` for a preview, which never opens one. */
  transport: 'websocket' | 'polling' | 'closed' | 'none';
  /** Messages for the user by cause: why the card failed, a refused action, ... */
  notices: Readonly<Partial<Record<NoticeCause, string>>>;
  progress: string | null;
  component: ComponentType | null;
  contract: Contract;
  props: unknown;
  epoch: number;
  streams: Readonly<Record<string, StreamState>>;
  slots: Readonly<Record<string, unknown>>;
  toolChannels: Readonly<Record<string, ToolChannelState>>;
  theme: ThemeState;
  hostContext: JsonObject;
}

export const EMPTY_STREAM: StreamState = Object.freeze({ items: Object.freeze([]) as unknown as unknown[], last: undefined, complete: false });
export const EMPTY_TOOL_CHANNEL: ToolChannelState = Object.freeze({ payload: undefined, error: null });

/** A slot's value: what the card set, else the contextSpec default. */
export function contextSlotValue(state: CardState, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(state.slots, name)) return state.slots[name];
  return state.contract.contextSpec?.[name]?.default;
}

export class Store {
  private state: CardState;
  private readonly listeners = new Set<() => void>();

  constructor(initial: CardState) {
    this.state = initial;
  }

  get = (): CardState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  update(patch: Partial<CardState> | ((state: CardState) => Partial<CardState>)): void {
    const changes = typeof patch === 'function' ? patch(this.state) : patch;
    this.state = { ...this.state, ...changes };
    for (const listener of this.listeners) listener();
  }

  /** Folds one stream delivery by mode: append adds to `items`, replace keeps only the latest. */
  applyStream(channel: string, mode: 'append' | 'replace', payload: unknown, hasPayload: boolean, complete: boolean): void {
    this.update((state) => {
      const current = state.streams[channel] ?? EMPTY_STREAM;
      let next: StreamState = current;
      if (hasPayload) {
        next = mode === 'append'
          ? { items: [...current.items, payload], last: payload, complete: current.complete }
          : { items: [payload], last: payload, complete: current.complete };
      }
      if (complete && !next.complete) next = { ...next, complete: true };
      return next === current ? {} : { streams: { ...state.streams, [channel]: next } };
    });
  }

  /** Sets (a string) or ends (null) the notice of `cause`. */
  setNotice(cause: NoticeCause, text: string | null): void {
    this.update((state) => {
      if ((state.notices[cause] ?? null) === text) return {};
      const notices = { ...state.notices };
      if (text === null) delete notices[cause];
      else notices[cause] = text;
      return { notices };
    });
  }

  setSlot(name: string, value: unknown): void {
    this.update((state) => ({ slots: { ...state.slots, [name]: value } }));
  }

  setToolChannel(channel: string, change: Partial<ToolChannelState>): void {
    this.update((state) => {
      const current = state.toolChannels[channel] ?? EMPTY_TOOL_CHANNEL;
      return { toolChannels: { ...state.toolChannels, [channel]: { ...current, ...change } } };
    });
  }
}
