// A large, deterministic source tree for the search benchmarks (bench/search.ts): about 20,000 files and
// 200 MB in nested directories, mixed extensions, a few binary files, CRLF files and minified one-line
// files, a root and a nested .gitignore (with a negation) that exclude a good share of the tree, and two
// needles (a regex one and a literal one) planted in a few dozen files on both sides of the ignore rules.
// Generated once from a seed into os.tmpdir(), keyed by TREE_VERSION, and reused by later runs.

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Bump whenever the generator's output changes: the cached tree is keyed by it. */
export const TREE_VERSION = 'v1';
const PREFIX = 'super-pi-bench-search-';

/** What the search benchmark looks for. None of these strings occurs in the filler text. */
export const NEEDLES = {
  /** A regular expression (JavaScript and Rust regex syntax alike) that matches the regex needle lines. */
  regex: 'quux_[0-9]{3}_handler\\(',
  /** A literal string (searched with literal=true / rg -F), regex metacharacters included. */
  literal: 'BENCH-NEEDLE(7f3a)',
  /** A glob that matches the .proto files, which are few and spread over the tree. */
  glob: '*.proto',
} as const;

export interface TreeManifest {
  readonly version: string;
  readonly seed: number;
  readonly files: number;
  readonly directories: number;
  readonly bytes: number;
  /** Files under ignored paths (root `build/`, `node_modules/`, `*.log`, nested `*.gen.ts`). */
  readonly ignoredFiles: number;
  readonly ignoredBytes: number;
  readonly binaryFiles: number;
  /** Files holding a regex needle line / the literal needle, counted outside ignored paths. */
  readonly regexNeedleFiles: number;
  readonly literalNeedleFiles: number;
  readonly protoFiles: number;
  readonly generationMs: number;
}

export interface GeneratedTree {
  /** The workspace: an absolute, real path. */
  readonly root: string;
  readonly manifest: TreeManifest;
  /** True when an earlier run's tree was reused. */
  readonly cached: boolean;
  /** Time spent here (generation, or only the cache check). */
  readonly ms: number;
}

export interface TreeOptions {
  readonly progress?: (line: string) => void;
  /** Where trees are cached (default os.tmpdir()). */
  readonly cacheDir?: string;
}

const SEED = 0x5eed_2026;
const TEXT_FILES = 19_600;
const BINARY_FILES = 400;
const MINIFIED_FILES = 40;
const LARGE_FILES = 24;
const TARGET_BYTES = 200 * 1024 * 1024;
const REGEX_NEEDLE_FILES = 40;
const LITERAL_NEEDLE_FILES = 24;

