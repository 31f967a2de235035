// How the playground gets the bearer it sends on /mcp (docs/playground.md): a server in
// --dev-allow-all mode accepts any bearer; a strict server wants the boot pair code (exchanged on
// /_svc/pair for a key named "playground") or a key the operator pastes. The key lives in this
// tab's sessionStorage only, so closing the tab forgets it.

const STORAGE_KEY = 'svc-playground-bearer';
const DEV_BEARER = 'playground';
const PAIR_CODE = /^\d{6}$/;

/** The page's mode, written by the server into `<body data-auth>`. */
export function authMode(): 'open' | 'key' {
  return document.body.dataset.auth === 'open' ? 'open' : 'key';
}

/** A bearer already at hand: any in dev mode, else the one this tab stored. */
export function storedBearer(): string | null {
  if (authMode() === 'open') return DEV_BEARER;
  return sessionStorage.getItem(STORAGE_KEY);
}

export function forgetBearer(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** A pair code is exchanged for a key; anything else is taken as a key. Throws a readable error. */
export async function signIn(credential: string): Promise<string> {
  const typed = credential.trim();
  if (typed === '') throw new Error('Type the pair code or a key.');
  let bearer = typed;
  if (PAIR_CODE.test(typed)) {
    const response = await fetch('/_svc/pair', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pairCode: typed, clientName: 'playground' }),
    });
    const body: unknown = await response.json().catch(() => null);
    if (!response.ok) throw new Error(errorMessage(body) ?? `pairing failed (HTTP ${response.status})`);
    const token = (body as { accessToken?: unknown }).accessToken;
    if (typeof token !== 'string') throw new Error('pairing answered no accessToken');
    bearer = token;
  }
  sessionStorage.setItem(STORAGE_KEY, bearer);
  return bearer;
}

function errorMessage(body: unknown): string | null {
  const error = (body as { error?: { message?: unknown } } | null)?.error;
  return typeof error?.message === 'string' ? error.message : null;
}
