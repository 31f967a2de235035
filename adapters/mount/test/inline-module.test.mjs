// Unit tests of the module rewrite (src/inline-module.ts): the rewritten source is run for real
// (as a data: module in Node) against a registry like the runtime's, so each test sees what a
// card would get. Run by `npm test` (scripts/unit-tests.mjs), which CI runs with the bundle check.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toInlineModule } from '../src/inline-module.ts';

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
