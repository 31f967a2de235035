// The playground's MCP client on this server's /mcp: the official TypeScript SDK client, which
// the ext-apps AppBridge also uses to forward the card's own tool calls.

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

export const HOST_INFO = { name: 'svc-playground', version: '1.0.0' };

export async function connectAgent(bearer: string): Promise<Client> {
  const client = new Client(HOST_INFO);
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', window.location.origin), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  return client;
}

export interface SessionRow {
  sessionId: string;
  createdAt: string;
  status: string;
  wsToken?: string;
}

/** `svc_list_sessions`: the app's renders, newest first here. */
export async function recentSessions(client: Client): Promise<SessionRow[]> {
  const result = await client.callTool({ name: 'svc_list_sessions', arguments: { limit: 20 } });
  const sessions = (result.structuredContent as { sessions?: SessionRow[] } | undefined)?.sessions ?? [];
  return [...sessions].reverse();
}

/** `svc_consume` without waiting: what the agent would drain now. */
export async function drain(client: Client, sessionId: string): Promise<unknown[]> {
  const result = await client.callTool({ name: 'svc_consume', arguments: { sessionId, timeout: 0 } });
  if (result.isError) throw new Error(JSON.stringify(result.structuredContent ?? result.content));
  const body = result.structuredContent as { events?: unknown[] } | undefined;
  return body?.events ?? [];
}