/** The tree for this TREE_VERSION: reused from the cache when complete, else generated (and cached). */
export function ensureTree(options: TreeOptions = {}): GeneratedTree {
  const started = performance.now();
  const cacheDir = options.cacheDir ?? os.tmpdir();
  const home = path.join(cacheDir, `${PREFIX}${TREE_VERSION}`);
  removeStale(cacheDir, home, options.progress);
  const manifestFile = path.join(home, 'manifest.json');
  if (existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as TreeManifest;
    if (manifest.version === TREE_VERSION) {
      return { root: path.join(home, 'ws'), manifest, cached: true, ms: performance.now() - started };
    }
  }
  // Built beside the final place, then renamed: a run that dies half way leaves no tree that looks whole.
  const partial = `${home}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  options.progress?.(`generating the search tree (${TEXT_FILES + BINARY_FILES} files, ~${TARGET_BYTES / 2 ** 20} MB) in ${partial}`);
  const manifest = generate(path.join(partial, 'ws'));
  const done = { ...manifest, generationMs: Math.round(performance.now() - started) };
  writeFileSync(path.join(partial, 'manifest.json'), `${JSON.stringify(done, null, 2)}\n`);
  try {
    rmSync(home, { recursive: true, force: true });
    renameSync(partial, home);
  } catch (err) {
    // Another run finished the same tree first: use theirs.
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(manifestFile)) throw err;
  }
  options.progress?.(`generated in ${(done.generationMs / 1000).toFixed(1)} s: ${done.files} files, ${(done.bytes / 2 ** 20).toFixed(0)} MB`);
  return { root: path.join(home, 'ws'), manifest: JSON.parse(readFileSync(manifestFile, 'utf8')) as TreeManifest, cached: false, ms: performance.now() - started };
}

/** Trees of other versions, and partial trees whose process is gone. */
function removeStale(cacheDir: string, keep: string, progress?: (line: string) => void): void {
  let names: string[];
  try {
    names = readdirSync(cacheDir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const full = path.join(cacheDir, name);
    if (full === keep) continue;
    const partial = /\.partial-(\d+)$/.exec(name);
    if (partial && isAlive(Number(partial[1]))) continue;
    if (partial === null && full.startsWith(`${keep}.`)) continue;
    progress?.(`removing stale search tree ${full}`);
    rmSync(full, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// ---------------------------------------------------------------------------------------------------
// Generation

/** mulberry32: a small, fast, seedable PRNG (uniform in [0, 1)). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ('alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega buffer stream socket parser '
  + 'token lexer scanner render widget layout config options request response handler service client server '
  + 'session cache index record entry value result error status count total offset length width height '
  + 'source target output input reader writer update create delete select insert filter reduce mapping '
  + 'promise future thread worker queue stack frame scope module package import export default return '
  + 'const let var function class struct trait impl enum match while for if else switch case break').split(' ');
const IDENTS = ['fooBar', 'do_work', 'get_value', 'setItem', 'parseLine', 'nextToken', 'flushAll', 'tryLock', 'emitEvent', 'readChunk'];

interface Rng {
  next: () => number;
  int: (n: number) => number;
  pick: <T>(xs: readonly T[]) => T;
}

function rngOf(seed: number): Rng {
  const next = prng(seed);
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: (xs) => xs[int(xs.length)] as (typeof xs)[number] };
}

/** A pool of filler lines (code-like and prose-like); files are made of lines drawn from it. */
function linePool(rng: Rng, count: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const indent = '  '.repeat(rng.int(5));
    const words = Array.from({ length: 2 + rng.int(14) }, () => rng.pick(WORDS));
    switch (rng.int(6)) {
      case 0: lines.push(`${indent}${rng.pick(IDENTS)}(${words.slice(0, 3).join(', ')});`); break;
      case 1: lines.push(`${indent}// ${words.join(' ')}`); break;
      case 2: lines.push(`${indent}let ${words[0]}_${rng.int(1000)} = ${words[1]}.${words[2] ?? 'x'}(${rng.int(100000)});`); break;
      case 3: lines.push(''); break;
      case 4: lines.push(`${indent}${words.join(' ')} {`); break;
      default: lines.push(`${indent}${words.join(' ')}`);
    }
  }
  return lines;
}

const TOP_DIRS = ['src', 'lib', 'packages', 'docs', 'tests', 'vendor', 'tools', 'examples'];
const SUB_DIRS = ['core', 'util', 'net', 'io', 'ui', 'db', 'api', 'model', 'view', 'internal', 'common', 'impl', 'fixtures', 'data', 'gen'];
const TEXT_EXTS = ['ts', 'ts', 'ts', 'js', 'js', 'rs', 'go', 'py', 'py', 'md', 'json', 'txt', 'c', 'h', 'java', 'css', 'html', 'yaml', 'toml', 'sh'];
const BINARY_EXTS = ['png', 'bin', 'woff2', 'jpg', 'wasm'];

interface Dir {
  readonly rel: string;
  readonly ignored: boolean;
}

interface PlannedFile {
  readonly rel: string;
  readonly ignored: boolean;
  readonly kind: 'text' | 'binary' | 'minified' | 'large';
  readonly bytes: number;
  readonly crlf: boolean;
  regexNeedles: number;
  literalNeedles: number;
}

