// The console's only two doors: its session (/console/session) and the /ops tools run with that
// session (/console/ops). Every screen is a tools/call an operator agent could make on /ops.

export interface Session {
  csrfToken: string;
  expiresAt: string;
  principalId: string;
  appId: string;
  appLocked: boolean;
}

/** A refusal in words: `code` picks the message (messages.ts), `field` the control it belongs to. */
export class ConsoleError extends Error {
  constructor(
    public readonly code: string,
    message: string,
    public readonly field?: string,
  ) {
    super(message);
  }
}

export type SignedOutListener = () => void;

let csrfToken = '';
let onSignedOut: SignedOutListener = () => {};

export function whenSignedOut(listener: SignedOutListener): void {
  onSignedOut = listener;
}

async function errorOf(response: Response): Promise<ConsoleError> {
  const body = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
  const code = body?.error?.code ?? `http_${response.status}`;
  return new ConsoleError(code, body?.error?.message ?? response.statusText);
}

function remember(session: Session): Session {
  csrfToken = session.csrfToken;
  return session;
}

/** The session the browser's cookie holds, if it is still live. */
export async function currentSession(): Promise<Session | null> {
  const response = await fetch('/console/session', { credentials: 'same-origin' });
  if (response.status === 401) return null;
  if (!response.ok) throw await errorOf(response);
  return remember((await response.json()) as Session);
}

export async function signIn(
  credential: { pairCode: string } | { key: string } | { email: string; password: string },
): Promise<Session> {
  const response = await fetch('/console/session', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(credential),
  });
  if (!response.ok) throw await errorOf(response);
  return remember((await response.json()) as Session);
}

export async function signOut(): Promise<void> {
  await fetch('/console/session', {
    method: 'DELETE',
    credentials: 'same-origin',
    headers: { 'x-csrf-token': csrfToken },
  });
  csrfToken = '';
}

let nextId = 1;

async function rpc(method: string, params: unknown): Promise<unknown> {
  const response = await fetch('/console/ops', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken, accept: 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  if (response.status === 401) {
    onSignedOut();
    throw await errorOf(response);
  }
  const body = (await response.json().catch(() => null)) as {
    result?: unknown;
    error?: { code: number; message: string; data?: { code?: string } };
  } | null;
  if (body?.error) {
    const rpcError = body.error;
    // -32602 "Invalid params: <field>: <rule>" names the argument at fault.
    const field = /^Invalid params: ([A-Za-z]+):/.exec(rpcError.message)?.[1];
    const code = rpcError.data?.code ?? (rpcError.code === -32602 ? 'invalid_params' : `rpc_${rpcError.code}`);
    throw new ConsoleError(code, rpcError.message, field);
  }
  if (!response.ok || !body) throw new ConsoleError(`http_${response.status}`, response.statusText);
  return body.result;
}

export interface ToolInfo {
  name: string;
}

export async function listTools(): Promise<string[]> {
  const result = (await rpc('tools/list', {})) as { tools: ToolInfo[] };
  return result.tools.map((t) => t.name);
}

/** Calls one /ops tool; a tool's refusal (`isError`) is thrown with its code. */
export async function callTool<T>(name: string, args: Record<string, unknown> = {}): Promise<T> {
  const result = (await rpc('tools/call', { name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: unknown;
  };
  const content = result.structuredContent as { error?: { code: string; message: string } } | undefined;
  if (result.isError) {
    throw new ConsoleError(content?.error?.code ?? 'tool_error', content?.error?.message ?? 'The tool refused.');
  }
  return content as T;
}
