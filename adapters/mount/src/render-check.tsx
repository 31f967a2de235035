// Entry of dist/render-check.js, the server's headless render check (adapters/render-check):
// an embedded QuickJS engine runs a generated component once against fixture props before the
// server accepts it. The component sees the modules a card provides (`provided.ts`) and the very
// hooks of `gadgets.ts`, over a store that holds the fixture: a component that renders here
// renders its first frame in a card. Server rendering runs no effects and no event handlers.
//
// The Rust side evaluates this script, calls `prepare`, declares one shim module per specifier
// it returns, evaluates the component module, and calls `render` with its namespace.

import { inert } from './render-check-globals';
import { createElement, type ComponentType, type ReactNode } from 'react';
import { renderToString } from 'react-dom/server.browser';
import { setActiveMount, type GadgetHost } from './gadgets';
import { isObject, type ActionOutcome, type Contract, type JsonObject } from './protocol';
import { providedModules } from './provided';
import { contextSlotValue, Store, type CardState, type ThemeState } from './store';
import type { ProvidedModules } from './module-loader';

/** What the server passes to `prepare`. */
interface CheckInput {
  props: unknown;
  contract: unknown;
  theme: ThemeState;
  /** Declared app packages the component may import; only their descriptors are known here. */
  packages: { name: string; components: string[]; hooks: string[] }[];
}

/** Why a render failed, as the repair prompt quotes it. */
interface Thrown {
  message: string;
  /** 1-based line of the compiled component module the error was thrown at, when known. */
  line: number | null;
}

/** The names a card's `react` and `react-dom` (preact/compat) export; build.mjs reads them. */
declare const __CARD_REACT_NAMES__: string[];
const CARD_REACT_NAMES = new Set(__CARD_REACT_NAMES__);
const CARD_REACT_MODULES = ['react', 'react-dom'];

const COMPONENT_MODULE = 'svc-component.js';
const REGISTRY_KEY = '__svcCheck';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

let modules: ProvidedModules = {};

class CheckHost implements GadgetHost {
  readonly store: Store;

  constructor(input: CheckInput) {
    const contract: Contract = isObject(input.contract) ? (input.contract as Contract) : {};
    // The state a card starts with (`Mount`'s constructor): no stream items, no slot set yet, and
    // the host context `{}` it has until the host answers `ui/initialize`.
    const initial: CardState = {
      phase: 'ready',
      live: 'live',
      transport: 'websocket',
      notices: {},
      progress: null,
      component: null,
      contract,
      props: input.props ?? {},
      epoch: 1,
      streams: {},
      slots: {},
      toolChannels: {},
      theme: input.theme,
      hostContext: {} as JsonObject,
    };
    this.store = new Store(initial);
  }

  act(): Promise<ActionOutcome> {
    return Promise.resolve({ ok: true, actionId: '', duplicate: false });
  }

  slotValue(state: CardState, name: string): unknown {
    return contextSlotValue(state, name);
  }

  isToolChannel(channel: string): boolean {
    return typeof this.store.get().contract.streamSpec?.[channel]?.source?.tool === 'string';
  }

  retainChannel(): () => void {
    return () => {};
  }
}

function stubPackage(components: string[], hooks: string[]): Record<string, unknown> {
  const namespace: Record<string, unknown> = {};
  for (const name of components) {
    const Stub = ({ children }: { children?: ReactNode }): ReactNode => children ?? null;
    Object.defineProperty(Stub, 'name', { value: name });
    namespace[name] = Stub;
  }
  // Only the descriptors are known here: a hook gives an inert value.
  for (const name of hooks) namespace[name] = () => inert();
  return namespace;
}

/** `export const name = m.name` for every identifier-named export, and a default. */
function shimSource(specifier: string, namespace: Record<string, unknown>): string {
  const lines = [`const m = globalThis.${REGISTRY_KEY}.modules[${JSON.stringify(specifier)}];`];
  for (const name of Object.keys(namespace)) {
    if (name === 'default' || !IDENTIFIER.test(name)) continue;
    lines.push(`export const ${name} = m[${JSON.stringify(name)}];`);
  }
  lines.push("export default ('default' in m ? m.default : m);");
  return lines.join('\n');
}

/** React's module cut to the names the card's own React has: an import of any other name fails
 * to link here, as it would in the card. The default import (`React.use`) is the same cut, as
 * compat's default holds exactly its named exports. */
function asInCard(namespace: Record<string, unknown>): Record<string, unknown> {
  const cut = Object.fromEntries(Object.entries(namespace).filter(([name]) => CARD_REACT_NAMES.has(name)));
  return { ...cut, default: cut };
}

/** Sets up the card state and returns `[specifier, shim module source]` for every module. */
function prepare(input: CheckInput): [string, string][] {
  setActiveMount(new CheckHost(input));
  modules = providedModules();
  for (const specifier of CARD_REACT_MODULES) modules[specifier] = asInCard(modules[specifier] ?? {});
  for (const pkg of input.packages) {
    if (!(pkg.name in modules)) modules[pkg.name] = stubPackage(pkg.components, pkg.hooks);
  }
  return Object.entries(modules).map(([specifier, namespace]) => [specifier, shimSource(specifier, namespace)]);
}

/** What only the string renderer rejects: a card renders these fine in the browser. */
const SERVER_ONLY_LIMITS = [
  'Portals are not currently supported by the server renderer',
  'A component suspended while responding to synchronous input',
];

/** Renders the module's default export once; returns the markup, or throws what it threw. */
function render(namespace: { default?: unknown }): string {
  const component = namespace.default;
  if (typeof component !== 'function' && !(typeof component === 'object' && component !== null)) {
    throw new TypeError('the module has no default-exported component');
  }
  try {
    return renderToString(createElement(component as ComponentType));
  } catch (error) {
    if (error instanceof Error && SERVER_ONLY_LIMITS.some((limit) => error.message.startsWith(limit))) return '';
    throw error;
  }
}

/** The error's `Name: message`, and the component line it was thrown at. */
function describe(error: unknown): Thrown {
  if (!(error instanceof Error)) return { message: `a non-error value was thrown: ${String(error)}`, line: null };
  const at = new RegExp(`${COMPONENT_MODULE.replace('.', '\\.')}:(\\d+)`).exec(error.stack ?? '');
  return { message: `${error.name}: ${error.message}`, line: at ? Number(at[1]) : null };
}

const check = {
  componentModule: COMPONENT_MODULE,
  get modules(): ProvidedModules {
    return modules;
  },
  prepare,
  render,
  describe,
};

(globalThis as unknown as Record<string, unknown>)[REGISTRY_KEY] = check;
