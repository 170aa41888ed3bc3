// Bundles the thread entry points to plain JavaScript in dist/, so a worker thread boots without a
// TypeScript loader (measured: ~0.5-1 s per thread through tsx's loader, ~50 ms from a bundle).
// The main thread may run from source through tsx; threads (and bin/super-pi.js) use dist/ only while it
// is at least as new as every file in src/.
//
// The npm dependencies are bundled too, except those that must stay files of their own package. Loading
// a CommonJS package from ESM (resolution, package.json reads, the cjs-module-lexer for named exports)
// was most of the main thread's start-up and a good part of every scheduler thread's: bundled, the CPU
// time from spawn to the `initialize` reply went from ~730 ms to ~400 ms (bench/cold-start.ts).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

/**
 * `--types` also writes the library's declarations to dist/types (tsc, ~15 s): what the package needs
 * (`prepare`, so `npm pack` and a git install build them), not what the tests need (`pretest`).
 */
const withTypes = process.argv.includes('--types');

/**
 * Kept as imports of node_modules: better-sqlite3 finds its native addon from its own location; piscina
 * starts its threads from a worker file next to its own; the rest are optional native add-ons that
 * ws and msgpackr load with a guarded `require` (absent → the JavaScript fallback, as unbundled).
 */
const external = ['better-sqlite3', 'piscina', 'bufferutil', 'utf-8-validate', 'msgpackr-extract'];

const started = Date.now();
// A clean dist/: a stale bundle left from a renamed entry would otherwise look fresh.
rmSync('dist', { recursive: true, force: true });
/** What every build shares; `entryPoints` differ. */
const common = {
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Code behind a dynamic `import()` (the HTTP transport, metrics, grep and find, isomorphic-git) goes to a
  // chunk of its own, so a start that does not use it does not read or parse it.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  external,
  sourcemap: true,
  // Whitespace and syntax minified, names kept (stack traces stay readable): a start parses what it loads
  // before it reads stdin, and less text is less to scan (bench/cold-start.ts).
  minifyWhitespace: true,
  minifySyntax: true,
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
};
// The command is built on its own: everything its start needs is in one file (every statically imported
// chunk is one more file to resolve, read and compile before stdin is read), and only what it loads on
// demand is split off. The threads and the library share chunks among themselves.
await Promise.all([
  build({ ...common, entryPoints: { 'super-pi': 'src/cli/bin.ts' } }),
  build({
    ...common,
    entryPoints: {
      'scheduler-worker': 'src/server/scheduler-entry.ts',
      'tool-pool-worker': 'src/tools/tool-pool-worker.ts',
      index: 'src/index.ts',
    },
  }),
]);
if (withTypes) execFileSync(process.execPath, [tscPath(), '-p', 'tsconfig.types.json'], { stdio: 'inherit' });
process.stderr.write(`built dist/${withTypes ? ' and its declarations' : ''} in ${Date.now() - started} ms\n`);

function tscPath() {
  return createRequire(import.meta.url).resolve('typescript/bin/tsc');
}
