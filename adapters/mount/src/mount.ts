// The mount controller: owns the store and the live socket, turns frames into state, and turns
// gestures into frames.

import type { Bootstrap, ThemeMode } from './bootstrap';
import { watchConnectPolicy } from './connect-policy';
import { asGadgetBundles, type GadgetBundle } from './gadget-bundles';
import type { GadgetHost } from './gadgets';
import { LiveSocket, type LiveStatus } from './live-socket';
import type { ModuleLoader } from './module-loader';
import { asModuleLinks, type ModuleLinks } from './module-links';
import {
  LIFECYCLE_CHANNEL,
  isObject,
  type AckPayload,
  type ActionEnvelope,
  type ActionOutcome,
  type ActionViolation,
  type Contract,
  type ErrorPayload,
  type Frame,
  type JsonObject,
  type StreamEnvelope,
} from './protocol';
import { contextSlotValue, Store, type CardState, type ThemeState } from './store';
import { isThemeMode, themeVariables } from './theme';

/** What the mount may ask of its environment (the host bridge). */
export interface MountServices {
  /** A fresh wsToken for `sessionId`, or null when none can be had. */
  refreshWsToken?(sessionId: string): Promise<string | null>;
  /** An action the card sent, once the server answered (the host may show it). */
  onActionSettled?(intent: string, data: unknown, outcome: ActionOutcome): void;
}

const HOST_CONTEXT_ECHO_DELAY_MS = 250;
/** The longest an error the server sent about no action stays on the status line. */
export const CHANNEL_NOTICE_MS = 10_000;
/** Host context fields not worth echoing to the agent (large, or host-internal). */
const HOST_CONTEXT_SKIPPED = new Set(['styles', 'toolInfo']);

export class Mount implements GadgetHost {
  readonly store: Store;
  private socket: LiveSocket | null = null;
  private readonly channelRefs = new Map<string, number>();
  /** The component code loaded or loading now; null after a failure, so the next ack retries. */
  private loadedCode: string | null = null;
  private channelNoticeTimer: number | undefined;
  private echoTimer: number | undefined;
  private lastEcho = '';
  private stopWatchingPolicy: () => void = () => {};
  /** `useAction` calls waiting for the server's answer, by clientSeq. */
  private readonly pendingActions = new Map<number, (outcome: ActionOutcome) => void>();

  constructor(
    private readonly bootstrap: Bootstrap,
    private readonly loader: ModuleLoader,
    hostContext: JsonObject,
    private readonly services: MountServices = {},
  ) {
    this.store = new Store({
      phase: 'connecting',
      live: 'connecting',
      // A preview opens no channel (`start`): from the first paint its data-svc-transport says so.
      transport: bootstrap.preview ? 'none' : 'websocket',
      notices: {},
      progress: null,
      component: null,
      contract: isObject(bootstrap.contract) ? bootstrap.contract : {},
      props: bootstrap.props ?? {},
      epoch: bootstrap.epoch ?? 1,
      streams: {},
      slots: {},
      toolChannels: {},
      theme: initialTheme(bootstrap, hostContext),
      hostContext,
    });
  }

  start(): void {
    const { wsUrl, sessionId, component } = this.bootstrap;
    // An embedded component paints now; the ack brings the same code (and live props) later.
    if (typeof component?.code === 'string' && component.code !== '') {
      void this.loadComponent(component.code, asGadgetBundles(this.bootstrap.gadgetBundles), asModuleLinks(component.links));
    }
    if (this.bootstrap.preview) {
      // A blueprint preview has no session: the component and its example props are all there is.
      this.store.update({ live: 'preview' });
      return;
    }
    const { pollingUrl } = this.bootstrap;
    if (!wsUrl && !pollingUrl) {
      this.store.update({ phase: 'failed', live: 'failed', transport: 'closed' });
      this.store.setNotice('failure', 'This card has no live-channel address (wsUrl).');
      return;
    }
    // A host that allows neither the socket nor polling: stop trying and say so.
    this.stopWatchingPolicy = watchConnectPolicy([wsUrl, pollingUrl].filter((url): url is string => !!url), () => {
      this.socket?.stop('this host does not allow the card to connect to its server');
      this.store.update({ live: 'off' });
    });
    this.socket = new LiveSocket({
      ...(wsUrl ? { url: wsUrl } : {}),
      ...(pollingUrl ? { pollingUrl } : {}),
      onTransport: (transport) => this.store.update({ transport }),
      sessionId,
      ...(this.bootstrap.appId ? { appId: this.bootstrap.appId } : {}),
      ...(this.bootstrap.wsToken ? { wsToken: this.bootstrap.wsToken } : {}),
      ...(typeof this.bootstrap.lastSequence === 'number' ? { lastSequence: this.bootstrap.lastSequence } : {}),
      onAck: (ack) => this.onAck(ack),
      onFrame: (frame) => this.onFrame(frame),
      onStatus: (status, detail) => this.onStatus(status, detail),
      onReplayGap: () => this.store.update({ streams: {} }),
      onActionFailed: (action, error) => this.onActionFailed(action, error),
      onActionStored: (clientSeq, actionId, duplicate) => this.onActionStored(clientSeq, actionId, duplicate),
      ...(this.services.refreshWsToken ? { refreshWsToken: () => this.services.refreshWsToken!(sessionId) } : {}),
    });
    this.socket.start();
  }

