// The /ws frame protocol (docs/live-channel.md): frame shapes and constants, no behaviour.

/** Protocol revision this runtime speaks; sent as `supportedVersions` on subscribe. */
export const PROTOCOL_VERSION = 'draft-2026-06-12';

/** Reserved channel carrying generation progress as `{ stage }` payloads. */
export const LIFECYCLE_CHANNEL = '_svc:lifecycle';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: unknown };

/** Every frame, both directions: `{ type, payload }`. */
export interface Frame {
  type: string;
  payload?: unknown;
}

export interface SubscribePayload {
  sessionId: string;
  appId?: string;
  wsToken?: string;
  sessionToken?: string;
  fromSeq?: number;
  sinceSequence?: number;
  role: 'user';
  supportedVersions: string[];
}

export interface AckPayload {
  sessionId: string;
  appId?: string;
  protocolVersion?: string;
  sessionToken?: string;
  sessionTokenExpiresAt?: string;
  epoch?: number;
  props?: unknown;
  themeId?: string;
  contract?: Contract;
  /** `links`: the code's import and export spans (checked by `asModuleLinks`). */
  component?: { code?: string; blueprintId?: string; links?: unknown } | null;
  /** Declared gadget packages the component may import (checked by `asGadgetBundles`). */
  gadgetBundles?: unknown;
  /** A failed render keeps its failure message on the live channel. */
  failure?: { code?: string; message?: string } | null;
  error?: { code?: string; message?: string } | null;
  lastSequence?: number;
  lastStreamSeq?: number;
  replay?: { fromSeq?: number; sinceSequence?: number; gap?: boolean; lost?: unknown };
}

/** The parts of a data contract the runtime reads. */
export interface Contract {
  propsSpec?: unknown;
  actionSpec?: Record<string, { schema?: unknown } | undefined>;
  streamSpec?: Record<string, StreamSpec | undefined>;
  contextSpec?: Record<string, { schema?: unknown; default?: unknown } | undefined>;
}

export interface StreamSpec {
  mode?: 'append' | 'replace';
  schema?: unknown;
  complete?: boolean;
  source?: { tool?: string; intervalMs?: number };
}

/** A `data` frame: one stamped stream envelope. */
export interface StreamEnvelope {
  sessionId?: string;
  channel: string;
  seq: number;
  mode?: 'append' | 'replace';
  payload?: unknown;
  complete?: boolean;
  timestamp?: string;
}

/** The inbound user action, `data:submit` only. */
export interface ActionEnvelope {
  sessionId: string;
  type: 'data:submit';
  payload: { action: string; data?: unknown };
  clientSeq: number;
  uiContext?: JsonObject;
}

export interface ErrorPayload {
  code?: string;
  message?: string;
  clientSeq?: number;
  violations?: unknown;
  [key: string]: unknown;
}

/** One field the server named when it refused an action: a JSON Pointer into `data` and the rule. */
export interface ActionViolation {
  path: string;
  message: string;
}

/** What became of one `useAction` call: stored for the agent, or refused with the reasons. */
export type ActionOutcome =
  | { ok: true; actionId: string; duplicate: boolean }
  | { ok: false; code: string; message: string; violations: ActionViolation[] };

export interface SystemPayload {
  event?: string;
  clientSeq?: number;
  sequence?: number;
  duplicate?: boolean;
  actionId?: string;
  [key: string]: unknown;
}

/**
 * Whether a replay gap (the ack's `replay`, or a `system replay_gap`) lost stream envelopes, so
 * the card must rebuild its streams. `lost` names what each replay left out; a server that does
 * not say is taken to have lost them.
 */
export function streamsLost(lost: unknown): boolean {
  return !Array.isArray(lost) || lost.includes('streams');
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
