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
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';

/**
 * `--types` also writes the library's declarations to dist/types (tsc, ~15 s): what the package needs
 * (`prepare`, so `npm pack` and a git install build them), not what the tests need (`pretest`).
 */
const withTypes = process.argv.includes('--types');

/**
 * Kept as imports of node_modules: better-sqlite3 finds its native addon from its own location; piscina
 * starts its threads from a worker file next to its own; the rest are optional native add-ons that
 * ws and msgpackr load with a guarded `require` (absent → the JavaScript fallback, as unbundled); sharp
 * loads its libvips addon from its @img/* packages, so it too stays a package of its own.
 */
const external = ['better-sqlite3', 'piscina', 'bufferutil', 'utf-8-validate', 'msgpackr-extract', 'sharp'];

/**
 * Node built-ins the command loads on first use instead of at start, with what loading one costs (CPU,
 * measured on Node 20 with `require` in a fresh process): a stdio start runs no command before its first
 * `bash` call and starts no thread before its first pooled call, so neither is needed before the first
 * reply. v8 is not here: the connection actor checkpoints with `v8.serialize` on `initialize`.
 */
const LAZY_BUILTINS = new Map([
  ['child_process', 'child_process, with net and dgram: ~3-4 ms'],
  ['worker_threads', 'worker_threads: ~2-6 ms'],
  // Not loaded by Node's own start (except for `node -e`): ~10 ms. Used by a start for ids (randomUUID,
  // which loads it on its call) and for the token table (only with tokens).
  ['crypto', 'crypto: ~5-10 ms'],
]);

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
// The command is built on its own, as ONE CommonJS file with nothing split off: Node 20 can compile a
// CommonJS script from a V8 code cache (src/cli/code-cache.ts), not an ES module, and with the cache a
// start spent ~15 ms less CPU before its first reply than the ES module build with code splitting
// (measured with /usr/bin/time and /proc/<pid>/schedstat, 15 interleaved runs each; README "Cold start").
// What a start does not use (HTTP, WebSocket, metrics, grep and find, isomorphic-git, pg) is still only
// evaluated on first use: esbuild wraps each module of a dynamic `import()` in a function called then.
// `import.meta.url` is the bundle's own URL, from `__filename`. The threads and the library stay ES
// modules and share chunks among themselves.
const commonJs = {
  ...common,
  plugins: [lazyBuiltins(), asciiPackages()],
  format: 'cjs',
  splitting: false,
  outExtension: { '.js': '.cjs' },
  define: { 'import.meta.url': '__superPiModuleUrl' },
  banner: { js: ['// Built by scripts/build.mjs from src/; do not edit.', "var __superPiModuleUrl = require('node:url').pathToFileURL(__filename).href;"].join('\n') },
};
await Promise.all([
  build({ ...commonJs, entryPoints: { 'super-pi': 'src/cli/bin.ts' } }),
  build({
    ...common,
    entryPoints: {
      'scheduler-worker': 'src/server/scheduler-entry.ts',
      'tool-pool-worker': 'src/tools/tool-pool-worker.ts',
      'git-status-worker': 'src/tools/git-status-worker.ts',
      index: 'src/index.ts',
    },
  }),
]);
assertAscii('dist/super-pi.cjs');
// The loader that runs the command's bundle from its code cache knows the bundle's hash (what names the
// cache and heads every cache file, checked at each start) from here, so a start does not hash 1.4 MB of
// text: the same digest as `bundleHash` in code-cache.ts.
const bundleHash = createHash('sha256').update(readFileSync('dist/super-pi.cjs', 'utf8')).digest('hex');
await build({ ...commonJs, entryPoints: { 'super-pi-start': 'src/cli/start.ts' }, sourcemap: false, define: { __SUPER_PI_BUNDLE_HASH__: JSON.stringify(bundleHash) } });
if (withTypes) execFileSync(process.execPath, [tscPath(), '-p', 'tsconfig.types.json'], { stdio: 'inherit' });
process.stderr.write(`built dist/${withTypes ? ' and its declarations' : ''} in ${Date.now() - started} ms\n`);

/**
 * `import { spawn } from 'node:child_process'` in src/ binds to a stand-in whose functions load the real
 * module on their first call (a class is constructed from the real one: `new Worker(…)` works, but is
 * an instance of the real class, not of the stand-in). Only the functions are there: a value export
 * (`isMainThread`) or a default import fails the build, loudly, instead of being undefined. Only ES
 * imports from src/ are redirected; bundled packages `require` the real modules.
 */
function lazyBuiltins() {
  const names = [...LAZY_BUILTINS.keys()].join('|');
  const filter = new RegExp(`^(node:)?(${names})$`);
  return {
    name: 'lazy-builtins',
    setup(b) {
      b.onResolve({ filter }, (args) => {
        if (args.kind !== 'import-statement' || !args.importer.includes(`${path.sep}src${path.sep}`)) return undefined;
        return { path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' };
      });
      b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({ contents: lazyModule(args.path), loader: 'js' }));
    },
  };
}

/**
 * The command bundle is kept ASCII: V8 then holds its 1.3 MB of text as a one-byte string (one
 * character past ASCII anywhere makes all of it two-byte: ~1.3 MB more resident for the life of the
 * process) and the start reads it without UTF-8 decoding (src/cli/code-cache.ts). esbuild escapes what
 * it can; it leaves regular expressions and raw templates as written, so a bundled package's file with
 * such characters gets them as `\uXXXX` escapes here — the same in a string or a regular expression,
 * not in a raw template, which is why a file with `String.raw` fails the build instead.
 */
function asciiPackages() {
  return {
    name: 'ascii-packages',
    setup(b) {
      b.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, async (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!/[^\x00-\x7f]/.test(text)) return undefined;
        if (text.includes('String.raw')) throw new Error(`${args.path}: characters past ASCII and a raw template; escape by hand`);
        return { contents: text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`), loader: 'js' };
      });
    },
  };
}

function assertAscii(file) {
  const text = readFileSync(file, 'utf8');
  const at = text.search(/[^\x00-\x7f]/);
  if (at !== -1) throw new Error(`${file} is not ASCII at ${at}: …${text.slice(Math.max(0, at - 60), at + 10)}… (see asciiPackages in scripts/build.mjs)`);
}

function lazyModule(name) {
  const real = createRequire(import.meta.url)(name);
  const lines = [`let loaded;\nconst load = () => (loaded ??= require('node:${name}'));`];
  for (const [key, value] of Object.entries(real)) {
    if (typeof value !== 'function' || key.startsWith('_')) continue;
    // Node's classes are named in PascalCase; each is constructed, every other function called.
    lines.push(/^[A-Z]/.test(key) ? `export function ${key}(...a) { return new (load().${key})(...a); }` : `export function ${key}(...a) { return load().${key}(...a); }`);
  }
  return lines.join('\n');
}

function tscPath() {
  return createRequire(import.meta.url).resolve('typescript/bin/tsc');
}
