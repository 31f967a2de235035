// Turns the compiled component (an ES module with bare imports) into a live module. Each bare
// specifier the runtime provides becomes a Blob-URL shim module re-exporting the runtime's own
// instance (one React for runtime and card); the lexer rewrites the specifiers in place, so no
// import map is needed (a second, late import map is Chromium-only) and strings that merely
// look like imports are left alone.

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

export class ModuleLoader {
  private readonly shimUrls = new Map<string, string>();

  constructor(private readonly provided: ProvidedModules) {
    const global = globalThis as unknown as Record<string, Registry | undefined>;
    global[REGISTRY_KEY] = { modules: provided };
  }

  /** Imports `code` and returns its default export, which must be a component. */
  async load(code: string): Promise<ComponentType> {
    const rewritten = await this.rewrite(code);
    const url = URL.createObjectURL(new Blob([rewritten], { type: 'text/javascript' }));
    let module: { default?: unknown };
    try {
      module = (await import(/* webpackIgnore: true */ url)) as { default?: unknown };
    } catch (error) {
      throw new ComponentLoadError(`the component module failed to load: ${describe(error)}`);
    } finally {
      URL.revokeObjectURL(url);
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
    const source = shimSource(specifier, namespace);
    const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
