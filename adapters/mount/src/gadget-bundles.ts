// Declared gadget packages (svc.json#app.gadgets with a `bundleUrl`): the server lists the ones a
// component may import as `gadgetBundles` (bootstrap and ack). Before the component is imported,
// the module loader fetches each bundle it imports, checks the bundle's `sha384` integrity here,
// and evaluates it like the component (its React imports rewritten to the runtime's own).

import { ComponentLoadError } from './module-loader-errors';

/** One declared package the card may load (the ack's and bootstrap's `gadgetBundles[]`). */
export interface GadgetBundle {
  package: string;
  url: string;
  /** `sha384-<base64>`; other algorithms are refused, never skipped. */
  integrity?: string;
  styleUrl?: string;
}

/** The well-formed entries of a `gadgetBundles` value from the wire. */
export function asGadgetBundles(value: unknown): GadgetBundle[] {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (entry): entry is GadgetBundle =>
      typeof entry === 'object' && entry !== null && typeof entry.package === 'string' && typeof entry.url === 'string',
  );
}

/** The bundle's source, fetched without credentials and checked against its integrity. */
export async function fetchBundle(bundle: GadgetBundle): Promise<string> {
  let bytes: ArrayBuffer;
  try {
    const response = await fetch(bundle.url, { credentials: 'omit' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    bytes = await response.arrayBuffer();
  } catch (error) {
    throw new ComponentLoadError(`the gadget package "${bundle.package}" could not be fetched from ${bundle.url}: ${describe(error)}`);
  }
  if (bundle.integrity !== undefined) await checkIntegrity(bundle, bytes);
  return new TextDecoder().decode(bytes);
}

async function checkIntegrity(bundle: GadgetBundle, bytes: ArrayBuffer): Promise<void> {
  const expected = bundle.integrity!.split(/\s+/).filter((token) => token.startsWith('sha384-'));
  const refuse = (why: string) => new ComponentLoadError(`the gadget package "${bundle.package}" failed its integrity check: ${why}`);
  if (expected.length === 0) throw refuse(`"${bundle.integrity}" names no sha384 digest`);
  if (!globalThis.crypto?.subtle) throw refuse('this document cannot compute digests (crypto.subtle is unavailable)');
  const actual = `sha384-${base64(await crypto.subtle.digest('SHA-384', bytes))}`;
  if (!expected.includes(actual)) throw refuse(`${bundle.url} has ${actual}, expected ${expected.join(' or ')}`);
}

/** Adds the package's stylesheet once; a stylesheet that fails to load leaves the card unstyled. */
export function linkStylesheet(url: string): void {
  const links = document.head.querySelectorAll('link[rel="stylesheet"][data-svc-gadget]');
  if (Array.from(links).some((link) => link.getAttribute('href') === url)) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = url;
  link.dataset.svcGadget = '';
  document.head.append(link);
}

function base64(buffer: ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
