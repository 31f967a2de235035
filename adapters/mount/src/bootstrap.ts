// Where the runtime learns which render to mount: the `<script id="svc-bootstrap">` JSON that a
// per-render document embeds, or the `_meta['ai.svc/render']` slice of the tool result the host
// delivers to the shell document.

import { isObject, type Contract, type JsonObject } from './protocol';

/** Key of the render slice in a tool result's `_meta`. */
export const SLICE_KEY = 'ai.svc/render';

export type ThemeMode = 'light' | 'dark';

/** The render slice (Document 2) plus what a per-render document pins. */
export interface Bootstrap {
  sessionId: string;
  appId?: string;
  wsUrl?: string;
  wsToken?: string;
  expiresAt?: string;
  resourceUri?: string;
  runtimeUrl?: string;
  pollingUrl?: string;
  /** Replay cursor seed for `sinceSequence`. */
  lastSequence?: number;
  epoch?: number;
  /** Props of the pinned epoch; present in per-render documents. */
  props?: unknown;
  /** A history card (an older epoch): keeps its props when the head moves on. */
  frozen?: boolean;
  /** A preview (the console's blueprint gallery): the component with example props, no session
   * behind it, so no live channel is opened. */
  preview?: boolean;
  /** The compiled component, embedded by per-render documents so the card paints at once;
   * `links`: its import and export spans (checked by `asModuleLinks`). */
  component?: { code?: string; blueprintId?: string; links?: unknown };
  /** Declared gadget packages the component may import (checked by `asGadgetBundles`). */
  gadgetBundles?: unknown;
  /** The agreed data contract (slot defaults, stream modes) until the ack brings it. */
  contract?: Contract;
  themeId?: string;
  themeMode?: ThemeMode;
  theme?: Record<string, string>;
  /** Both palettes of the theme, so the card can follow the host's light/dark mode; `null` for
   * a mode the theme does not offer. */
  themeVariants?: Partial<Record<ThemeMode, Record<string, string> | null>>;
}

/** What the document embeds: a render, or the shell marker. */
export type Embedded = { kind: 'render'; bootstrap: Bootstrap } | { kind: 'shell' } | { kind: 'none' };

export const BOOTSTRAP_ELEMENT_ID = 'svc-bootstrap';

export function readEmbedded(doc: Document): Embedded {
  const element = doc.getElementById(BOOTSTRAP_ELEMENT_ID);
  if (!element?.textContent) return { kind: 'none' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(element.textContent);
  } catch {
    return { kind: 'none' };
  }
  if (isObject(parsed) && parsed.shell === true) return { kind: 'shell' };
  const bootstrap = asBootstrap(parsed);
  return bootstrap ? { kind: 'render', bootstrap } : { kind: 'none' };
}

/** The slice in a `CallToolResult` (as `ui/notifications/tool-result` delivers it), if any. */
export function fromToolResult(result: unknown): Bootstrap | null {
  if (!isObject(result)) return null;
  const meta = result._meta;
  if (isObject(meta)) return asBootstrap(meta[SLICE_KEY]);
  return null;
}

/** The slice from an OpenAI Apps SDK host (`window.openai.toolResponseMetadata`), if any. */
export function fromOpenAiGlobals(win: Window): Bootstrap | null {
  const openai = (win as unknown as { openai?: JsonObject }).openai;
  if (!isObject(openai)) return null;
  const meta = openai.toolResponseMetadata;
  return isObject(meta) ? asBootstrap(meta[SLICE_KEY]) : null;
}

function asBootstrap(value: unknown): Bootstrap | null {
  if (!isObject(value) || typeof value.sessionId !== 'string' || value.sessionId === '') return null;
  return value as unknown as Bootstrap;
}