  stop(): void {
    this.stopWatchingPolicy();
    window.clearTimeout(this.echoTimer);
    window.clearTimeout(this.channelNoticeTimer);
    this.socket?.stop();
  }

  /** `useAction(intent)(data)`: one `data:submit` with the slot snapshot as `uiContext`. The
   * promise settles when the server stored the action or refused it for good, or when the
   * channel closed for good (`NOT_CONNECTED`; at once for an action sent after that); it never rejects. An action
   * queued while offline waits (it is delivered once the channel is back); one refused for now
   * (SERVER_BUSY, RATE_LIMITED) is sent again after the server's wait. */
  act(intent: string, data: unknown): Promise<ActionOutcome> {
    if (!this.socket) {
      return Promise.resolve({ ok: false, code: 'NOT_CONNECTED', message: 'This card has no live channel.', violations: [] });
    }
    // An echo still waiting for its debounce goes first: the agent's svc_consume then sees the
    // host context the gesture was made in.
    this.flushEcho();
    const socket = this.socket;
    const sent = toJson(data);
    const settled = new Promise<ActionOutcome>((resolve) => {
      const clientSeq = socket.sendAction(intent, sent, this.uiContext());
      this.pendingActions.set(clientSeq, resolve);
    });
    return settled.then((outcome) => {
      this.services.onActionSettled?.(intent, sent, outcome);
      return outcome;
    });
  }

  /** A slot's value: what the card set, else the contextSpec default. */
  slotValue(state: CardState, name: string): unknown {
    return contextSlotValue(state, name);
  }

  isToolChannel(channel: string): boolean {
    return typeof this.store.get().contract.streamSpec?.[channel]?.source?.tool === 'string';
  }

  /** Subscribes a tool channel while at least one hook reads it; returns the release. */
  retainChannel(channel: string): () => void {
    const count = this.channelRefs.get(channel) ?? 0;
    this.channelRefs.set(channel, count + 1);
    if (count === 0) this.socket?.send({ type: 'channel_subscribe', payload: channel });
    return () => {
      const left = (this.channelRefs.get(channel) ?? 1) - 1;
      if (left > 0) {
        this.channelRefs.set(channel, left);
        return;
      }
      this.channelRefs.delete(channel);
      this.socket?.send({ type: 'channel_unsubscribe', payload: channel });
    };
  }

  /** The host reported a (merged) context: follow its theme, and echo it to the agent. */
  setHostContext(context: JsonObject): void {
    this.store.update((state) => ({ hostContext: context, theme: followHostTheme(this.bootstrap, state.theme, context) }));
    this.scheduleEcho();
  }

  private uiContext(): JsonObject | undefined {
    const state = this.store.get();
    const declared = Object.keys(state.contract.contextSpec ?? {});
    const names = declared.length > 0 ? declared : Object.keys(state.slots);
    if (names.length === 0) return undefined;
    const snapshot: JsonObject = {};
    for (const name of names) {
      const value = this.slotValue(state, name);
      if (value !== undefined) snapshot[name] = toJson(value);
    }
    return snapshot;
  }

  private onStatus(status: LiveStatus, detail?: string): void {
    if (this.store.get().live === 'off') return; // the socket was stopped for good
    this.store.update((state) => ({
      live: status,
      ...(status === 'failed' && !state.component ? { phase: 'failed' as const } : {}),
    }));
    if (status === 'failed') this.store.setNotice('failure', `The live channel closed: ${detail ?? 'unknown error'}`);
  }

