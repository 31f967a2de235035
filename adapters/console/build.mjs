// Builds the console, byte-for-byte reproducible from the lockfile (no timestamps, no legal
// comments, no absolute paths): dist/app.js (one minified ES module), dist/app.css and
// dist/index.html (copied). The server embeds the three files and serves them under a strict
// content security policy: no inline script or style anywhere.

import { build } from 'esbuild';
import { copyFile, readFile } from 'node:fs/promises';

await build({
  entryPoints: ['src/main.tsx'],
  outfile: 'dist/app.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  charset: 'utf8',
  jsx: 'automatic',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
});
await copyFile('src/styles.css', 'dist/app.css');
await copyFile('src/index.html', 'dist/index.html');

const html = await readFile('dist/index.html', 'utf8');
if (/<script(?![^>]*\bsrc=)[^>]*>/i.test(html) || /<style/i.test(html) || /\son[a-z]+=/i.test(html)) {
  console.error('dist/index.html has inline script or style: the console policy forbids it');
  process.exit(1);
}
for (const file of ['dist/app.js', 'dist/app.css', 'dist/index.html']) {
  console.log(`${file}: ${(await readFile(file, 'utf8')).length} bytes`);
}
