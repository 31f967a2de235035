// Rewrites an ES module (the compiled component, or a declared gadget bundle) so it can run as
// an inline `<script type="module">` with nothing to fetch: hosts mount cards under a CSP built
// from our `_meta.ui.csp`, whose script-src admits inline scripts and the declared origins only,
// so modules from `blob:` or `data:` URLs, `eval` and workers are all refused there.
//
// - Every static import of a provided module becomes a read of the runtime's own instance
//   (`globalThis.__svc.require`), hoisted to the top as imports are; the import statement itself
//   is blanked, keeping every line where it was so error positions still point at the code.
// - A dynamic `import("x")` becomes `globalThis.__svc.importDynamic("x")` (a provided module, or
//   a readable rejection).
// - The exports are handed back by a last statement, `globalThis.__svc.settle(token, {...})`.
//   An anonymous default declaration gets a name so it can be referenced there; a default
//   expression becomes `const __svc_default = ...` (the same semicolon rules).
//
// Where the imports and exports are comes from the server or the lexer (module-links.ts).

import { ComponentLoadError } from './module-loader-errors';
import { moduleLinks, type ModuleLinks } from './module-links';

/** The global the rewritten module reads its imports from and settles its exports through. */
export const REGISTRY_GLOBAL = '__svc';
const DEFAULT_LOCAL = '__svc_default';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

interface ImportClause {
  defaultName?: string;
  namespace?: string;
  named: Array<{ imported: string; local: string }>;
}

/** Whether `specifier` is provided; the rewrite refuses any other import before anything runs. */
export type IsProvided = (specifier: string) => boolean;

/** A module rewritten for an inline script, and the modules it imports statically. */
export interface InlineModule {
  source: string;
  specifiers: string[];
}

/**
 * `code` as inline-module source that settles `token` with its exports. `what` names the module
 * in errors ("the component", `the gadget package "x"`); `links`: its spans, if the server sent them.
 */
export async function toInlineModule(code: string, token: string, what: string, isProvided: IsProvided, links?: ModuleLinks): Promise<InlineModule> {
  const { imports, exports } = await moduleLinks(code, what, links);
  const registry = `globalThis.${REGISTRY_GLOBAL}`;
  const prologue: string[] = [];
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const specifiers: string[] = [];

  imports.forEach((entry, index) => {
    const specifier = entry.n;
    if (entry.d > -1) {
      // Dynamic: `import(` -> `globalThis.__svc.importDynamic(`, whatever the argument is.
      edits.push({ start: entry.ss, end: entry.d, text: `${registry}.importDynamic` });
      return;
    }
    if (specifier == null) throw new ComponentLoadError(`${what} has an import it cannot resolve`);
    if (code.startsWith('export', entry.ss)) {
      throw new ComponentLoadError(`${what} re-exports from "${specifier}"; import the names and export them instead`);
    }
    if (entry.a > -1) throw new ComponentLoadError(`${what} imports "${specifier}" with import attributes, which cards do not support`);
    if (!isProvided(specifier)) throw unprovided(what, specifier);
    if (!specifiers.includes(specifier)) specifiers.push(specifier);
    const clause = importClause(code, entry.ss, entry.s, what, specifier);
    const names = clause.named.map((binding) => binding.imported);
    const namespace = `__svc_import_${index}`;
    prologue.push(`const ${namespace} = ${registry}.require(${JSON.stringify(specifier)}, ${JSON.stringify(names)}, ${JSON.stringify(what)});`);
    if (clause.defaultName) prologue.push(`const ${clause.defaultName} = ${registry}.defaultOf(${namespace});`);
    if (clause.namespace) prologue.push(`const ${clause.namespace} = ${namespace};`);
    if (clause.named.length > 0) {
      const pattern = clause.named.map(({ imported, local }) => `${JSON.stringify(imported)}: ${local}`).join(', ');
      prologue.push(`const { ${pattern} } = ${namespace};`);
    }
    edits.push({ start: entry.ss, end: entry.se, text: blank(code.slice(entry.ss, entry.se)) });
  });

  const settled: string[] = [];
  for (const entry of exports) {
    if (entry.ln != null) {
      settled.push(`${JSON.stringify(entry.n)}: ${entry.ln}`);
      continue;
    }
    if (entry.n !== 'default') throw new ComponentLoadError(`${what} exports "${entry.n}" without a local binding`);
    edits.push(anonymousDefault(code, entry.s, entry.e, what));
    settled.push(`"default": ${DEFAULT_LOCAL}`);
  }

  edits.sort((a, b) => a.start - b.start);
  let out = prologue.join(' ');
  let cursor = 0;
  for (const edit of edits) {
    out += code.slice(cursor, edit.start) + edit.text;
    cursor = edit.end;
  }
  out += code.slice(cursor);
  const settle = `${registry}.settle(${JSON.stringify(token)}, { ${settled.join(', ')} });`;
  return { source: `${out}\n;${settle}\n`, specifiers };
}