  private onAck(ack: AckPayload): void {
    // A new subscription: an error the server sent the last one is over.
    this.endChannelNotice();
    const contract: Contract = isObject(ack.contract) ? (ack.contract as Contract) : this.store.get().contract;
    this.store.update((state) => ({
      contract,
      ...(!this.bootstrap.frozen && ack.props !== undefined ? { props: ack.props, epoch: ack.epoch ?? state.epoch } : {}),
    }));
    const code = ack.component?.code;
    if (typeof code === 'string' && code !== '') {
      void this.loadComponent(code, asGadgetBundles(ack.gadgetBundles), asModuleLinks(ack.component?.links));
    } else if (!this.store.get().component) {
      const failure = ack.failure?.message ?? ack.error?.message;
      if (failure) {
        this.store.update({ phase: 'failed' });
        this.store.setNotice('load', `This render failed: ${failure}`);
      } else {
        this.store.update({ phase: 'generating', progress: this.store.get().progress ?? 'Generating…' });
      }
    }
    // Per-socket state the server forgets on reconnect.
    for (const channel of this.channelRefs.keys()) this.socket?.send({ type: 'channel_subscribe', payload: channel });
    // Echo at once, not debounced: actions queued before the ack are sent right after this
    // returns, and the agent's svc_consume should see the host context with the first of them.
    window.clearTimeout(this.echoTimer);
    this.lastEcho = '';
    this.echoHostContext();
  }

  private async loadComponent(code: string, bundles: GadgetBundle[], links: ModuleLinks | undefined): Promise<void> {
    if (code === this.loadedCode) return;
    this.loadedCode = code;
    try {
      const component = await this.loader.load(code, bundles, links);
      if (this.loadedCode !== code) return; // another component was asked for meanwhile
      this.store.update({ component, phase: 'ready', progress: null });
      this.store.setNotice('load', null);
    } catch (error) {
      if (this.loadedCode !== code) return;
      // Not loaded (a bundle's server was down, say): the next ack with this code tries again.
      this.loadedCode = null;
      this.store.update({ phase: 'failed' });
      this.store.setNotice('load', error instanceof Error ? error.message : String(error));
    }
  }

  private onFrame(frame: Frame): void {
    const payload = isObject(frame.payload) ? frame.payload : {};
    switch (frame.type) {
      case 'props_update':
        if (!this.bootstrap.frozen) {
          this.store.update((state) => ({ props: payload.props ?? {}, epoch: typeof payload.epoch === 'number' ? payload.epoch : state.epoch }));
        }
        return;
      case 'data':
        this.onData(payload as unknown as StreamEnvelope);
        return;
      case 'channel_payload':
        if (typeof payload.channel === 'string') {
          this.store.setToolChannel(payload.channel, { payload: payload.payload, error: null });
          this.store.applyStream(payload.channel, this.modeOf(payload.channel), payload.payload, true, false);
        }
        return;
      case 'channel_error':
        if (typeof payload.channel === 'string') {
          const message = typeof payload.message === 'string' ? payload.message : String(payload.code ?? 'channel error');
          this.store.setToolChannel(payload.channel, { error: message });
        }
        return;
      case 'error':
        this.showChannelNotice(describeError(payload as ErrorPayload));
        return;
      default:
        // render_event, drain_ack, render and other system frames need no state here.
        return;
    }
  }

  private onData(envelope: StreamEnvelope): void {
    if (typeof envelope.channel !== 'string') return;
    if (envelope.channel === LIFECYCLE_CHANNEL) {
      const stage = isObject(envelope.payload) ? envelope.payload.stage : undefined;
      const done = envelope.complete === true || stage === 'done';
      if (!this.store.get().component) this.store.update({ progress: done ? null : `Generating… (${String(stage ?? 'working')})` });
      return;
    }
    const complete = envelope.complete === true;
    // A terminal marker may travel without a payload of its own.
    const hasPayload = envelope.payload !== undefined && !(complete && envelope.payload === null);
    const mode = envelope.mode ?? this.modeOf(envelope.channel);
    this.store.applyStream(envelope.channel, mode, envelope.payload, hasPayload, complete);
  }

  private modeOf(channel: string): 'append' | 'replace' {
    return this.store.get().contract.streamSpec?.[channel]?.mode === 'append' ? 'append' : 'replace';
  }

  private onActionStored(clientSeq: number, actionId: string, duplicate: boolean): void {
    // The channel carries actions again: what went wrong with earlier ones is over.
    this.store.setNotice('action', null);
    this.endChannelNotice();
    this.settleAction(clientSeq, { ok: true, actionId, duplicate });
  }