function planDirectories(rng: Rng): Dir[] {
  const dirs: Dir[] = [];
  const grow = (rel: string, depth: number, ignored: boolean) => {
    dirs.push({ rel, ignored });
    if (depth >= 6) return;
    const children = depth === 0 ? 6 : Math.max(0, rng.int(6) - (depth > 3 ? 2 : 0));
    const used = new Set<string>();
    for (let i = 0; i < children; i++) {
      let name = rng.pick(SUB_DIRS);
      if (used.has(name)) name = `${name}${i}`;
      used.add(name);
      grow(`${rel}/${name}`, depth + 1, ignored);
    }
  };
  for (const top of TOP_DIRS) grow(top, 0, false);
  // Ignored by the root .gitignore (`build/`, `node_modules/`): as deep, and about a sixth of the files.
  grow('build', 0, true);
  grow('node_modules/dep-a', 1, true);
  grow('node_modules/dep-b', 1, true);
  return dirs;
}

function plan(rng: Rng): { dirs: Dir[]; files: PlannedFile[] } {
  const dirs = planDirectories(rng);
  const files: PlannedFile[] = [];
  const taken = new Set<string>();
  const place = (dir: Dir, base: string, ext: string): string => {
    let rel = `${dir.rel}/${base}.${ext}`;
    for (let n = 2; taken.has(rel); n++) rel = `${dir.rel}/${base}_${n}.${ext}`;
    taken.add(rel);
    return rel;
  };
  // Average text file size so the whole tree lands near TARGET_BYTES after the large and minified files.
  const largeBytes = LARGE_FILES * 2 * 1024 * 1024;
  const minifiedBytes = MINIFIED_FILES * 120 * 1024;
  const binaryBytes = BINARY_FILES * 24 * 1024;
  const average = (TARGET_BYTES - largeBytes - minifiedBytes - binaryBytes) / (TEXT_FILES - LARGE_FILES - MINIFIED_FILES);
  for (let i = 0; i < TEXT_FILES; i++) {
    const dir = rng.pick(dirs);
    let kind: PlannedFile['kind'] = 'text';
    if (i < LARGE_FILES) kind = 'large';
    else if (i < LARGE_FILES + MINIFIED_FILES) kind = 'minified';
    let ext = rng.pick(TEXT_EXTS);
    if (kind === 'minified') ext = 'min.js';
    else if (i % 150 === 7) ext = 'proto';
    else if (i % 90 === 11) ext = 'log';
    else if (dir.rel.endsWith('/gen') && i % 2 === 0) ext = 'gen.ts';
    const ignored = dir.ignored || ext === 'log' || ext === 'gen.ts';
    // Sizes: skewed (many small files, some tens of KB), mean `average`.
    const bytes = kind === 'large' ? (1 + rng.next() * 2) * 1024 * 1024
      : kind === 'minified' ? (60 + rng.int(120)) * 1024
      : Math.round(average * -Math.log(1 - rng.next() * 0.999));
    files.push({ rel: place(dir, `${rng.pick(WORDS)}_${i}`, ext), ignored, kind, bytes: Math.round(bytes), crlf: kind === 'text' && i % 97 === 3, regexNeedles: 0, literalNeedles: 0 });
  }
  // `keep.log` is un-ignored by the negation in the root .gitignore.
  files.push({ rel: 'logs/keep.log', ignored: false, kind: 'text', bytes: 20_000, crlf: false, regexNeedles: 0, literalNeedles: 0 });
  for (let i = 0; i < BINARY_FILES; i++) {
    const dir = rng.pick(dirs);
    files.push({ rel: place(dir, `asset_${i}`, rng.pick(BINARY_EXTS)), ignored: dir.ignored, kind: 'binary', bytes: 4096 + rng.int(40 * 1024), crlf: false, regexNeedles: 0, literalNeedles: 0 });
  }
  // Needles: spread over text files, ignored ones included (so a side that ignored no rules would differ).
  const text = files.filter((f) => f.kind !== 'binary');
  const keep = text.find((f) => f.rel === 'logs/keep.log') as PlannedFile;
  keep.regexNeedles = 1;
  for (let placed = 0; placed < REGEX_NEEDLE_FILES * 1.3;) {
    const f = rng.pick(text);
    if (f.regexNeedles > 0) continue;
    f.regexNeedles = 1 + (rng.int(4) === 0 ? rng.int(3) : 0);
    placed++;
  }
  for (let placed = 0; placed < LITERAL_NEEDLE_FILES * 1.3;) {
    const f = rng.pick(text);
    if (f.literalNeedles > 0) continue;
    f.literalNeedles = 1 + (rng.int(5) === 0 ? 1 : 0);
    placed++;
  }
  return { dirs, files };
}

