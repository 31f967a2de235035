// Builds dist/iframe-runtime.js: one minified ES module, byte-for-byte reproducible from the
// lockfile (no timestamps, no legal comments, no absolute paths), safe to inline in <script>.

import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';

const OUTFILE = 'dist/iframe-runtime.js';

await build({
  entryPoints: ['src/main.tsx'],
  outfile: OUTFILE,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  charset: 'utf8',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});

// The server inlines the bundle into HTML: `</script` would end the element, and `<!--` would
// switch the HTML parser into its escaped script states.
const text = await readFile(OUTFILE, 'utf8');
for (const forbidden of [/<\/script/i, /<!--/]) {
  if (forbidden.test(text)) {
    console.error(`${OUTFILE} contains ${forbidden}: it cannot be inlined into a <script> element`);
    process.exit(1);
  }
}
console.log(`${OUTFILE}: ${text.length} bytes`);
