// Runs inside a git-status thread (./git-status-thread.ts starts one per status and kills it at its
// deadline): computes `git status --short` with isomorphic-git over the capped, confined file system of
// ./git-fs.ts, posts one result and ends. Nothing here needs to stop itself: the owner terminates it.

import { parentPort, workerData } from 'node:worker_threads';
import git from 'isomorphic-git';
import { confinedGitFs } from './git-fs.ts';
import { nameInText } from './name-in-text.ts';
import { GIT_DELTA_MAX_DEPTH, GIT_OBJECT_MAX_BYTES, GIT_STATUS_LINES, GIT_STATUS_MAX_INFLATED_BYTES } from '../limits.ts';

/** What the owner passes in `workerData`. */
export interface GitStatusTask {
  /** Real path of the workspace root. */
  readonly root: string;
  /** Real path of `<root>/.git`, a directory. */
  readonly gitdir: string;
  /** Caps, for tests that need smaller ones; the limits in src/limits.ts otherwise. */
  readonly objectMaxBytes?: number;
  readonly maxInflatedBytes?: number;
}

/** The one message the thread posts. */
export type GitStatusReply = { readonly t: 'status'; readonly status: string } | { readonly t: 'skipped'; readonly reason: string };

type Row = [string, 0 | 1, 0 | 1 | 2, 0 | 1 | 2 | 3];

/** Longest reason shown from an error isomorphic-git raised (its messages can quote file content). */
const REASON_MAX_CHARS = 200;

export async function computeStatus(task: GitStatusTask): Promise<GitStatusReply> {
  const fs = confinedGitFs(task.root, task.gitdir, {
    objectMaxBytes: task.objectMaxBytes ?? GIT_OBJECT_MAX_BYTES,
    remaining: task.maxInflatedBytes ?? GIT_STATUS_MAX_INFLATED_BYTES,
    maxDeltaDepth: GIT_DELTA_MAX_DEPTH,
  });
  try {
    const rows = await git.statusMatrix({ fs, dir: task.root, gitdir: task.gitdir, cache: {}, refresh: false });
    return { t: 'status', status: render(rows as Row[]) };
  } catch (err) {
    // A refused object says why; anything else isomorphic-git could not read is named by its own message.
    const reason = fs.refusal() ?? `the repository could not be read (${(err instanceof Error ? err.message : String(err)).split('\n')[0]?.slice(0, REASON_MAX_CHARS)})`;
    return { t: 'skipped', reason };
  }
}

/** statusMatrix rows as `git status --short` writes them (XY path; tracked first, then untracked), unchanged files left out. */
function render(rows: readonly Row[]): string {
  const tracked: string[] = [];
  const untracked: string[] = [];
  for (const [name, head, workdir, stage] of rows) {
    // A path is workspace content: one that could break or forge a line is quoted, as git quotes it.
    const file = nameInText(name);
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

const port = parentPort;
if (port) {
  const task = workerData as GitStatusTask;
  void computeStatus(task).then((reply) => port.postMessage(reply));
}
