// The branch and short status of the workspace's repository, for the workspace resource, without running
// any program. Running git would let repository content choose one (core.fsmonitor, core.pager, hooks,
// diff.external, filters; a `config` at the root with core.worktree makes the root itself a repository), so
// the branch is read from `<root>/.git/HEAD` and the status computed by isomorphic-git (pure JavaScript: it
// runs no hooks, filters or helpers) over a file system whose every read goes through the confined path
// (src/tools/confined-file.ts) and which refuses every write. Only `<root>/.git`, a real directory, is used:
// never a repository discovered upward, never the root as a bare repository, never a `.git` file's pointer.

import type { Stats } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { FileRefusedError, readConfinedFile } from './confined-file.ts';
import { ToolError } from './contract.ts';
import { errnoCode } from './fs-errors.ts';
import { runAsync } from './fs-steps.ts';
import { resolveInWorkspace, resolveWithStats } from './workspace.ts';
import { GIT_STATUS_DEADLINE_MS, GIT_STATUS_LINES, MAX_CONFINED_FILE_BYTES } from '../limits.ts';
import { type Clock, systemClock } from '../time/clock.ts';

/** Largest file the status reads (the index, a pack, a changed work-tree file): past it the status is unavailable. */
export const GIT_MAX_FILE_BYTES = MAX_CONFINED_FILE_BYTES;
/** `.git/HEAD` is one line; anything longer is not a HEAD. */
const HEAD_MAX_BYTES = 4096;

export interface GitSummary {
  branch: string | null;
  status: string | null;
}

/** Branch and status of `<root>/.git`; null when the root has no `.git` directory or no readable HEAD. */
export async function gitSummary(root: string, clock: Clock = systemClock): Promise<GitSummary | null> {
  const dotGit = path.join(root, '.git');
  const info = await lstat(dotGit).catch((err: unknown) => {
    if (errnoCode(err) !== undefined) return null;
    throw err;
  });
  if (info === null || !info.isDirectory()) return null;
  const head = await readHead(root);
  if (head === null) return null;
  return { branch: head === '' ? null : head, status: await shortStatus(root, clock) };
}

/** The branch HEAD names ('' → null when HEAD is detached); null when there is no readable HEAD. */
async function readHead(root: string): Promise<string | null> {
  let text: string;
  try {
    text = (await readConfinedFile(root, '.git/HEAD', HEAD_MAX_BYTES)).bytes.toString('utf8').trim();
  } catch (err) {
    if (err instanceof ToolError) return null;
    throw err;
  }
  const ref = /^ref: refs\/heads\/(.+)$/.exec(text);
  if (ref) return ref[1] as string;
  // A detached HEAD (an object id) has no branch; `git rev-parse --abbrev-ref` says HEAD, shown as none.
  return /^[0-9a-f]{40,64}$/.test(text) ? '' : null;
}

/** `git status --short` lines computed by isomorphic-git; null when it fails or passes its deadline. */
async function shortStatus(root: string, clock: Clock): Promise<string | null> {
  const deadline = clock.now() + GIT_STATUS_DEADLINE_MS;
  let timer: unknown;
  const timeout = new Promise<null>((resolve) => {
    timer = clock.setTimeout(() => resolve(null), GIT_STATUS_DEADLINE_MS);
  });
  // Loaded on first use: the server's start-up does not pay for a library only this resource needs.
  const { default: git } = await import('isomorphic-git');
  const work = git
    .statusMatrix({ fs: confinedGitFs(root, deadline, clock), dir: root, gitdir: path.join(root, '.git'), cache: {}, refresh: false })
    .then((rows) => render(rows))
    // Unreadable, refused (a file outside, too large, not regular), a repository isomorphic-git cannot
    // read, or past the deadline: the status is unavailable (shown as such), not a failure of the resource.
    // Nothing may reject here: after the deadline nobody awaits this promise any more.
    .catch(() => null);
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clock.clearTimeout(timer);
  }
}

type Row = [string, 0 | 1, 0 | 1 | 2, 0 | 1 | 2 | 3];

