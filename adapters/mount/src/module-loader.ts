// Turns the compiled component (an ES module with bare imports) into a live component without
// anything a strict host refuses: no `blob:` or `data:` module, no `eval`, no worker, no fetch
// of code from our origin. The module is rewritten (inline-module.ts) so its imports read the
// runtime's own instances (one React for runtime and card) and its exports come back through
// the registry, then runs as an inline module script (inline-script.ts).
//
// A declared gadget package the component imports is fetched and checked first
// (gadget-bundles.ts), rewritten and run the same way, and its exports become one more
// provided module.

import type { ComponentType } from 'react';
import { fetchBundle, linkStylesheet, type GadgetBundle } from './gadget-bundles';
import { REGISTRY_GLOBAL, toInlineModule, unprovided } from './inline-module';
import { InlineScriptRunner, type Exports } from './inline-script';
import { ComponentLoadError } from './module-loader-errors';
import type { ModuleLinks } from './module-links';

export { ComponentLoadError };

/** The modules a component may import, by exact specifier. */
export type ProvidedModules = Record<string, Record<string, unknown>>;

/** What rewritten modules call (`globalThis.__svc`). */
interface Registry {
  modules: ProvidedModules;
  require(specifier: string, names: string[], what: string): Record<string, unknown>;
  defaultOf(namespace: Record<string, unknown>): unknown;
  importDynamic(specifier: unknown): Promise<Record<string, unknown>>;
  settle(token: string, exports: Exports): void;
}

export class ModuleLoader {
  private readonly runner = new InlineScriptRunner();
  /** Gadget packages loaded so far: package -> the bundle URL and integrity it came from. */
  private readonly loadedBundles = new Map<string, string>();

  constructor(private readonly provided: ProvidedModules) {
    const registry: Registry = {
      modules: provided,
      require: (specifier, names, what) => this.require(specifier, names, what),
      defaultOf: (namespace) => ('default' in namespace ? namespace.default : namespace),
      importDynamic: async (specifier) => {
        const namespace = typeof specifier === 'string' ? this.provided[specifier] : undefined;
        if (!namespace) throw unprovided('the component', String(specifier));
        return namespace;
      },
      settle: (token, exports) => this.runner.settle(token, exports),
    };
    (globalThis as unknown as Record<string, Registry>)[REGISTRY_GLOBAL] = registry;
  }

  /**
   * Runs `code` and returns its default export, which must be a component. `bundles`: the
   * declared packages it may import; those it does import load first. `links`: where the code's
   * imports and exports are, as the server sent them (else the lexer finds them).
   */
  async load(code: string, bundles: readonly GadgetBundle[] = [], links?: ModuleLinks): Promise<ComponentType> {
    const what = 'the component';
    const isProvided = (specifier: string): boolean =>
      specifier in this.provided || bundles.some((bundle) => bundle.package === specifier);
    // Rewriting first refuses an unprovided import before any bundle is fetched.
    const token = this.runner.nextToken();
    const inline = await toInlineModule(code, token, what, isProvided, links);
    for (const bundle of bundles) {
      if (inline.specifiers.includes(bundle.package)) await this.provideBundle(bundle);
    }
    const exports = await this.runner.run(inline.source, token, what);
    const component = exports.default;
    if (typeof component !== 'function' && !(typeof component === 'object' && component !== null)) {
      throw new ComponentLoadError('the component module has no default-exported component');
    }
    return component as ComponentType;
  }

  /** Fetches, checks and runs a declared package's bundle, then provides its exports. */
  private async provideBundle(bundle: GadgetBundle): Promise<void> {
    const key = `${bundle.url} ${bundle.integrity ?? ''}`;
    if (this.loadedBundles.get(bundle.package) === key) return;
    const what = `the gadget package "${bundle.package}"`;
    const source = await fetchBundle(bundle);
    const token = this.runner.nextToken();
    // A bundle is one module: it may import only what the runtime itself provides. It has no
    // links: the document carries the lexer for it.
    const inline = await toInlineModule(source, token, what, (specifier) => specifier in this.provided);
    const exports = await this.runner.run(inline.source, token, what);
    if (bundle.styleUrl) linkStylesheet(bundle.styleUrl);
    this.provided[bundle.package] = { ...exports };
    this.loadedBundles.set(bundle.package, key);
  }

  /** A provided module for a rewritten import; a missing name fails like a link error would. */
  private require(specifier: string, names: string[], what: string): Record<string, unknown> {
    const namespace = this.provided[specifier];
    if (!namespace) throw unprovided(what, specifier);
    const missing = names.filter((name) => name !== 'default' && !(name in namespace));
    if (missing.length > 0) {
      throw new ComponentLoadError(`${what} imports ${missing.map((name) => `"${name}"`).join(', ')} from "${specifier}", which it does not export`);
    }
    return namespace;
  }
}