function generate(ws: string): TreeManifest {
  const rng = rngOf(SEED);
  const pool = linePool(rng, 4096);
  const { dirs, files } = plan(rng);
  mkdirSync(ws, { recursive: true });
  // A repository marker: fd (8.x) and ripgrep respect .gitignore only inside a git repository.
  mkdirSync(path.join(ws, '.git'));
  writeFileSync(path.join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(path.join(ws, '.gitignore'), 'build/\nnode_modules/\n*.log\n!keep.log\n');
  const made = new Set<string>();
  const mkdir = (rel: string) => {
    if (made.has(rel)) return;
    mkdirSync(path.join(ws, rel), { recursive: true });
    made.add(rel);
  };
  for (const d of dirs) mkdir(d.rel);
  for (const d of dirs) if (d.rel.endsWith('/gen')) writeFileSync(path.join(ws, d.rel, '.gitignore'), '*.gen.ts\n');
  let bytes = 0;
  let ignoredFiles = 0;
  let ignoredBytes = 0;
  for (const f of files) {
    mkdir(path.posix.dirname(f.rel));
    const content = f.kind === 'binary' ? binary(rng, f.bytes) : Buffer.from(textFile(rng, pool, f), 'utf8');
    writeFileSync(path.join(ws, f.rel), content);
    bytes += content.length;
    if (f.ignored) {
      ignoredFiles++;
      ignoredBytes += content.length;
    }
  }
  const visible = files.filter((f) => !f.ignored);
  return {
    version: TREE_VERSION,
    seed: SEED,
    files: files.length,
    directories: made.size,
    bytes,
    ignoredFiles,
    ignoredBytes,
    binaryFiles: files.filter((f) => f.kind === 'binary').length,
    regexNeedleFiles: visible.filter((f) => f.regexNeedles > 0).length,
    literalNeedleFiles: visible.filter((f) => f.literalNeedles > 0).length,
    protoFiles: visible.filter((f) => f.rel.endsWith('.proto')).length,
    generationMs: 0,
  };
}

function textFile(rng: Rng, pool: readonly string[], f: PlannedFile): string {
  const eol = f.crlf ? '\r\n' : '\n';
  if (f.kind === 'minified') {
    // A handful of very long lines, as bundlers write them.
    const parts: string[] = [];
    let size = 0;
    while (size < f.bytes) {
      const line = Array.from({ length: 400 }, () => pool[rng.int(pool.length)]?.trim()).join(';');
      parts.push(line);
      size += line.length + 1;
    }
    plant(rng, parts, f, true);
    return `${parts.join('\n')}\n`;
  }
  const lines: string[] = [];
  let size = 0;
  while (size < f.bytes) {
    const line = pool[rng.int(pool.length)] as string;
    lines.push(line);
    size += line.length + eol.length;
  }
  plant(rng, lines, f, false);
  return `${lines.join(eol)}${eol}`;
}

/** Puts the file's needles on lines of their own (or, in minified files, into one long line). */
function plant(rng: Rng, lines: string[], f: PlannedFile, inline: boolean): void {
  const put = (needle: string) => {
    const at = rng.int(lines.length + 1);
    if (inline && lines.length > 0) {
      const i = Math.min(at, lines.length - 1);
      lines[i] = `${lines[i] as string};${needle}`;
    } else {
      lines.splice(at, 0, needle);
    }
  };
  for (let n = 0; n < f.regexNeedles; n++) put(`    register(quux_${100 + rng.int(900)}_handler(ctx, ${rng.int(1000)}));`);
  for (let n = 0; n < f.literalNeedles; n++) put(`  // ${NEEDLES.literal}: ${rng.pick(WORDS)} ${rng.pick(WORDS)}`);
}

function binary(rng: Rng, size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i += 4) out.writeUInt32LE(Math.floor(rng.next() * 0x1_0000_0000), Math.min(i, size - 4));
  // A header with NUL bytes, as image and font formats have: both ripgrep and super-pi skip the file.
  out.fill(0, 4, 16);
  return out;
}
