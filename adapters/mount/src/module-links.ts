// Where a module's imports and exports are, which the rewrite (inline-module.ts) needs. The
// server computes them for the component and sends them with its code (`links`), so the lexer
// (a quarter of the runtime) stays out of every card document. A gadget bundle is fetched here,
// so it is lexed here: by `dist/module-lexer.js` (src/module-lexer.ts), a script the server
// inlines only into documents that may need it.

import { ComponentLoadError } from './module-loader-errors';

/** es-module-lexer minimal's import fields (UTF-16 offsets), null for its undefined. */
export interface ImportLink {
  /** The specifier; null for a dynamic import of a non-literal. */
  n: string | null;
  ss: number;
  se: number;
  s: number;
  /** -1 static, else the index of the dynamic `import(`'s parenthesis. */
  d: number;
  /** -1, or where the import attributes start. */
  a: number;
}

/** es-module-lexer minimal's export fields; `ln` null for an anonymous default. */
export interface ExportLink {
  n: string;
  ln: string | null;
  s: number;
  e: number;
}

/** A module's imports (without `import.meta`) and exports. */
export interface ModuleLinks {
  imports: readonly ImportLink[];
  exports: readonly ExportLink[];
}

/** The global `dist/module-lexer.js` sets. */
export const LEXER_GLOBAL = '__svcModuleLexer';

export interface ModuleLexer {
  init(): Promise<void>;
  parse(code: string): readonly [ReadonlyArray<Omit<ImportLink, 'n'> & { n?: string }>, ReadonlyArray<Omit<ExportLink, 'ln'> & { ln?: string }>];
}

/** `value` when it has the shape of links (the server's); anything else counts as none. */
export function asModuleLinks(value: unknown): ModuleLinks | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { imports, exports } = value as Record<string, unknown>;
  return Array.isArray(imports) && Array.isArray(exports) ? { imports, exports } : undefined;
}

/** `links` when given, else what the lexer global reads in `code`. */
export async function moduleLinks(code: string, what: string, links?: ModuleLinks): Promise<ModuleLinks> {
  if (links) return links;
  const lexer = (globalThis as Record<string, unknown>)[LEXER_GLOBAL] as ModuleLexer | undefined;
  if (!lexer) throw new ComponentLoadError(`${what} cannot be read: this card's document carries no module lexer; reopen the card`);
  await lexer.init();
  let lexed: ReturnType<ModuleLexer['parse']>;
  try {
    lexed = lexer.parse(code);
  } catch (error) {
    throw new ComponentLoadError(`${what} module does not parse: ${error instanceof Error ? error.message : String(error)}`);
  }
  return {
    imports: lexed[0].filter((entry) => entry.d !== -2).map(({ n, ss, se, s, d, a }) => ({ n: n ?? null, ss, se, s, d, a })),
    // The lexer reads `export default class extends X` as a class named `extends`.
    exports: lexed[1].map(({ n, ln, s, e }) => ({ n, ln: ln === undefined || (n === 'default' && ln === 'extends') ? null : ln, s, e })),
  };
}
