// Theme application: the `--svc-*` CSS variables on the root element, and the base styles that
// make a bare card follow them.

import type { ThemeMode } from './bootstrap';
import type { ThemeState } from './store';

const VARIABLE_PREFIX = '--svc-';
const BASE_STYLE_ID = 'svc-base-style';

const BASE_CSS = `html,body{margin:0;padding:0}
body{background:var(--svc-color-bg,Canvas);color:var(--svc-color-fg,CanvasText);font-family:var(--svc-font-family,system-ui,sans-serif);font-size:var(--svc-font-size,14px)}
#svc-root{box-sizing:border-box}
:focus-visible,input:focus,input:focus-within,select:focus,textarea:focus{outline:2px solid var(--svc-color-accent,Highlight);outline-offset:2px}
.svc-status{font:12px/1.4 var(--svc-font-family,system-ui,sans-serif);color:var(--svc-color-muted,GrayText);padding:4px var(--svc-space,8px)}
.svc-status[data-kind=error]{color:var(--svc-color-danger,#b00020)}
.svc-error{margin:var(--svc-space,8px);padding:var(--svc-space,8px);border:1px solid var(--svc-color-danger,#b00020);border-radius:var(--svc-radius,6px);color:var(--svc-color-danger,#b00020);white-space:pre-wrap;font-family:var(--svc-font-mono,monospace);font-size:12px}`;

/** Only `--svc-*` names with a plain value are applied; anything else is ignored. */
export function themeVariables(vars: Record<string, unknown> | undefined): Record<string, string> {
  const clean: Record<string, string> = {};
  if (!vars) return clean;
  for (const [name, value] of Object.entries(vars)) {
    if (name.startsWith(VARIABLE_PREFIX) && typeof value === 'string' && !/[;{}<>]/.test(value)) clean[name] = value;
  }
  return clean;
}

let applied: Record<string, string> = {};

export function applyTheme(doc: Document, theme: ThemeState): void {
  const root = doc.documentElement;
  for (const name of Object.keys(applied)) {
    if (!(name in theme.vars)) root.style.removeProperty(name);
  }
  for (const [name, value] of Object.entries(theme.vars)) root.style.setProperty(name, value);
  applied = theme.vars;
  root.style.colorScheme = theme.mode;
  root.dataset.svcTheme = theme.id;
  root.dataset.svcMode = theme.mode;
}

export function installBaseStyles(doc: Document): void {
  if (doc.getElementById(BASE_STYLE_ID)) return;
  const style = doc.createElement('style');
  style.id = BASE_STYLE_ID;
  style.textContent = BASE_CSS;
  doc.head.appendChild(style);
}

export function isThemeMode(value: unknown): value is ThemeMode {
  return value === 'light' || value === 'dark';
}
