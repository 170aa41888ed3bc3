// Enumerates a directory tree inside the workspace the way the search tools see it: .gitignore rules at
// every level (like git), .git/ and node_modules/ skipped, symlinks listed but never followed, and a cap.

import { constants, type Dirent } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';
import { ToolError } from './contract.ts';
import { displayPath, isInside } from './workspace.ts';

/** Directory entries a single walk examines before it stops, so a huge tree cannot run forever. */
export const MAX_WALK_ENTRIES = 200_000;
/** Directory names never entered, whatever the ignore files say. */
export const ALWAYS_SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);
/** A .gitignore larger than this is not a real one; it is skipped rather than read into memory. */
const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

export type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

export interface WalkEntry {
  /** Relative to the workspace, `/`-separated. */
  readonly path: string;
  readonly absolute: string;
  readonly kind: EntryKind;
}

export interface WalkOptions {
  /** Checked before every entry; an abort ends the walk by throwing `signal.reason`. */
  readonly signal?: AbortSignal;
  /** Overrides MAX_WALK_ENTRIES (tests use a small cap). */
  readonly maxEntries?: number;
}

interface IgnoreLayer {
  /** Workspace-relative directory holding the .gitignore; '' for the workspace root. */
  readonly base: string;
  readonly rules: Ignore;
}

interface OpenDir {
  readonly rel: string;
  readonly absolute: string;
  readonly layers: readonly IgnoreLayer[];
  readonly entries: Dirent[];
  next: number;
}

/**
 * One walk below `start` (not yielding `start` itself), in sorted depth-first order. After iterating,
 * `capped` tells whether MAX_WALK_ENTRIES stopped it and `unreadableDirs` how many subdirectories
 * could not be listed.
 */
export class TreeWalk implements AsyncIterable<WalkEntry> {
  #visited = 0;
  #capped = false;
  #unreadableDirs = 0;

  constructor(
    private readonly workspace: string,
    private readonly start: string,
    private readonly options: WalkOptions = {},
  ) {}

  get visited(): number { return this.#visited; }
  get capped(): boolean { return this.#capped; }
  get unreadableDirs(): number { return this.#unreadableDirs; }

  async *[Symbol.asyncIterator](): AsyncGenerator<WalkEntry> {
    this.#visited = 0;
    this.#capped = false;
    this.#unreadableDirs = 0;
    const max = this.options.maxEntries ?? MAX_WALK_ENTRIES;
    const signal = this.options.signal;
    const startRel = relative(this.workspace, this.start);
    const root = await this.openDir(startRel, this.start, await ancestorLayers(this.workspace, startRel));
    if (root === null) throw new ToolError(`cannot list directory ${startRel === '' ? '.' : startRel}`);
    const stack: OpenDir[] = [root];
    while (stack.length > 0) {
      signal?.throwIfAborted();
      const dir = stack[stack.length - 1] as OpenDir;
      const dirent = dir.entries[dir.next++];
      if (dirent === undefined) {
        stack.pop();
        continue;
      }
      if (++this.#visited > max) {
        this.#capped = true;
        return;
      }
      const absolute = path.join(dir.absolute, dirent.name);
      const kind = await kindOf(dirent, absolute);
      if (kind === 'directory' && ALWAYS_SKIPPED_DIRS.has(dirent.name)) continue;
      const rel = dir.rel === '' ? dirent.name : `${dir.rel}/${dirent.name}`;
      if (isIgnored(dir.layers, rel, kind === 'directory')) continue;
      yield { path: rel, absolute, kind };
      if (kind === 'directory') {
        const child = await this.openDir(rel, absolute, dir.layers);
        if (child === null) this.#unreadableDirs++;
        else stack.push(child);
      }
    }
  }

  private async openDir(rel: string, absolute: string, inherited: readonly IgnoreLayer[]): Promise<OpenDir | null> {
    let entries: Dirent[];
    try {
      entries = await readdir(absolute, { withFileTypes: true });
    } catch (err) {
      // A directory removed or locked while we walk is skipped (and counted), not fatal to the search.
      if (isErrno(err)) return null;
      throw err;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const layer = await loadLayer(absolute, rel);
    return { rel, absolute, layers: layer ? [...inherited, layer] : inherited, entries, next: 0 };
  }
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
  let matcher: (input: string) => boolean;
  try {
    matcher = picomatch(trimmed, { dot: true });
  } catch (err) {
    throw new ToolError(`invalid glob ${JSON.stringify(pattern)}: ${(err as Error).message}`, { cause: err });
  }
  // picomatch's own `basename` option also rewrites patterns that contain '/', so the split is done here.
  if (!trimmed.includes('/')) return (workspacePath) => matcher(path.posix.basename(workspacePath));
  return (workspacePath, searchDir) => {
    if (matcher(workspacePath)) return true;
    if (searchDir === '' || searchDir === '.') return false;
    const prefix = `${searchDir}/`;
    return workspacePath.startsWith(prefix) && matcher(workspacePath.slice(prefix.length));
  };
}

function relative(workspace: string, absolute: string): string {
  const shown = displayPath(workspace, absolute);
  return shown === '.' ? '' : shown;
}

/** The ignore layers of the directories above `rel` (the workspace root down to its parent). */
async function ancestorLayers(workspace: string, rel: string): Promise<IgnoreLayer[]> {
  const layers: IgnoreLayer[] = [];
  if (rel === '') return layers;
  const parts = rel.split('/');
  for (let i = 0; i < parts.length; i++) {
    const base = parts.slice(0, i).join('/');
    const layer = await loadLayer(path.join(workspace, ...parts.slice(0, i)), base);
    if (layer) layers.push(layer);
  }
  return layers;
}

async function loadLayer(dirAbsolute: string, base: string): Promise<IgnoreLayer | null> {
  const text = await readIgnoreFile(path.join(dirAbsolute, '.gitignore'));
  if (text === null) return null;
  // Git compares names case-sensitively unless the file system folds case (macOS, Windows by default).
  const rules = ignore({ ignorecase: process.platform === 'darwin' || process.platform === 'win32' }).add(text);
  return { base, rules };
}

async function readIgnoreFile(file: string): Promise<string | null> {
  let handle;
  try {
    // O_NOFOLLOW: a .gitignore symlinked out of the workspace is not read; O_NONBLOCK: a FIFO cannot hang us.
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    // No .gitignore here (the usual case), or one we may not read: either way it contributes no rules.
    if (isErrno(err)) return null;
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_IGNORE_FILE_BYTES) return null;
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
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

async function kindOf(dirent: Dirent, absolute: string): Promise<EntryKind> {
  if (dirent.isSymbolicLink()) return 'symlink';
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isFile()) return 'file';
  if (dirent.isBlockDevice() || dirent.isCharacterDevice() || dirent.isFIFO() || dirent.isSocket()) return 'other';
  // Some file systems do not report the type in readdir; ask lstat (which never follows the link).
  try {
    const info = await lstat(absolute);
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
