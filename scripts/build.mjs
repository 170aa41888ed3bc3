// Bundles the thread entry points to plain JavaScript in dist/, so a worker thread boots without a
// TypeScript loader (measured: ~0.5-1 s per thread through tsx's loader, ~50 ms from a bundle).
// The main thread may run from source through tsx; threads (and bin/super-pi.js) use dist/ only while it
// is at least as new as every file in src/.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const started = Date.now();
// A clean dist/: a stale bundle left from a renamed entry would otherwise look fresh.
rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: {
    'scheduler-worker': 'src/actors/scheduler-worker.ts',
    'tool-pool-worker': 'src/runtime/tool-pool-worker.ts',
    'super-pi': 'src/cli/bin.ts',
  },
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
  banner: { js: '// Built by scripts/build.mjs from src/; do not edit.' },
});
process.stderr.write(`built dist/ in ${Date.now() - started} ms\n`);