  private onActionFailed(action: ActionEnvelope, error: ErrorPayload): void {
    // A closed channel already says so on the status line (live failed, or off).
    if (error.code !== 'NOT_CONNECTED') this.store.setNotice('action', describeRefusal(action.payload.action, error));
    this.settleAction(action.clientSeq, {
      ok: false,
      code: error.code ?? 'ERROR',
      message: error.message ?? describeError(error),
      violations: asViolations(error.violations),
    });
  }

  /** An error the server sent about no action: shown until the next ack or stored action, and
   * for {@link CHANNEL_NOTICE_MS} at most (it says nothing the user can act on for long). */
  private showChannelNotice(text: string): void {
    this.store.setNotice('channel', text);
    window.clearTimeout(this.channelNoticeTimer);
    this.channelNoticeTimer = window.setTimeout(() => this.endChannelNotice(), CHANNEL_NOTICE_MS);
  }

  private endChannelNotice(): void {
    window.clearTimeout(this.channelNoticeTimer);
    this.channelNoticeTimer = undefined;
    this.store.setNotice('channel', null);
  }

  private settleAction(clientSeq: number, outcome: ActionOutcome): void {
    const resolve = this.pendingActions.get(clientSeq);
    if (!resolve) return;
    this.pendingActions.delete(clientSeq);
    resolve(outcome);
  }

  private scheduleEcho(): void {
    window.clearTimeout(this.echoTimer);
    this.echoTimer = window.setTimeout(() => {
      this.echoTimer = undefined;
      this.echoHostContext();
    }, HOST_CONTEXT_ECHO_DELAY_MS);
  }

  private flushEcho(): void {
    if (this.echoTimer === undefined) return;
    window.clearTimeout(this.echoTimer);
    this.echoTimer = undefined;
    this.echoHostContext();
  }

  private echoHostContext(): void {
    const observed: JsonObject = {};
    for (const [key, value] of Object.entries(this.store.get().hostContext)) {
      if (!HOST_CONTEXT_SKIPPED.has(key) && value !== undefined) observed[key] = value;
    }
    if (Object.keys(observed).length === 0) return;
    const text = JSON.stringify(observed);
    if (text === this.lastEcho) return;
    if (this.socket?.send({ type: 'host_context_observed', payload: observed })) this.lastEcho = text;
  }
}

function initialTheme(bootstrap: Bootstrap, hostContext: JsonObject): ThemeState {
  const mode: ThemeMode = isThemeMode(bootstrap.themeMode) ? bootstrap.themeMode : 'light';
  const base: ThemeState = {
    id: bootstrap.themeId ?? 'default',
    mode,
    vars: themeVariables(bootstrap.themeVariants?.[mode] ?? bootstrap.theme),
  };
  return followHostTheme(bootstrap, base, hostContext);
}

/** Switches to the host's light/dark mode when the bootstrap carries that palette. */
function followHostTheme(bootstrap: Bootstrap, theme: ThemeState, hostContext: JsonObject): ThemeState {
  const wanted = hostContext.theme;
  if (!isThemeMode(wanted) || wanted === theme.mode) return theme;
  const palette = bootstrap.themeVariants?.[wanted];
  return palette ? { ...theme, mode: wanted, vars: themeVariables(palette) } : theme;
}

function describeError(error: ErrorPayload): string {
  const code = error.code ?? 'ERROR';
  if (Array.isArray(error.violations) && error.violations.length > 0) {
    const first = error.violations[0] as unknown;
    const text = isObject(first) ? [first.path, first.message].filter((part) => typeof part === 'string' && part !== '').join(': ') : String(first);
    return `${code} (${text})`;
  }
  return error.message ? `${code}: ${error.message}` : code;
}

/** The status line's words for an action that was not stored. */
function describeRefusal(intent: string, error: ErrorPayload): string {
  if (error.code === 'CONTRACT_VIOLATION') return `The agent's contract rejected "${intent}": ${describeError(error)}`;
  return `"${intent}" did not reach the agent: ${describeError(error)}`;
}

function asViolations(value: unknown): ActionViolation[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((item) => ({
    path: typeof item.path === 'string' ? item.path : '',
    message: typeof item.message === 'string' ? item.message : String(item.message ?? ''),
  }));
}

/** Plain JSON only: drops functions and DOM events, turns Dates into ISO strings. */
function toJson(value: unknown): unknown {
  if (value === undefined || isEvent(value)) return undefined;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return undefined;
  }
}

/** `onClick={submit}` hands the hook a (synthetic) event: that is no data. */
function isEvent(value: unknown): boolean {
  return (typeof Event !== 'undefined' && value instanceof Event) || (isObject(value) && 'nativeEvent' in value && 'target' in value);
}