/** statusMatrix rows as `git status --short` writes them (XY path; tracked first, then untracked), unchanged files left out. */
function render(rows: readonly Row[]): string {
  const tracked: string[] = [];
  const untracked: string[] = [];
  for (const [file, head, workdir, stage] of rows) {
    const code = shortCode(head, workdir, stage);
    if (code === '??') untracked.push(`?? ${file}`);
    else if (code !== null) tracked.push(`${code} ${file}`);
    // Removed from the index but still in the work tree: git lists it twice, deleted and untracked.
    if (head === 1 && stage === 0 && workdir !== 0) untracked.push(`?? ${file}`);
  }
  const lines = [...tracked, ...untracked];
  if (lines.length <= GIT_STATUS_LINES) return lines.join('\n');
  return [...lines.slice(0, GIT_STATUS_LINES), `... and ${lines.length - GIT_STATUS_LINES} more`].join('\n');
}

/**
 * head: 0 absent, 1 present. workdir: 0 absent, 1 same as HEAD, 2 different. stage: 0 absent, 1 same as
 * HEAD, 2 same as the work tree, 3 different from both (isomorphic-git's statusMatrix).
 */
export function shortCode(head: number, workdir: number, stage: number): string | null {
  if (head === 0 && stage === 0) return workdir === 0 ? null : '??';
  const x = head === 0 ? 'A' : stage === 0 ? 'D' : stage === 1 ? ' ' : 'M';
  let y = ' ';
  if (stage !== 0) {
    if (workdir === 0) y = 'D';
    else if ((stage === 1 && workdir === 2) || stage === 3 || (stage === 2 && workdir === 1 && head === 0)) y = 'M';
  }
  const code = `${x}${y}`;
  return code === '  ' ? null : code;
}

function fsFailure(code: string, message: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`${code}: ${message}`);
  err.code = code;
  return err;
}

/**
 * The promise file system isomorphic-git is given: reads confined to `root` (regular files only, bounded),
 * metadata of names inside it, no writes; every call past `deadline` fails so an abandoned walk stops.
 */
function confinedGitFs(root: string, deadline: number, clock: Clock) {
  const inside = (p: unknown): string => {
    if (clock.now() > deadline) throw fsFailure('ETIMEDOUT', 'git status passed its deadline');
    if (typeof p !== 'string') throw fsFailure('EINVAL', 'a path must be a string');
    return p;
  };
  /** The real path of the directory holding `p`, resolved inside the root; `p` itself is not followed. */
  const parentOf = async (p: string): Promise<string> => path.join(await resolveInWorkspace(root, path.dirname(p)), path.basename(p));
  const refuse = async (): Promise<never> => {
    throw fsFailure('EROFS', 'the workspace status is read-only');
  };
  const promises = {
    async readFile(p: unknown, options?: unknown): Promise<Buffer | string> {
      const file = inside(p);
      let bytes: Buffer;
      try {
        bytes = (await readConfinedFile(root, file, GIT_MAX_FILE_BYTES)).bytes;
      } catch (err) {
        if (err instanceof FileRefusedError && err.reason === 'directory') throw fsFailure('EISDIR', file);
        if (err instanceof ToolError && errnoCode(err.cause) !== undefined) throw err.cause;
        throw err instanceof ToolError ? fsFailure('EPERM', err.message) : err;
      }
      const encoding = typeof options === 'string' ? options : (options as { encoding?: unknown } | undefined)?.encoding;
      return encoding === 'utf8' || encoding === 'utf-8' ? bytes.toString('utf8') : bytes;
    },
    async lstat(p: unknown): Promise<Stats> {
      return lstat(await wrapResolve(() => parentOf(inside(p))));
    },
    async stat(p: unknown): Promise<Stats> {
      const resolved = await wrapResolve(() => runAsync(resolveWithStats(root, inside(p))));
      return resolved.stats ?? lstat(resolved.real);
    },
    async readdir(p: unknown): Promise<string[]> {
      return readdir(await wrapResolve(() => resolveInWorkspace(root, inside(p))));
    },
    async readlink(p: unknown): Promise<string> {
      return readlink(await wrapResolve(() => parentOf(inside(p))));
    },
    writeFile: refuse,
    mkdir: refuse,
    rmdir: refuse,
    unlink: refuse,
    symlink: refuse,
  };
  return { promises };
}

/** Resolution refusals (outside, a loop) read to isomorphic-git as a name that cannot be used. */
async function wrapResolve<T>(resolve: () => Promise<T>): Promise<T> {
  try {
    return await resolve();
  } catch (err) {
    if (err instanceof ToolError) throw fsFailure('EACCES', err.message);
    throw err;
  }
}
