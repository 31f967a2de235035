// What the playground host forwards from a card to the server. The host's client holds the
// operator's key, so a card (generated or registered code) must reach through it only what an
// MCP-Apps host would let it: the card runtime's own tools (`svc_runtime_*`, which `tools/list`
// declares visible to apps only while the MCP-Apps option is on, though the playground serves
// cards either way) and any other tool declared visible to apps (`_meta.ui.visibility` includes
// `app`), each for the card's own session. The agent tools (`svc_list_sessions`, `svc_consume`,
// `svc_render`, ...) are the model's, and resources and prompts are not forwarded at all.

import type { Client } from '@modelcontextprotocol/client';

export interface ToolCall {
  name: string;
  arguments?: Record<string, unknown>;
}

/** The card runtime's own tools, whatever `tools/list` declares of them. */
const RUNTIME_TOOL_PREFIX = 'svc_runtime_';

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
  if (!call.name.startsWith(RUNTIME_TOOL_PREFIX) && !appTools.has(call.name)) {
    return `${call.name} is not visible to apps`;
  }
  if (call.arguments?.sessionId !== sessionId) return `${call.name} may act only on this card's own session`;
  return null;
}
