// Enumerates a directory tree inside the workspace the way the search tools see it: .gitignore rules at
// every level (like git), .git/ and node_modules/ skipped, symlinks listed but never followed, and a cap.
// The file system is read with synchronous calls, in slices: a search spends its time in many small
// system calls, and a synchronous call costs a fraction of a promise's round trip through libuv's pool
// (measured on a 20,000-file tree: the walk 3x faster, reading every file 6x). Between slices the walk
// yields to the event loop, so a caller's abort or deadline is seen within YIELD_EVERY_MS.

import { closeSync, type Dirent, lstatSync, readFileSync } from 'node:fs';
import { listDirectorySync, openRegularFileSync } from './confined-file.ts';
import path from 'node:path';
import { ToolError } from './contract.ts';
import { compileGlobMatcher, GlobSyntaxError, type PathMatcher } from './glob.ts';
import { type IgnoreLimit, IgnoreRules } from './ignore-rules.ts';
import { argumentExcerpt, nameInText } from './name-in-text.ts';
import { displayPath, isInside } from './workspace.ts';
import { IGNORE_MAX_GLOB_RULES, IGNORE_MAX_LINES, MAX_WALK_ENTRIES } from '../limits.ts';

/** Directory names never entered, whatever the ignore files say. */
export const ALWAYS_SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);
/** A .gitignore larger than this is not a real one; it is skipped rather than read into memory. */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;
/** Entries handed over at a time by `batches()`. */
const BATCH_ENTRIES = 256;
/** Longest stretch of synchronous work (the walk's and its consumer's) between two turns of the event loop. */
export const YIELD_EVERY_MS = 20;

export type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

export interface WalkEntry {
  /** Relative to the workspace, `/`-separated. */
  readonly path: string;
  readonly absolute: string;
  /** The last component of the path. */
  readonly name: string;
  readonly kind: EntryKind;
  /** False when the name's bytes are not UTF-8: `name` and `path` are Node's decoding, which names no file. */
  readonly nameIsUtf8: boolean;
}

export interface WalkOptions {
  /** Checked before every directory and batch; an abort ends the walk by throwing `signal.reason`. */
  readonly signal?: AbortSignal;
  /** Overrides MAX_WALK_ENTRIES (tests use a small cap). */
  readonly maxEntries?: number;
}

interface IgnoreLayer {
  /** Workspace-relative directory holding the .gitignore; '' for the workspace root. */
  readonly base: string;
  readonly rules: IgnoreRules;
}

/** The .gitignore files a walk applied only some rules of: the first one met, and how many in all. */
export interface IgnoreCut {
  /** Workspace-relative path of the first .gitignore met with rules left unapplied. */
  readonly file: string;
  readonly unapplied: number;
  readonly limit: IgnoreLimit;
  readonly files: number;
}

interface OpenDir {
  readonly rel: string;
  /** The directory's absolute path with a trailing separator. */
  readonly prefix: string;
  readonly layers: readonly IgnoreLayer[];
  readonly entries: Dirent[];
  readonly notUtf8: ReadonlySet<Dirent>;
  next: number;
}

/** Resolves on the next turn of the event loop (after pending I/O callbacks and timers). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * One walk below `start` (not yielding `start` itself), in sorted depth-first order. After iterating,
 * `capped` tells whether MAX_WALK_ENTRIES stopped it and `unreadableDirs` how many subdirectories
 * could not be listed.
 */
export class TreeWalk implements AsyncIterable<WalkEntry> {
  #visited = 0;
  #capped = false;
  #unreadableDirs = 0;
  #ignoreCut: IgnoreCut | null = null;

  constructor(
    private readonly workspace: string,
    private readonly start: string,
    private readonly options: WalkOptions = {},
  ) {}

