// The View side of the MCP-Apps postMessage protocol (JSON-RPC 2.0 with the host window):
// `ui/initialize` then `ui/notifications/initialized`; tool input, tool result and host-context
// notifications in; `ui/notifications/size-changed` out; `ui/resource-teardown` answered.

import { isObject, type JsonObject } from './protocol';

/** MCP-Apps protocol revision this runtime implements. */
export const MCP_APPS_PROTOCOL_VERSION = '2026-01-26';

const INITIALIZE_TIMEOUT_MS = 8000;
const TOOL_CALL_TIMEOUT_MS = 20_000;

export interface HostHandlers {
  onToolInput?(args: JsonObject): void;
  onToolResult?(result: JsonObject): void;
  /** The full host context after a `host-context-changed` (partial updates merged in). */
  onHostContext?(context: JsonObject): void;
  onTeardown?(): void;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class HostBridge {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private context: JsonObject = {};
  private capabilities: JsonObject = {};
  private connected = false;
  private readonly ready: Promise<void>;
  private markReady!: (ok: boolean) => void;
  private resizeObserver: ResizeObserver | null = null;
  private measureTimer: number | undefined;
  private reportedWidth = -1;
  private reportedHeight = -1;

  private constructor(
    private readonly host: Window,
    private readonly handlers: HostHandlers,
  ) {
    window.addEventListener('message', this.onMessage);
    this.ready = new Promise((resolve, reject) => {
      this.markReady = (ok) => (ok ? resolve() : reject(new Error('the host did not complete ui/initialize')));
    });
    this.ready.catch(() => {});
  }

  /** The bridge to the embedding window, or `null` when the document is not framed. */
  static open(handlers: HostHandlers): HostBridge | null {
    if (window.parent === window) return null;
    return new HostBridge(window.parent, handlers);
  }

  get hostContext(): JsonObject {
    return this.context;
  }

  /** Runs the handshake; resolves to the host context, or rejects when no host answers. */
  async initialize(appVersion: string): Promise<JsonObject> {
    let result: unknown;
    try {
      result = await this.request(
        'ui/initialize',
        {
          appInfo: { name: 'svc-mount', version: appVersion },
          appCapabilities: { availableDisplayModes: ['inline'] },
          protocolVersion: MCP_APPS_PROTOCOL_VERSION,
        },
        INITIALIZE_TIMEOUT_MS,
      );
    } catch (error) {
      this.markReady(false);
      throw error;
    }
    const hostContext = isObject(result) && isObject(result.hostContext) ? result.hostContext : {};
    this.capabilities = isObject(result) && isObject(result.hostCapabilities) ? result.hostCapabilities : {};
    this.context = { ...hostContext };
    this.connected = true;
    this.notify('ui/notifications/initialized', {});
    this.markReady(true);
    this.observeSize();
    return this.context;
  }

  /** Calls an app-visible server tool through the host (`tools/call`); resolves to its result. */
  async callServerTool(name: string, args: JsonObject): Promise<JsonObject> {
    await this.ready;
    if (!isObject(this.capabilities.serverTools)) throw new Error('the host does not proxy server tools');
    const result = await this.request('tools/call', { name, arguments: args }, TOOL_CALL_TIMEOUT_MS);
    if (!isObject(result)) throw new Error(`${name}: the host returned no result`);
    if (result.isError === true) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent ?? result.content ?? null)}`);
    return result;
  }

  notify(method: string, params: JsonObject): void {
    this.post({ jsonrpc: '2.0', method, params });
  }

  close(): void {
    window.removeEventListener('message', this.onMessage);
    this.resizeObserver?.disconnect();
    window.clearTimeout(this.measureTimer);
    this.markReady(false);
    for (const pending of this.pending.values()) pending.reject(new Error('bridge closed'));
    this.pending.clear();
  }

  private request(method: string, params: JsonObject, timeoutMs: number): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = window.setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer from the host`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (value) => {
          window.clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          window.clearTimeout(timer);
          reject(error);
        },
      });
      this.post({ jsonrpc: '2.0', id, method, params });
    });
  }

  private post(message: JsonObject): void {
    // The host's origin is unknown to a sandboxed document; the host checks `event.source`.
    this.host.postMessage(message, '*');
  }

  private readonly onMessage = (event: MessageEvent): void => {
    if (event.source !== this.host) return;
    const message: unknown = event.data;
    if (!isObject(message) || message.jsonrpc !== '2.0') return;
    const { id, method } = message;
    if (typeof method === 'string') {
      const params = isObject(message.params) ? message.params : {};
      if (id !== undefined && id !== null) {
        this.answerRequest(id, method, params);
      } else {
        this.dispatch(method, params);
      }
      return;
    }
    if (typeof id === 'number') {
      const pending = this.pending.get(id);
      if (!pending) return;
      this.pending.delete(id);
      if (isObject(message.error)) {
        pending.reject(new Error(String(message.error.message ?? 'host error')));
      } else {
        pending.resolve(message.result);
      }
    }
  };

  private answerRequest(id: unknown, method: string, _params: JsonObject): void {
    if (method === 'ui/resource-teardown') {
      this.post({ jsonrpc: '2.0', id: id as number, result: {} });
      this.handlers.onTeardown?.();
      return;
    }
    if (method === 'ping') {
      this.post({ jsonrpc: '2.0', id: id as number, result: {} });
      return;
    }
    this.post({ jsonrpc: '2.0', id: id as number, error: { code: -32601, message: `Method not found: ${method}` } });
  }

  private dispatch(method: string, params: JsonObject): void {
    switch (method) {
      case 'ui/notifications/tool-input':
        this.handlers.onToolInput?.(isObject(params.arguments) ? params.arguments : {});
        break;
      case 'ui/notifications/tool-result':
        this.handlers.onToolResult?.(params);
        break;
      case 'ui/notifications/host-context-changed':
        this.context = { ...this.context, ...params };
        this.handlers.onHostContext?.(this.context);
        break;
      default:
        break;
    }
  }

  /**
   * Reports the document's natural size so the host can fit the frame to the card. Coalesced on
   * a timer rather than an animation frame: a frame scrolled out of view gets no animation
   * frames, yet its size must still reach the host.
   */
  scheduleMeasure(): void {
    if (!this.connected || this.measureTimer !== undefined) return;
    this.measureTimer = window.setTimeout(() => {
      this.measureTimer = undefined;
      const root = document.documentElement;
      const previous = root.style.height;
      root.style.height = 'max-content';
      const height = Math.ceil(root.getBoundingClientRect().height);
      root.style.height = previous;
      const width = Math.ceil(window.innerWidth);
      if (width === this.reportedWidth && height === this.reportedHeight) return;
      this.reportedWidth = width;
      this.reportedHeight = height;
      this.notify('ui/notifications/size-changed', { width, height });
    }, 0);
  }

  private observeSize(): void {
    this.scheduleMeasure();
    if (typeof ResizeObserver === 'undefined') return;
    this.resizeObserver = new ResizeObserver(() => this.scheduleMeasure());
    this.resizeObserver.observe(document.documentElement);
    this.resizeObserver.observe(document.body);
  }
}
