// Gathers the workspace context resource: root, git branch and status, top-level layout, README excerpt.

import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceContext } from '../mcp/effects.ts';

/** Entries of the top-level layout listed; more are summarised as a count. */
export const LAYOUT_LIMIT = 100;
/** Lines of the README shown. */
export const README_EXCERPT_LINES = 40;
/** Lines of `git status --short` shown. */
export const GIT_STATUS_LINES = 50;
const GIT_TIMEOUT_MS = 5000;

export async function gatherWorkspaceContext(root: string): Promise<WorkspaceContext> {
  const [git, layout, readme] = await Promise.all([gitSummary(root), topLevel(root), readmeExcerpt(root)]);
  return { root, git, layout, readme };
}

async function topLevel(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true });
  const names = entries
    .filter((e) => e.name !== '.git')
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort((a, b) => a.localeCompare(b));
  if (names.length <= LAYOUT_LIMIT) return names;
  return [...names.slice(0, LAYOUT_LIMIT), `... and ${names.length - LAYOUT_LIMIT} more`];
}

async function readmeExcerpt(root: string): Promise<WorkspaceContext['readme']> {
  const entries = await readdir(root);
  const name = entries.find((n) => /^readme(\.(md|markdown|txt|rst))?$/i.test(n));
  if (!name) return null;
  const text = await readFile(path.join(root, name), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EISDIR' || err.code === 'EACCES') return null;
    throw err;
  });
  if (text === null) return null;
  const lines = text.split('\n');
  const excerpt = lines.slice(0, README_EXCERPT_LINES).join('\n');
  return { path: name, excerpt: lines.length > README_EXCERPT_LINES ? `${excerpt}\n...` : excerpt };
}

async function gitSummary(root: string): Promise<WorkspaceContext['git']> {
  const inside = await git(root, ['rev-parse', '--is-inside-work-tree']);
  if (inside?.trim() !== 'true') return null;
  const branch = (await git(root, ['rev-parse', '--abbrev-ref', 'HEAD']))?.trim() ?? null;
  const status = await git(root, ['status', '--short']);
  const lines = status === null ? null : status.split('\n').filter((l) => l !== '');
  const shown = lines === null ? null
    : lines.length > GIT_STATUS_LINES ? [...lines.slice(0, GIT_STATUS_LINES), `... and ${lines.length - GIT_STATUS_LINES} more`].join('\n')
    : lines.join('\n');
  return { branch: branch === 'HEAD' ? null : branch, status: shown };
}

/** Runs git; null when git is missing or the command fails (not a repository, no commits yet). */
function git(cwd: string, args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, timeout: GIT_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (err, stdout) => resolve(err ? null : stdout));
  });
}
