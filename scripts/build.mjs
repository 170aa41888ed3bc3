// Bundles the thread entry points to plain JavaScript in dist/, so a worker thread boots without a
// TypeScript loader (measured: ~0.5-1 s per thread through tsx's loader, ~50 ms from a bundle).
// The main thread may run from source through tsx; threads (and bin/super-pi.js) use dist/ only while it
// is at least as new as every file in src/.
//
// The npm dependencies are bundled too, except those that must stay files of their own package. Loading
// a CommonJS package from ESM (resolution, package.json reads, the cjs-module-lexer for named exports)
// was most of the main thread's start-up and a good part of every scheduler thread's: bundled, the CPU
// time from spawn to the `initialize` reply went from ~730 ms to ~400 ms (bench/cold-start.ts).
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

/**
 * Kept as imports of node_modules: better-sqlite3 finds its native addon from its own location; piscina
 * starts its threads from a worker file next to its own; the rest are optional native add-ons that
 * ws and msgpackr load with a guarded `require` (absent → the JavaScript fallback, as unbundled).
 */
const external = ['better-sqlite3', 'piscina', 'bufferutil', 'utf-8-validate', 'msgpackr-extract'];

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
  external,
  sourcemap: true,
  logLevel: 'warning',
  // Bundled CommonJS code calls `require` (for Node built-ins and the optional add-ons above), which an
  // ES module does not have: esbuild's shim uses this one.
  banner: {
    js: [
      '// Built by scripts/build.mjs from src/; do not edit.',
      "import { createRequire as __superPiCreateRequire } from 'node:module';",
      'const require = __superPiCreateRequire(import.meta.url);',
    ].join('\n'),
  },
});
process.stderr.write(`built dist/ in ${Date.now() - started} ms\n`);