export function unprovided(what: string, specifier: string): ComponentLoadError {
  return new ComponentLoadError(`${what} imports "${specifier}", which this mount does not provide`);
}

/** The bindings of the import statement starting at `start` whose specifier starts at `specifierStart`. */
function importClause(code: string, start: number, specifierStart: number, what: string, specifier: string): ImportClause {
  // Between `import` and the specifier's opening quote: `<clause> from`, or nothing at all.
  const head = stripComments(code.slice(start + 'import'.length, specifierStart - 1)).trim();
  if (head === '') return { named: [] };
  const bad = (): ComponentLoadError => new ComponentLoadError(`${what} has an import of "${specifier}" this mount cannot read: import ${head}`);
  if (!/\bfrom$/.test(head)) throw bad();
  let rest = head.slice(0, -'from'.length).trim();
  const clause: ImportClause = { named: [] };
  const leading = /^([A-Za-z_$][\w$]*)\s*(,\s*|$)/.exec(rest);
  if (leading && !rest.startsWith('{') && !rest.startsWith('*')) {
    clause.defaultName = leading[1]!;
    rest = rest.slice(leading[0].length).trim();
  }
  if (rest === '') return clause;
  const star = /^\*\s*as\s+([A-Za-z_$][\w$]*)$/.exec(rest);
  if (star) {
    clause.namespace = star[1]!;
    return clause;
  }
  if (!rest.startsWith('{') || !rest.endsWith('}')) throw bad();
  for (const part of rest.slice(1, -1).split(',')) {
    const binding = part.trim();
    if (binding === '') continue;
    const match = /^("[^"]*"|'[^']*'|[A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/.exec(binding);
    if (!match) throw bad();
    const name = match[1]!;
    const imported = name.startsWith('"') || name.startsWith("'") ? name.slice(1, -1) : name;
    const local = match[2] ?? imported;
    if (!IDENTIFIER.test(local)) throw bad();
    clause.named.push({ imported, local });
  }
  return clause;
}

/**
 * The edit for `export default <anonymous>` whose `default` keyword spans `start..end`: a
 * function or class declaration is named (no change to how the statement ends); an
 * expression becomes the initialiser of a constant.
 */
function anonymousDefault(code: string, start: number, end: number, what: string): { start: number; end: number; text: string } {
  const exportStart = code.lastIndexOf('export', start);
  if (exportStart < 0 || code.slice(exportStart + 'export'.length, start).trim() !== '') {
    throw new ComponentLoadError(`${what} has a default export this mount cannot read`);
  }
  const declaration = /^(\s*)((?:async\s+)?function\b\s*\*?|class\b)/.exec(code.slice(end));
  if (declaration) {
    const keywordEnd = end + declaration[0].length;
    return { start: keywordEnd, end: keywordEnd, text: ` ${DEFAULT_LOCAL}` };
  }
  return { start: exportStart, end, text: `const ${DEFAULT_LOCAL} =` };
}

/** The same number of line breaks as `text`, so later lines keep their numbers. */
function blank(text: string): string {
  return text.replace(/[^\n]/g, ' ');
}

function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
}
