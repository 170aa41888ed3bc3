// Where a thread finds its code: the plain-JavaScript bundle in dist/ (fast to boot) while it is at
// least as new as every file in src/, else the TypeScript source through tsx's loader. Generic: the
// caller names its bundle, its source module and the boot file that loads the source.

import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** `built`: dist/ only; `source`: src/ through tsx (needed for behaviours written in TypeScript, as tests use); `auto`: dist/ when fresh. */
export type EntryMode = 'auto' | 'built' | 'source';

export interface ThreadEntry {
  readonly url: URL;
  /** Node flags for the thread: a built entry drops the TypeScript loader the main thread may run under. */
  readonly execArgv: string[];
  /** For a source entry: the module the boot file loads. */
  readonly workerData?: { entry: string };
  readonly mode: 'built' | 'source';
}

/** The files of one kind of thread, relative to the package root. */
export interface ThreadCode {
  /** Name of the bundle in dist/ (without `.js`). */
  readonly bundle: string;
  /** The TypeScript module a source entry runs. */
  readonly source: string;
  /** The JavaScript file a source entry starts: it registers tsx, then loads `source`. */
  readonly boot: string;
}

const root = findRoot(path.dirname(fileURLToPath(import.meta.url)));
let fresh: Map<string, boolean> | null = null;

export function threadEntry(code: ThreadCode, mode: EntryMode = 'auto'): ThreadEntry {
  const built = path.join(root, 'dist', `${code.bundle}.js`);
  if (mode === 'built' || (mode === 'auto' && isFresh(built))) return { url: pathToFileURL(built), execArgv: withoutTsx(process.execArgv), mode: 'built' };
  return { url: pathToFileURL(path.join(root, code.boot)), execArgv: [...process.execArgv], workerData: { entry: pathToFileURL(path.join(root, code.source)).href }, mode: 'source' };
}

/** Drops `--import tsx…` / `--require …tsx…` pairs (each thread would otherwise start its own loader thread). */
function withoutTsx(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    const value = argv[i + 1];
    if ((flag === '--import' || flag === '--require' || flag === '--loader') && value !== undefined && /tsx/.test(value)) {
      i++;
      continue;
    }
    if (/^--(import|require|loader)=.*tsx/.test(flag)) continue;
    out.push(flag);
  }
  return out;
}

function isFresh(file: string): boolean {
  fresh ??= new Map();
  const known = fresh.get(file);
  if (known !== undefined) return known;
  // An installed package ships dist/ without src/: nothing there can be newer than the bundle.
  const src = path.join(root, 'src');
  const result = existsSync(file) && (!existsSync(src) || statSync(file).mtimeMs >= newestMtime(src));
  fresh.set(file, result);
  return result;
}

/**
 * Whether every named bundle in dist/ (`name` is `name.js`; a name with an extension is taken as it is)
 * is at least as new as every file in src/, read now (no cache): what a long-running tool (the
 * benchmarks) checks before it starts a server from dist/.
 */
export function bundlesAreFresh(bundles: readonly string[]): boolean {
  const files = bundles.map((b) => path.join(root, 'dist', path.extname(b) === '' ? `${b}.js` : b));
  if (!files.every((f) => existsSync(f))) return false;
  return Math.min(...files.map((f) => statSync(f).mtimeMs)) >= newestMtime(path.join(root, 'src'));
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}
