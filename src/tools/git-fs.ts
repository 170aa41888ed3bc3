// The file system isomorphic-git is given for the workspace status: every read through the confined path
// (src/tools/confined-file.ts), no writes, and every git object checked before isomorphic-git inflates it.
//
// What statusMatrix reads (isomorphic-git 1.x): HEAD and refs (packed-refs), `config`, the index, the
// HEAD commit and every tree under it (loose `objects/xx/…` files, else a whole `.pack` found through its
// `.idx`), `.gitignore`s and `info/exclude`, and each work-tree file whose stat differs from the index
// (hashed, never inflated). Blobs are never read. So the decision: a loose object file is checked with
// ./git-object-caps.ts on every read (header first, then a bounded inflate); a `.pack` is checked whole
// against its `.idx` when it is read (every entry's declared and real size, delta targets and depth), both
// capped in file size; the inflated bytes of one status are counted across all of it. Anything left (a
// huge index, a deep work tree) is bounded by the thread the status runs in (./git-status-thread.ts).
//
// Files under `<root>/.git` are confined to `.git` itself (a symlink inside it cannot lead out, even
// into the work tree); work-tree files are confined to the root.

import type { Stats } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { PromiseFsClient } from 'isomorphic-git';
import { FileRefusedError, readConfinedFile } from './confined-file.ts';
import { ToolError } from './contract.ts';
import { errnoCode } from './fs-errors.ts';
import { runAsync } from './fs-steps.ts';
import { checkLooseObject, checkPack, GitObjectRefused, type InflateBudget } from './git-object-caps.ts';
import { isInside, resolveInWorkspace, resolveWithStats } from './workspace.ts';
import { GIT_PACK_MAX_BYTES, MAX_CONFINED_FILE_BYTES } from '../limits.ts';

/** Largest other file the status reads (the index, a changed work-tree file it hashes). */
export const GIT_MAX_FILE_BYTES = MAX_CONFINED_FILE_BYTES;

const LOOSE_OBJECT = /^objects\/[0-9a-f]{2}\/[0-9a-f]{38}(?:[0-9a-f]{24})?$/;

function fsFailure(code: string, message: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`${code}: ${message}`);
  err.code = code;
  return err;
}

export interface GitFs {
  readonly promises: PromiseFsClient['promises'];
  /** Why an object or pack was refused (the first refusal), for the note the status shows instead. */
  readonly refusal: () => string | null;
}

/**
 * The promise file system for a status of `root` whose repository is `gitdir` (`<root>/.git`, a real
 * directory): reads confined and bounded, metadata of names inside, no writes; objects charged to `budget`.
 */
export function confinedGitFs(root: string, gitdir: string, budget: InflateBudget): GitFs {
  let refusal: string | null = null;
  const refused = (err: GitObjectRefused): never => {
    refusal ??= err.message;
    throw err;
  };
  const asPath = (p: unknown): string => {
    if (typeof p !== 'string') throw fsFailure('EINVAL', 'a path must be a string');
    return p;
  };
  /** The confinement root of `p` and its name relative to it. */
  const home = (p: string): { base: string; rel: string } => {
    if (isInside(gitdir, p)) return { base: gitdir, rel: path.relative(gitdir, p) || '.' };
    return { base: root, rel: p };
  };
  /** The real path of the directory holding `p`, resolved inside its root; `p` itself is not followed. */
  const parentOf = async (p: string): Promise<string> => {
    const { base, rel } = home(p);
    return path.join(await resolveInWorkspace(base, path.dirname(rel) || '.'), path.basename(rel));
  };
  const read = async (base: string, rel: string, maxBytes: number): Promise<Buffer> => {
    try {
      return (await readConfinedFile(base, rel, maxBytes)).bytes;
    } catch (err) {
      if (err instanceof FileRefusedError && err.reason === 'directory') throw fsFailure('EISDIR', rel);
      if (err instanceof FileRefusedError && err.reason === 'too-large') refused(new GitObjectRefused(err.message));
      if (err instanceof ToolError && errnoCode(err.cause) !== undefined) throw err.cause;
      throw err instanceof ToolError ? fsFailure('EPERM', err.message) : err;
    }
  };
  const refuse = async (): Promise<never> => {
    throw fsFailure('EROFS', 'the workspace status is read-only');
  };
  const promises = {
    async readFile(p: unknown, options?: unknown): Promise<Buffer | string> {
      const { base, rel } = home(asPath(p));
      const inGit = base === gitdir;
      let bytes: Buffer;
      try {
        if (inGit && LOOSE_OBJECT.test(rel)) {
          bytes = await read(base, rel, budget.objectMaxBytes + Math.ceil(budget.objectMaxBytes / 1024) + 2048);
          checkLooseObject(bytes, rel, budget);
        } else if (inGit && /^objects\/pack\/[^/]+\.pack$/.test(rel)) {
          bytes = await read(base, rel, GIT_PACK_MAX_BYTES);
          checkPack(bytes, await read(base, rel.replace(/\.pack$/, '.idx'), GIT_PACK_MAX_BYTES), rel, budget);
        } else {
          bytes = await read(base, rel, inGit && rel.endsWith('.idx') ? GIT_PACK_MAX_BYTES : GIT_MAX_FILE_BYTES);
        }
      } catch (err) {
        if (err instanceof GitObjectRefused) refused(err);
        throw err;
      }
      const encoding = typeof options === 'string' ? options : (options as { encoding?: unknown } | undefined)?.encoding;
      return encoding === 'utf8' || encoding === 'utf-8' ? bytes.toString('utf8') : bytes;
    },
    async lstat(p: unknown): Promise<Stats> {
      return lstat(await wrapResolve(() => parentOf(asPath(p))));
    },
    async stat(p: unknown): Promise<Stats> {
      const { base, rel } = home(asPath(p));
      const resolved = await wrapResolve(() => runAsync(resolveWithStats(base, rel)));
      return resolved.stats ?? lstat(resolved.real);
    },
    async readdir(p: unknown): Promise<string[]> {
      const { base, rel } = home(asPath(p));
      return readdir(await wrapResolve(() => resolveInWorkspace(base, rel)));
    },
    async readlink(p: unknown): Promise<string> {
      return readlink(await wrapResolve(() => parentOf(asPath(p))));
    },
    writeFile: refuse,
    mkdir: refuse,
    rmdir: refuse,
    unlink: refuse,
    symlink: refuse,
  };
  return { promises, refusal: () => refusal };
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
