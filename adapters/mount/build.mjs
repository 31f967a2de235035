// Builds the bundles, each byte-for-byte reproducible from the lockfile (no timestamps, no
// legal comments, no absolute paths):
// - dist/iframe-runtime.js: the mount runtime, one minified ES module, safe to inline in <script>;
// - dist/module-lexer.js: es-module-lexer as a classic script setting `globalThis.__svcModuleLexer`,
//   inlined before the runtime only where a module may come without the server's links
//   (src/module-links.ts), and prepended to the runtime at /_svc/iframe-runtime.js;
// - dist/render-check.js: the server's headless render check (src/render-check.tsx), a script
//   for an embedded QuickJS engine (adapters/render-check embeds it);
// - dist/playground.js: the local host page at /_svc/playground (src/playground/), the official
//   ext-apps AppBridge and MCP client; never part of a card.

import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const RUNTIME = 'dist/iframe-runtime.js';
const LEXER = 'dist/module-lexer.js';
const RENDER_CHECK = 'dist/render-check.js';
const PLAYGROUND = 'dist/playground.js';

const common = {
  bundle: true,
  target: ['es2022'],
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  charset: 'utf8',
  jsx: 'automatic',
  logLevel: 'warning',
};

// A card runs React components on preact/compat: `react`, `react-dom` and their subpaths
// (`react/jsx-runtime`, `react-dom/client`) resolve to it. react-dom alone was 209 kB of the
// 293 kB runtime, and every card document inlines the runtime (strict hosts allow no script
// from our origin); on compat the runtime is about 97 kB (BENCHMARKS.md, session 22).
const CARD_REACT = { react: 'preact/compat', 'react-dom': 'preact/compat' };

await build({
  ...common,
  entryPoints: ['src/main.tsx'],
  outfile: RUNTIME,
  format: 'esm',
  platform: 'browser',
  alias: CARD_REACT,
  define: { 'process.env.NODE_ENV': '"production"' },
});

await build({
  ...common,
  entryPoints: ['src/module-lexer.ts'],
  outfile: LEXER,
  format: 'iife',
  platform: 'browser',
});

// The check renders with React itself, but a component there may import only the names a card's
// `react` and `react-dom` export, so a React-only API (`use`, `useActionState`) is a finding
// rather than a card that fails to load.
const require = createRequire(import.meta.url);
const cardReactNames = Object.keys(require('preact/compat')).filter((name) => name !== 'default');

// The check uses React's development build: its errors read in full ("Objects are not valid as
// a React child (found: object with keys {id, name})") where production gives a minified code,
// and the repair prompt quotes them to the model. Only the string renderer is bundled:
// `react-dom/server.browser` would also pull the streaming renderer, which is never called.
// (react-dom's `exports` map hides its cjs/ files from require.resolve, hence the path.)
const legacyServer = fileURLToPath(
  new URL('./node_modules/react-dom/cjs/react-dom-server-legacy.browser.development.js', import.meta.url),
);
await build({
  ...common,
  entryPoints: ['src/render-check.tsx'],
  outfile: RENDER_CHECK,
  format: 'iife',
  platform: 'neutral',
  mainFields: ['main'],
  define: {
    'process.env.NODE_ENV': '"development"',
    __CARD_REACT_NAMES__: JSON.stringify(cardReactNames),
  },
  plugins: [
    {
      name: 'string-renderer-only',
      setup(builder) {
        builder.onResolve({ filter: /^react-dom\/server\.browser$/ }, () => ({ path: legacyServer }));
      },
    },
  ],
});

await build({
  ...common,
  entryPoints: ['src/playground/main.ts'],
  outfile: PLAYGROUND,
  format: 'esm',
  platform: 'browser',
  define: { 'process.env.NODE_ENV': '"production"' },
});

// The server inlines the runtime and the lexer into HTML: `</script` would end the element, and
// `<!--` would switch the HTML parser into its escaped script states.
for (const file of [RUNTIME, LEXER]) {
  const text = await readFile(file, 'utf8');
  for (const forbidden of [/<\/script/i, /<!--/]) {
    if (forbidden.test(text)) {
      console.error(`${file} contains ${forbidden}: it cannot be inlined into a <script> element`);
      process.exit(1);
    }
  }
  console.log(`${file}: ${Buffer.byteLength(text)} bytes`);
}
console.log(`${RENDER_CHECK}: ${(await readFile(RENDER_CHECK)).length} bytes`);
console.log(`${PLAYGROUND}: ${(await readFile(PLAYGROUND)).length} bytes`);
