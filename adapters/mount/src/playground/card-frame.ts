// Mounts one render as an MCP-Apps host does, with the official ext-apps AppBridge on the host
// side of the postMessage channel. The frame is a sandboxed iframe (opaque origin) navigated to
// `/_svc/playground/card/<sessionId>?token=<wsToken>`: the server answers the render's
// `ui://svc/render/<sessionId>` document under the policy built from its declared `_meta.ui.csp`
// as an HTTP header. (A srcdoc frame would inherit this page's own strict policy on top.)

import type { Client } from '@modelcontextprotocol/client';
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
import { HOST_INFO } from './agent-client';
import { appVisibleTools, refusal } from './tool-gate';

const MAX_HEIGHT = 2000;

export interface MountedCard {
  frame: HTMLIFrameElement;
  close(): Promise<void>;
}

export interface CardEvents {
  /** A `notifications/message` from the card (the runtime logs each action it sent). */
  onLog(params: { level: string; logger?: string; data?: unknown }): void;
}

export async function mountCard(
  slot: HTMLElement,
  client: Client,
  sessionId: string,
  wsToken: string,
  events: CardEvents,
): Promise<MountedCard> {
  slot.replaceChildren();
  const frame = document.createElement('iframe');
  frame.title = `svc card ${sessionId}`;
  frame.setAttribute('sandbox', 'allow-scripts allow-forms');
  slot.append(frame);
  const hostContext = {
    theme: window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light',
    displayMode: 'inline',
    locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: 'web',
    containerDimensions: { maxHeight: MAX_HEIGHT, width: slot.clientWidth },
  } as const;
  // No client for the bridge: it would forward every request of the card with the operator's
  // key. The one handler below forwards what an MCP-Apps host lets a card call (tool-gate.ts).
  const bridge = new AppBridge(null, HOST_INFO, { openLinks: {}, logging: {}, serverTools: {} }, { hostContext });
  const appTools = await appVisibleTools(client);
  bridge.oncalltool = async (params) => {
    const why = refusal(params, appTools, sessionId);
    if (why) return { isError: true, content: [{ type: 'text', text: why }] };
    return (await client.callTool({ name: params.name, arguments: params.arguments ?? {} })) as Awaited<
      ReturnType<NonNullable<typeof bridge.oncalltool>>
    >;
  };
  bridge.onsizechange = ({ height }) => {
    if (typeof height === 'number' && height > 0) frame.style.height = `${Math.min(height, MAX_HEIGHT)}px`;
  };
  bridge.onloggingmessage = (params) => events.onLog(params);
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  // The WindowProxy outlives the navigation, so the transport binds it before the load.
  frame.src = `/_svc/playground/card/${encodeURIComponent(sessionId)}?token=${encodeURIComponent(wsToken)}`;
  const contentWindow = frame.contentWindow;
  if (!contentWindow) throw new Error('the card frame has no window');
  await bridge.connect(new PostMessageTransport(contentWindow, contentWindow));
  await initialized;
  return {
    frame,
    close: async () => {
      await bridge.close();
      frame.remove();
    },
  };
}
