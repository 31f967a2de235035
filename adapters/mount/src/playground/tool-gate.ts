// What the playground host forwards from a card to the server. The host's client holds the
// operator's key, so a card (generated or registered code) must reach through it only what an
// MCP-Apps host would let it: the tools declared visible to apps (`_meta.ui.visibility`
// includes `app`: the runtime's `svc_runtime_*`), for the card's own session. The agent tools
// (`svc_list_sessions`, `svc_consume`, `svc_render`, ...) are the model's, and resources and
// prompts are not forwarded at all.

import type { Client } from '@modelcontextprotocol/client';

export interface ToolCall {
  name: string;
  arguments?: Record<string, unknown>;
}

/** The names of the server's tools declared visible to apps. */
export async function appVisibleTools(client: Client): Promise<Set<string>> {
  const { tools } = await client.listTools();
  return new Set(
    tools
      .filter((tool) => {
        const visibility = (tool._meta?.ui as { visibility?: unknown } | undefined)?.visibility;
        return Array.isArray(visibility) && visibility.includes('app');
      })
      .map((tool) => tool.name),
  );
}

/** Why `call` from the card mounted for `sessionId` is not forwarded, or null when it is. */
export function refusal(call: ToolCall, appTools: Set<string>, sessionId: string): string | null {
  if (!appTools.has(call.name)) return `${call.name} is not visible to apps`;
  const target = call.arguments?.sessionId;
  if (target !== undefined && target !== sessionId) return `${call.name} may act only on this card's own session`;
  return null;
}
