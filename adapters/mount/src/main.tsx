// Entry point of the mount runtime, inlined into every svc card document. It finds the render
// (embedded bootstrap, or the host's tool result for the shell), joins the host over MCP-Apps
// postMessage, and mounts the card.

import { createRoot, type Root } from 'react-dom/client';
import { fromOpenAiGlobals, fromToolResult, readEmbedded, type Bootstrap } from './bootstrap';
import { CardRoot } from './card-root';
import { installFormSubmission } from './forms';
import { setActiveMount } from './gadgets';
import { HostBridge } from './host-bridge';
import { ModuleLoader } from './module-loader';
import { Mount } from './mount';
import { isObject, type ActionOutcome, type JsonObject } from './protocol';
import { providedModules } from './provided';
import { applyTheme, installBaseStyles } from './theme';

/** Version of this runtime; equals the standard gadget package version it provides. */
const RUNTIME_VERSION = '1.0.0';
const ROOT_ID = 'svc-root';

function rootElement(): HTMLElement {
  const existing = document.getElementById(ROOT_ID);
  if (existing) return existing;
  const created = document.createElement('div');
  created.id = ROOT_ID;
  document.body.appendChild(created);
  return created;
}

function showWaiting(root: Root, text: string): void {
  root.render(
    <div className="svc-status" role="status" data-kind="info">
      {text}
    </div>,
  );
}

function start(): void {
  installBaseStyles(document);
  installFormSubmission(document);
  const reactRoot = createRoot(rootElement());
  const embedded = readEmbedded(document);
  const loader = new ModuleLoader(providedModules());
  const html = document.documentElement;
  let mount: Mount | null = null;
  let hostContext: JsonObject = {};
  // Assigned below; `begin` may run before the bridge exists (an embedded bootstrap).
  let bridge: HostBridge | null = null;

  // `svc_runtime_refresh_ws_token` is an app-visible server tool: the host proxies the call.
  const refreshWsToken = async (sessionId: string): Promise<string | null> => {
    if (!bridge) return null;
    const result = await bridge.callServerTool('svc_runtime_refresh_ws_token', { sessionId });
    const content = result.structuredContent;
    return isObject(content) && typeof content.wsToken === 'string' ? content.wsToken : null;
  };

  // Each action the card sent, as an MCP log message the host may show (the playground does).
  const onActionSettled = (intent: string, data: unknown, outcome: ActionOutcome): void => {
    bridge?.notify('notifications/message', {
      level: outcome.ok ? 'info' : 'warning',
      logger: 'svc.action',
      data: { intent, data, outcome },
    } as JsonObject);
  };

  const begin = (bootstrap: Bootstrap): void => {
    if (mount) return; // one card per document
    const current = new Mount(bootstrap, loader, hostContext, { refreshWsToken, onActionSettled });
    mount = current;
    setActiveMount(current);
    let theme = current.store.get().theme;
    applyTheme(document, theme);
    const reflect = (): void => {
      const state = current.store.get();
      if (state.theme !== theme) {
        theme = state.theme;
        applyTheme(document, theme);
      }
      // Observable state for hosts and tests: data-svc-phase / -live / -transport on <html>.
      html.dataset.svcPhase = state.phase;
      html.dataset.svcLive = state.live;
      html.dataset.svcTransport = state.transport;
      bridge?.scheduleMeasure();
    };
    current.store.subscribe(reflect);
    reflect();
    html.dataset.svcSession = bootstrap.sessionId;
    reactRoot.render(<CardRoot store={current.store} />);
    current.start();
  };

  bridge = HostBridge.open({
    onToolResult: (result) => {
      if (mount) return;
      const slice = fromToolResult(result);
      if (slice) begin(slice);
      else showWaiting(reactRoot, 'The tool result carries no svc render.');
    },
    onHostContext: (context) => {
      hostContext = context;
      mount?.setHostContext(context);
    },
    onTeardown: () => mount?.stop(),
  });

  if (embedded.kind === 'render') {
    begin(embedded.bootstrap);
  } else {
    const slice = fromOpenAiGlobals(window);
    if (slice) begin(slice);
    else showWaiting(reactRoot, 'Waiting for the render…');
  }

  if (bridge) {
    bridge.initialize(RUNTIME_VERSION).then(
      (context) => {
        hostContext = context;
        mount?.setHostContext(context);
      },
      (error: unknown) => {
        // Not inside an MCP-Apps host (or it never answered): a per-render card still works.
        console.warn('[svc] no MCP-Apps host:', error instanceof Error ? error.message : error);
      },
    );
  }
}

start();
