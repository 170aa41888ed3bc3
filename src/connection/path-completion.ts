// Completes a workspace-relative path prefix from the directory it names (for prompt arguments).

import { listConfinedDirectory } from '../tools/confined-file.ts';
import { ToolError } from '../tools/contract.ts';
import { resolveInWorkspace } from '../tools/workspace.ts';
import { PATH_COMPLETION_LIMIT } from '../limits.ts';

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
  // Listed through the directory's checked descriptor: only names inside the workspace are offered.
  const entries = await listConfinedDirectory(workspace, dir, prefix).catch((err: unknown) => {
    // A prefix naming nothing listable (missing, a file, unreadable, swapped out) completes to nothing.
    if (err instanceof ToolError) return [];
    throw err;
  });
  const matches = entries
    .filter((e) => e.name.startsWith(namePart) && e.name !== '.git' && (namePart.startsWith('.') || !e.name.startsWith('.')))
    .map((e) => `${dirPart}${e.name}${e.isDirectory() ? '/' : ''}`)
    .sort();
  return { values: matches.slice(0, PATH_COMPLETION_LIMIT), hasMore: matches.length > PATH_COMPLETION_LIMIT };
}
