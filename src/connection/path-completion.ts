// Completes a workspace-relative path prefix from the directory it names (for prompt arguments).

import type { Dirent } from 'node:fs';
import { eachConfinedEntry } from '../tools/confined-file.ts';
import { ToolError } from '../tools/contract.ts';
import { LeastItems } from '../tools/least.ts';
import { resolveInWorkspace } from '../tools/workspace.ts';
import { PATH_COMPLETION_LIMIT } from '../limits.ts';

/**
 * The first PATH_COMPLETION_LIMIT names of the directory `prefix` names that start with its last part.
 * Stops with `signal`'s reason once it aborts (a cancelled `completion/complete`): a directory of millions
 * of names takes time in proportion, and a request its client gave up on must not keep the thread's turns.
 */
export async function completePath(workspace: string, prefix: string, signal?: AbortSignal): Promise<{ values: string[]; hasMore: boolean }> {
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
  // Listed through the directory's checked descriptor, a batch at a time: only names inside the workspace
  // are offered, and only the first PATH_COMPLETION_LIMIT of them by name are kept, however many match.
  const least = new LeastItems<string>(PATH_COMPLETION_LIMIT, (a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // Completions are values, not lines of text: a name is offered as it is, except one that is not UTF-8,
  // which no argument can name.
  const offer = (e: Dirent, nameIsUtf8: boolean): void => {
    if (nameIsUtf8 && e.name.startsWith(namePart) && e.name !== '.git' && (namePart.startsWith('.') || !e.name.startsWith('.'))) {
      least.offer(`${dirPart}${e.name}${e.isDirectory() ? '/' : ''}`);
    }
  };
  try {
    await eachConfinedEntry(workspace, dir, prefix, offer, signal === undefined ? {} : { signal });
  } catch (err) {
    // A prefix naming nothing listable (missing, a file, unreadable, swapped out) completes to nothing.
    if (err instanceof ToolError) return { values: [], hasMore: false };
    throw err;
  }
  return { values: least.sorted(), hasMore: least.offered > PATH_COMPLETION_LIMIT };
}
