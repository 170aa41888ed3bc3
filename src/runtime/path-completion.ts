// Completes a workspace-relative path prefix from the directory it names (for prompt arguments).

import { readdir } from 'node:fs/promises';
import { ToolError } from '../tools/contract.ts';
import { resolveInWorkspace } from '../tools/workspace.ts';

/** Entries returned at most; the rest are reported as `hasMore`. */
export const PATH_COMPLETION_LIMIT = 100;

export async function completePath(workspace: string, prefix: string): Promise<{ values: string[]; hasMore: boolean }> {
  const slash = prefix.lastIndexOf('/');
  const dirPart = slash === -1 ? '' : prefix.slice(0, slash + 1);
  const namePart = slash === -1 ? prefix : prefix.slice(slash + 1);
  let dir: string;
  try {
    dir = await resolveInWorkspace(workspace, dirPart === '' ? '.' : dirPart);
  } catch (err) {
    // A prefix outside the workspace completes to nothing, like one that names no directory.
    if (err instanceof ToolError) return { values: [], hasMore: false };
    throw err;
  }
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR' || err.code === 'EACCES') return [];
    throw err;
  });
  const matches = entries
    .filter((e) => e.name.startsWith(namePart) && e.name !== '.git' && (namePart.startsWith('.') || !e.name.startsWith('.')))
    .map((e) => `${dirPart}${e.name}${e.isDirectory() ? '/' : ''}`)
    .sort();
  return { values: matches.slice(0, PATH_COMPLETION_LIMIT), hasMore: matches.length > PATH_COMPLETION_LIMIT };
}