  get visited(): number { return this.#visited; }
  get capped(): boolean { return this.#capped; }
  get unreadableDirs(): number { return this.#unreadableDirs; }
  /** Null unless a .gitignore met had rules past IGNORE_MAX_LINES or IGNORE_MAX_GLOB_RULES, which were not applied. */
  get ignoreCut(): IgnoreCut | null { return this.#ignoreCut; }

  #noteCut(layers: readonly IgnoreLayer[]): void {
    for (const { base, rules } of layers) {
      if (rules.cutBy === null) continue;
      const files = (this.#ignoreCut?.files ?? 0) + 1;
      this.#ignoreCut = this.#ignoreCut === null
        ? { file: base === '' ? '.gitignore' : `${base}/.gitignore`, unapplied: rules.unapplied, limit: rules.cutBy, files }
        : { ...this.#ignoreCut, files };
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<WalkEntry> {
    for await (const batch of this.batches()) yield* batch;
  }

  /**
   * The same entries, in the same order, a slice at a time. The consumer may do synchronous work on
   * each slice: the time it takes counts towards the next turn of the event loop.
   */
  async *batches(): AsyncGenerator<WalkEntry[]> {
    this.#visited = 0;
    this.#capped = false;
    this.#unreadableDirs = 0;
    this.#ignoreCut = null;
    const max = this.options.maxEntries ?? MAX_WALK_ENTRIES;
    const signal = this.options.signal;
    signal?.throwIfAborted();
    const startRel = relative(this.workspace, this.start);
    const root = openDir(this.workspace, startRel, this.start, ancestorLayers(this.workspace, startRel));
    if (root === null) throw new ToolError(`cannot list directory ${startRel === '' ? '.' : startRel}`);
    this.#noteCut(root.layers);
    const stack: OpenDir[] = [root];
    let batch: WalkEntry[] = [];
    let turn = performance.now();
    while (stack.length > 0) {
      const dir = stack[stack.length - 1] as OpenDir;
      const dirent = dir.entries[dir.next++];
      if (dirent === undefined) {
        stack.pop();
        continue;
      }
      if (++this.#visited > max) {
        this.#capped = true;
        break;
      }
      const name = dirent.name;
      const absolute = dir.prefix + name;
      const kind = kindOf(dirent, absolute);
      if (kind === 'directory' && ALWAYS_SKIPPED_DIRS.has(name)) continue;
      const rel = dir.rel === '' ? name : `${dir.rel}/${name}`;
      if (dir.layers.length > 0 && isIgnored(dir.layers, rel, kind === 'directory')) continue;
      batch.push({ path: rel, absolute, name, kind, nameIsUtf8: !dir.notUtf8.has(dirent) });
      if (kind === 'directory') {
        signal?.throwIfAborted();
        const child = openDir(this.workspace, rel, absolute, dir.layers);
        if (child === null) this.#unreadableDirs++;
        else {
          // A directory with a .gitignore of its own has one more layer than its parent.
          if (child.layers.length > dir.layers.length) this.#noteCut(child.layers.slice(dir.layers.length));
          stack.push(child);
        }
      }
      if (batch.length >= BATCH_ENTRIES) {
        signal?.throwIfAborted();
        yield batch;
        batch = [];
        if (performance.now() - turn >= YIELD_EVERY_MS) {
          await nextTurn();
          signal?.throwIfAborted();
          turn = performance.now();
        }
      }
    }
    if (batch.length > 0) {
      signal?.throwIfAborted();
      yield batch;
    }
  }
}

function openDir(workspace: string, rel: string, absolute: string, inherited: readonly IgnoreLayer[]): OpenDir | null {
  // Listed through the directory's checked descriptor (src/tools/confined-file.ts): one removed, locked,
  // or swapped for a symlink while we walk is skipped (and counted), not fatal to the search.
  const listed = listDirectorySync(workspace, absolute);
  if (listed === null) return null;
  const { entries, notUtf8 } = listed;
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // Only a directory that lists a .gitignore can have one: no failed open in every other directory.
  const layer = entries.some((e) => e.name === '.gitignore') ? loadLayer(workspace, absolute, rel, inherited) : null;
  const prefix = absolute.endsWith(path.sep) ? absolute : absolute + path.sep;
  return { rel, prefix, layers: layer ? [...inherited, layer] : inherited, entries, notUtf8, next: 0 };
}

/** Walks the directory `start` (absolute, real, inside `workspace`). */
export function walkTree(workspace: string, start: string, options: WalkOptions = {}): TreeWalk {
  if (!isInside(workspace, start)) throw new Error(`walk start ${start} is outside the workspace ${workspace}`);
  return new TreeWalk(workspace, start, options);
}

/**
 * A glob filter in the manner of ripgrep's --glob and fd's glob mode: a pattern without '/' matches the
 * file name at any depth; one with '/' matches the path relative to the search directory, or, as a
 * convenience, relative to the workspace. Dotfiles match like any other name.
 */
export function compileGlob(pattern: string): (workspacePath: string, searchDir: string) => boolean {
  const trimmed = pattern.startsWith('./') ? pattern.slice(2) : pattern;
  let regex: PathMatcher;
  try {
    if (trimmed === '') throw new GlobSyntaxError('the glob is empty');
    // RE2 (./glob.ts), not picomatch's RegExp: a caller's glob must not be able to backtrack.
    regex = compileGlobMatcher(trimmed);
  } catch (err) {
    if (!(err instanceof GlobSyntaxError)) throw err;
    throw new ToolError(`invalid glob ${argumentExcerpt(pattern)}: ${err.message}`, { cause: err });
  }
  // As picomatch's matcher did: a non-empty input equal to the glob, or one the glob matches.
  const matcher = (input: string) => input !== '' && (input === trimmed || regex(input));
  if (!trimmed.includes('/')) return (workspacePath) => matcher(baseName(workspacePath));
  return (workspacePath, searchDir) => {
    if (matcher(workspacePath)) return true;
    if (searchDir === '' || searchDir === '.') return false;
    const prefix = `${searchDir}/`;
    return workspacePath.startsWith(prefix) && matcher(workspacePath.slice(prefix.length));
  };
}

function baseName(p: string): string {
  if (p.endsWith('/')) return path.posix.basename(p);
  const slash = p.lastIndexOf('/');
  return slash < 0 ? p : p.slice(slash + 1);
}

function relative(workspace: string, absolute: string): string {
  const shown = displayPath(workspace, absolute);
  return shown === '.' ? '' : shown;
}

/** The ignore layers of the directories above `rel` (the workspace root down to its parent). */
function ancestorLayers(workspace: string, rel: string): IgnoreLayer[] {
  const layers: IgnoreLayer[] = [];
  if (rel === '') return layers;
  const parts = rel.split('/');
  for (let i = 0; i < parts.length; i++) {
    const base = parts.slice(0, i).join('/');
    const layer = loadLayer(workspace, path.join(workspace, ...parts.slice(0, i)), base, layers);
    if (layer) layers.push(layer);
  }
  return layers;
}

function loadLayer(workspace: string, dirAbsolute: string, base: string, above: readonly IgnoreLayer[]): IgnoreLayer | null {
  const text = readIgnoreFile(workspace, path.join(dirAbsolute, '.gitignore'));
  if (text === null) return null;
  // Git compares names case-sensitively unless the file system folds case (macOS, Windows by default).
  // Compiled to RE2 (./ignore-rules.ts): the file is workspace content, and must not be able to backtrack.
  // Every entry below is tested against the RE2 rules of every file above it too: they share one budget.
  const maxGlobRules = Math.max(0, IGNORE_MAX_GLOB_RULES - above.reduce((sum, layer) => sum + layer.rules.globRules, 0));
  const rules = new IgnoreRules(text, { ignoreCase: process.platform === 'darwin' || process.platform === 'win32', maxGlobRules });
  return { base, rules };
}

/** The notice a search adds when a .gitignore's rules were not all applied; null when they were. */
export function ignoreCutNotice(cut: IgnoreCut | null): string | null {
  if (cut === null) return null;
  const limit = cut.limit === 'IGNORE_MAX_LINES'
    ? `IGNORE_MAX_LINES: ${IGNORE_MAX_LINES} lines of a .gitignore`
    : `IGNORE_MAX_GLOB_RULES: ${IGNORE_MAX_GLOB_RULES} wildcard rules from the workspace root down`;
  const others = cut.files > 1 ? `, and rules of ${cut.files - 1} more .gitignore file${cut.files > 2 ? 's' : ''}` : '';
  return `${cut.unapplied} rule${cut.unapplied === 1 ? '' : 's'} of ${nameInText(cut.file)} not applied (past ${limit})${others}: files they ignore may be listed, and files they re-include left out`;
}

function readIgnoreFile(workspace: string, file: string): string | null {
  // The confined open: no link followed, no FIFO waited on, a regular file whose descriptor is inside.
  // Missing (the usual case), unreadable or refused: either way it contributes no rules.
  const opened = openRegularFileSync(workspace, file);
  if (opened === null) return null;
  try {
    if (opened.stats.size > MAX_IGNORE_FILE_BYTES) return null;
    return readFileSync(opened.fd, 'utf8');
  } catch (err) {
    // An I/O error while reading: no rules, as when it is missing.
    if (isErrno(err)) return null;
    throw err;
  } finally {
    closeSync(opened.fd);
  }
}

/** Git's precedence: a deeper .gitignore overrides a shallower one; within one file the last match wins. */
function isIgnored(layers: readonly IgnoreLayer[], rel: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const layer of layers) {
    const local = layer.base === '' ? rel : rel.slice(layer.base.length + 1);
    const verdict = layer.rules.test(isDirectory ? `${local}/` : local);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}

function kindOf(dirent: Dirent, absolute: string): EntryKind {
  if (dirent.isSymbolicLink()) return 'symlink';
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isFile()) return 'file';
  if (dirent.isBlockDevice() || dirent.isCharacterDevice() || dirent.isFIFO() || dirent.isSocket()) return 'other';
  // Some file systems do not report the type in readdir; ask lstat (which never follows the link).
  try {
    const info = lstatSync(absolute);
    if (info.isSymbolicLink()) return 'symlink';
    if (info.isDirectory()) return 'directory';
    return info.isFile() ? 'file' : 'other';
  } catch (err) {
    // Vanished between readdir and lstat: treat it as nothing worth reading.
    if (isErrno(err)) return 'other';
    throw err;
  }
}

function isErrno(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string';
}
