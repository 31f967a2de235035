// Turns the compiled component (an ES module with bare imports) into a live module. Each bare
// specifier the runtime provides becomes a Blob-URL shim module re-exporting the runtime's own
// instance (one React for runtime and card); the lexer rewrites the specifiers in place, so no
// import map is needed (a second, late import map is Chromium-only) and strings that merely
// look like imports are left alone. A host CSP without `blob:` in script-src gets data: URLs.
//
// A declared gadget package the component imports is fetched and checked first
// (gadget-bundles.ts), rewritten the same way (so it shares the runtime's React), imported
// through the same kind of URL, and its namespace becomes one more provided module.

import { init, parse } from 'es-module-lexer/minimal/js';
import type { ComponentType } from 'react';
import { fetchBundle, linkStylesheet, type GadgetBundle } from './gadget-bundles';
import { ComponentLoadError } from './module-loader-errors';

export { ComponentLoadError };

/** The modules a component may import, by exact specifier. */
export type ProvidedModules = Record<string, Record<string, unknown>>;

const REGISTRY_KEY = '__svc';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

interface Registry {
  modules: ProvidedModules;
}

type UrlKind = 'blob' | 'data';

export class ModuleLoader {
  private readonly shimUrls = new Map<string, string>();
  private urlKind: UrlKind = 'blob';

  constructor(private readonly provided: ProvidedModules) {
    const global = globalThis as unknown as Record<string, Registry | undefined>;
    global[REGISTRY_KEY] = { modules: provided };
  }

  /** Gadget packages loaded so far: package -> the bundle URL and integrity it came from. */
  private readonly loadedBundles = new Map<string, string>();

  /**
   * Imports `code` and returns its default export, which must be a component. `bundles`: the
   * declared packages it may import; those it does import load first.
   */
  async load(code: string, bundles: readonly GadgetBundle[] = []): Promise<ComponentType> {
    try {
      return await this.loadOnce(code, bundles);
    } catch (error) {
      if (this.urlKind === 'blob' && !(await importable('blob'))) {
        this.urlKind = 'data';
        this.shimUrls.clear();
        return this.loadOnce(code, bundles);
      }
      throw error;
    }
  }

  private async loadOnce(code: string, bundles: readonly GadgetBundle[]): Promise<ComponentType> {
    for (const specifier of await this.specifiers(code, 'the component module')) {
      const bundle = bundles.find((candidate) => candidate.package === specifier);
      if (bundle) await this.provideBundle(bundle);
    }
    const rewritten = await this.rewrite(code);
    const url = moduleUrl(this.urlKind, rewritten);
    let module: { default?: unknown };
    try {
      module = (await import(/* webpackIgnore: true */ url)) as { default?: unknown };
    } catch (error) {
      throw new ComponentLoadError(`the component module failed to load: ${describe(error)}`);
    } finally {
      if (this.urlKind === 'blob') URL.revokeObjectURL(url);
    }
    const component = module.default;
    if (typeof component !== 'function' && !(typeof component === 'object' && component !== null)) {
      throw new ComponentLoadError('the component module has no default-exported component');
    }
    return component as ComponentType;
  }

  /** Fetches, checks and evaluates a declared package's bundle, then provides its namespace. */
  private async provideBundle(bundle: GadgetBundle): Promise<void> {
    const key = `${bundle.url} ${bundle.integrity ?? ''}`;
    if (this.loadedBundles.get(bundle.package) === key) return;
    const what = `the gadget package "${bundle.package}"`;
    const source = await fetchBundle(bundle);
    const rewritten = await this.rewrite(source, what);
    const url = moduleUrl(this.urlKind, rewritten);
    let namespace: Record<string, unknown>;
    try {
      namespace = (await import(/* webpackIgnore: true */ url)) as Record<string, unknown>;
    } catch (error) {
      throw new ComponentLoadError(`${what} failed to load: ${describe(error)}`);
    } finally {
      if (this.urlKind === 'blob') URL.revokeObjectURL(url);
    }
    if (bundle.styleUrl) linkStylesheet(bundle.styleUrl);
    this.provided[bundle.package] = { ...namespace };
    this.shimUrls.delete(bundle.package);
    this.loadedBundles.set(bundle.package, key);
  }

  /** The specifiers `code` imports, statically or dynamically. */
  private async specifiers(code: string, what: string): Promise<string[]> {
    await init();
    return this.imports(code, what).map((entry) => entry.n).filter((n): n is string => n !== undefined);
  }

  private imports(code: string, what: string): ReturnType<typeof parse>[0] {
    try {
      return parse(code)[0];
    } catch (error) {
      throw new ComponentLoadError(`${what} does not parse: ${describe(error)}`);
    }
  }

  /** `code` with every import pointed at a provided module's shim; `what` names it in errors. */
  private async rewrite(code: string, what = 'the component'): Promise<string> {
    await init();
    const imports = this.imports(code, what === 'the component' ? 'the component module' : what);
    let out = '';
    let cursor = 0;
    for (const entry of imports) {
      const specifier = entry.n;
      if (specifier === undefined) continue; // import.meta, or a computed dynamic import
      const dynamic = entry.d > -1;
      const url = this.shimUrl(specifier, what);
      // Static: s..e is the specifier between its quotes. Dynamic: the quoted argument.
      out += code.slice(cursor, entry.s) + (dynamic ? JSON.stringify(url) : url);
      cursor = entry.e;
    }
    return out + code.slice(cursor);
  }

  private shimUrl(specifier: string, what: string): string {
    const cached = this.shimUrls.get(specifier);
    if (cached) return cached;
    const namespace = this.provided[specifier];
    if (!namespace) {
      throw new ComponentLoadError(
        `${what} imports "${specifier}", which this mount does not provide (available: ${Object.keys(this.provided).join(', ')})`,
      );
    }
    const url = moduleUrl(this.urlKind, shimSource(specifier, namespace));
    this.shimUrls.set(specifier, url);
    return url;
  }
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

function moduleUrl(kind: UrlKind, source: string): string {
  return kind === 'blob'
    ? URL.createObjectURL(new Blob([source], { type: 'text/javascript' }))
    : `data:text/javascript;charset=utf-8,${encodeURIComponent(source)}`;
}

/** Whether the document's CSP lets modules load from `kind` URLs. */
async function importable(kind: UrlKind): Promise<boolean> {
  const url = moduleUrl(kind, 'export default 1;');
  try {
    await import(/* webpackIgnore: true */ url);
    return true;
  } catch {
    return false;
  } finally {
    if (kind === 'blob') URL.revokeObjectURL(url);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
