// Bundles test/*.test.mjs (which import the TypeScript sources) with esbuild and runs them with
// Node's own test runner: no test framework to install.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const tests = (await readdir('test')).filter((name) => name.endsWith('.test.mjs'));
const out = await mkdtemp(path.join(tmpdir(), 'svc-mount-tests-'));
try {
  await build({
    entryPoints: tests.map((name) => path.join('test', name)),
    outdir: out,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: ['node20'],
    logLevel: 'warning',
  });
  const run = spawnSync(process.execPath, ['--test', ...tests.map((name) => path.join(out, name))], { stdio: 'inherit' });
  process.exitCode = run.status ?? 1;
} finally {
  await rm(out, { recursive: true, force: true });
}
