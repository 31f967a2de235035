// Unit tests of the module rewrite (src/inline-module.ts): the rewritten source is run for real
// (as a data: module in Node) against a registry like the runtime's, so each test sees what a
// card would get. The spans come from the lexer global, or from links like the server's. Run by `npm test` (scripts/unit-tests.mjs), which CI runs with the bundle check.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'es-module-lexer/minimal/js';
import { toInlineModule } from '../src/inline-module.ts';
import { ComponentLoadError } from '../src/module-loader-errors.ts';
import { LEXER_GLOBAL } from '../src/module-links.ts';
import '../src/module-lexer.ts'; // sets the lexer global, as dist/module-lexer.js does in a card

const react = { useState: () => 'state', default: { isReact: true } };
const provided = { react, 'react/jsx-runtime': { jsx: (type) => `<${type}>` }, '@svc/gadgets': { useProps: () => ({ title: 't' }) } };
let settled = new Map();
globalThis.__svc = {
  require: (specifier) => provided[specifier],
  defaultOf: (namespace) => ('default' in namespace ? namespace.default : namespace),
  importDynamic: async (specifier) => provided[specifier],
  settle: (token, exports) => settled.set(token, exports),
};

/** Rewrites `code` and runs it; resolves to what it settled. */
async function run(code, token = `t${settled.size}`) {
  const { source } = await toInlineModule(code, token, 'the component', (specifier) => specifier in provided);
  await import(`data:text/javascript,${encodeURIComponent(source)}`);
  return settled.get(token);
}

test('static imports read the provided instances: default, named with renames, namespace', async () => {
  const exports = await run(
    'import React, { useState as use } from "react";\nimport * as G from "@svc/gadgets";\n' +
      'export default function Card() { return [React.isReact, use(), G.useProps().title]; }',
  );
  assert.deepEqual(exports.default(), [true, 'state', 't']);
});

test('a multi-line import keeps every later line where it was', async () => {
  const code = 'import {\n  useState\n} from "react";\nconst here = new Error().stack;\nexport default function Card() { return here; }';
  const { source } = await toInlineModule(code, 'lines', 'the component', () => true);
  const lineOf = (text, needle) => text.slice(0, text.indexOf(needle)).split('\n').length;
  assert.equal(lineOf(source, 'const here'), lineOf(code, 'const here'));
});

test('an anonymous default function keeps its statement boundary', async () => {
  // Were it turned into `const x = function () {}`, the next line would call it.
  const exports = await run('export default function () { return 1; }\n(globalThis.sideEffect = 2);');
  assert.equal(exports.default(), 1);
  assert.equal(globalThis.sideEffect, 2);
});

test('anonymous default classes and expressions, named and listed exports', async () => {
  assert.equal(typeof (await run('export default class extends Object {}')).default, 'function');
  assert.equal((await run('export default 40 + 2;')).default, 42);
  const listed = await run('const a = 1; function b() { return 2; }\nexport { a as default, b };\nexport const c = 3;');
  assert.deepEqual([listed.default, listed.b(), listed.c], [1, 2, 3]);
});

test('a dynamic import resolves a provided module; import.meta is left alone', async () => {
  const exports = await run('export default async function load() { return [(await import("react")).useState(), typeof import.meta]; }');
  assert.deepEqual(await exports.default(), ['state', 'object']);
});

test('imports the mount does not provide, re-exports and attributes are refused readably', async () => {
  const refuse = (code) => toInlineModule(code, 'x', 'the component', (specifier) => specifier in provided);
  await assert.rejects(refuse('import pad from "left-pad"; export default 1;'), /the component imports "left-pad", which this mount does not provide/);
  await assert.rejects(refuse('export { useState } from "react"; export default 1;'), /re-exports from "react"/);
  await assert.rejects(refuse('import data from "react" with { type: "json" }; export default 1;'), /import attributes/);
});

test('the imports are reported, so declared packages load first', async () => {
  const { specifiers } = await toInlineModule('import { a } from "@acme/charts";\nimport "react";\nexport default 1;', 'y', 'the component', () => true);
  assert.deepEqual(specifiers, ['@acme/charts', 'react']);
});

/** The links the server sends for `code`: the lexer's output, null for undefined, no import.meta. */
function linksOf(code) {
  const [imports, exports] = parse(code);
  return {
    imports: imports.filter((entry) => entry.d !== -2).map(({ n, ss, se, s, d, a }) => ({ n: n ?? null, ss, se, s, d, a })),
    // The server's parser names no class in `export default class extends X` (the lexer says `extends`).
    exports: exports.map(({ n, ln, s, e }) => ({ n, ln: ln === undefined || ln === 'extends' ? null : ln, s, e })),
  };
}

/** Runs `body` without the lexer global, so only links can be used. */
async function withoutLexer(body) {
  const lexer = globalThis[LEXER_GLOBAL];
  delete globalThis[LEXER_GLOBAL];
  try {
    return await body();
  } finally {
    globalThis[LEXER_GLOBAL] = lexer;
  }
}

test('links give exactly the rewrite the lexer gives', async () => {
  const modules = [
    'import React, { useState as use } from "react";\nimport * as G from "@svc/gadgets";\nimport "react/jsx-runtime";\n' +
      'export default function Card() { return [React.isReact, use(), G.useProps().title]; }',
    'import {\n  useState\n} from "react";\nexport default async function load(name) { return [useState(), (await import("react")).useState(), typeof import.meta, import(name)]; }',
    'export default function () { return 1; }\n(globalThis.sideEffect = 2);',
    'export default async function* () {}',
    'export default class extends Object {}',
    'export default 40 + 2;',
    'const a = 1; function b() { return 2; }\nexport { a as default, b };\nexport const c = 3;',
    // UTF-16 offsets: astral and accented characters before the import and the export.
    'const label = "héllo 🎉🎉 – ünï";\nimport React, { useState } from "react";\nexport default function Card() { return label + useState() + React.isReact; }',
  ];
  const isProvided = (specifier) => specifier in provided;
  for (const [index, code] of modules.entries()) {
    const lexed = await toInlineModule(code, `same${index}`, 'the component', isProvided);
    const links = linksOf(code);
    const linked = await withoutLexer(() => toInlineModule(code, `same${index}`, 'the component', isProvided, links));
    assert.deepEqual(linked, lexed, code);
  }
  const last = modules.at(-1);
  const { source } = await withoutLexer(() => toInlineModule(last, 'runs', 'the component', isProvided, linksOf(last)));
  await import(`data:text/javascript,${encodeURIComponent(source)}`);
  assert.equal(settled.get('runs').default(), 'héllo 🎉🎉 – ünïstatetrue');
});

test('without links a module needs the lexer global, and says so when it is missing', async () => {
  const failure = await withoutLexer(() => toInlineModule('export default 1;', 'z', 'the gadget package "@acme/charts"', () => true).catch((error) => error));
  assert.ok(failure instanceof ComponentLoadError);
  assert.equal(failure.message, 'the gadget package "@acme/charts" cannot be read: this card\'s document carries no module lexer; reopen the card');
});

test('a re-export in links is refused as the lexer\'s is', async () => {
  const code = 'export { useState } from "react"; export default 1;';
  await assert.rejects(
    withoutLexer(() => toInlineModule(code, 'r', 'the component', () => true, linksOf(code))),
    /^ComponentLoadError: the component re-exports from "react"; import the names and export them instead$/,
  );
});
