// The branch and short status of the workspace's repository, for the workspace resource, without running
// any program. Running git would let repository content choose one (core.fsmonitor, core.pager, hooks,
// diff.external, filters; a `config` at the root with core.worktree makes the root itself a repository), so
// the branch is read from `<root>/.git/HEAD` and the status computed by isomorphic-git (pure JavaScript: it
// runs no hooks, filters or helpers) in a thread with a memory limit and a deadline (./git-status-thread.ts),
// over a file system whose every read goes through the confined path and whose objects are capped before
// they are inflated (./git-fs.ts). Only `<root>/.git`, a real directory, is used: never a repository
// discovered upward, never the root as a bare repository, never a `.git` file's pointer.

import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { readConfinedFile } from './confined-file.ts';
import { ToolError } from './contract.ts';
import { errnoCode } from './fs-errors.ts';
import { type GitStatusOptions, gitStatusInThread } from './git-status-thread.ts';

/** `.git/HEAD` is one line; anything longer is not a HEAD. */
const HEAD_MAX_BYTES = 4096;

/** How a skipped status starts, in place of its lines. */
export const GIT_STATUS_SKIPPED = 'git status skipped: ';

export interface GitSummary {
  branch: string | null;
  status: string | null;
}

/**
 * Branch and status of `<root>/.git` (`root` a real path); null when the root has no `.git` directory or
 * no readable HEAD. A status that could not be computed within its bounds is a note saying why.
 */
export async function gitSummary(root: string, options: GitStatusOptions = {}): Promise<GitSummary | null> {
  const dotGit = path.join(root, '.git');
  const info = await lstat(dotGit).catch((err: unknown) => {
    if (errnoCode(err) !== undefined) return null;
    throw err;
  });
  // lstat: a symlink named .git, or a `.git` file (a gitdir: pointer), is not a repository here.
  if (info === null || !info.isDirectory()) return null;
  const head = await readHead(root);
  if (head === null) return null;
  const outcome = await gitStatusInThread(root, dotGit, options);
  const status = 'status' in outcome ? outcome.status : `${GIT_STATUS_SKIPPED}${outcome.skipped}`;
  return { branch: head === '' ? null : head, status };
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
