// Turns the compiled component (an ES module with bare imports) into a live module. Each bare
// specifier the runtime provides becomes a Blob-URL shim module re-exporting the runtime's own
// instance (one React for runtime and card); the lexer rewrites the specifiers in place, so no
// import map is needed (a second, late import map is Chromium-only) and strings that merely
// look like imports are left alone. A host CSP without `blob:` in script-src gets data: URLs.

import { init, parse } from 'es-module-lexer/minimal/js';
import type { ComponentType } from 'react';

/** The modules a component may import, by exact specifier. */
export type ProvidedModules = Record<string, Record<string, unknown>>;

const REGISTRY_KEY = '__svc';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

interface Registry {
  modules: ProvidedModules;
}

export class ComponentLoadError extends Error {
  override name = 'ComponentLoadError';
}

type UrlKind = 'blob' | 'data';

export class ModuleLoader {
  private readonly shimUrls = new Map<string, string>();
  private urlKind: UrlKind = 'blob';

  constructor(private readonly provided: ProvidedModules) {
    const global = globalThis as unknown as Record<string, Registry | undefined>;
    global[REGISTRY_KEY] = { modules: provided };
  }

  /** Imports `code` and returns its default export, which must be a component. */
  async load(code: string): Promise<ComponentType> {
    try {
      return await this.loadOnce(code);
    } catch (error) {
      if (this.urlKind === 'blob' && !(await importable('blob'))) {
        this.urlKind = 'data';
        this.shimUrls.clear();
        return this.loadOnce(code);
      }
      throw error;
    }
  }

  private async loadOnce(code: string): Promise<ComponentType> {
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

  private async rewrite(code: string): Promise<string> {
    await init();
    let imports;
    try {
      [imports] = parse(code);
    } catch (error) {
      throw new ComponentLoadError(`the component module does not parse: ${describe(error)}`);
    }
    let out = '';
    let cursor = 0;
    for (const entry of imports) {
      const specifier = entry.n;
      if (specifier === undefined) continue; // import.meta, or a computed dynamic import
      const dynamic = entry.d > -1;
      const url = this.shimUrl(specifier);
      // Static: s..e is the specifier between its quotes. Dynamic: the quoted argument.
      out += code.slice(cursor, entry.s) + (dynamic ? JSON.stringify(url) : url);
      cursor = entry.e;
    }
    return out + code.slice(cursor);
  }

  private shimUrl(specifier: string): string {
    const cached = this.shimUrls.get(specifier);
    if (cached) return cached;
    const namespace = this.provided[specifier];
    if (!namespace) {
      throw new ComponentLoadError(
        `the component imports "${specifier}", which this mount does not provide (available: ${Object.keys(this.provided).join(', ')})`,
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
