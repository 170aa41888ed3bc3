// The `write` tool: creates or overwrites one file inside the workspace, making its parent directories,
// and reports the bytes written. The write is atomic and confined (./confined-file.ts): after a crash the
// file holds its old content or the new, and a directory swapped for a symlink cannot lead it outside.

import { writeConfinedFile, type ConfinedWording } from './confined-file.ts';
import { ToolError, type ToolBody } from './contract.ts';
import { throwIfCancelled } from './fs-errors.ts';
import { namesDirectory } from './workspace.ts';

export interface WriteArgs {
  path: string;
  content: string;
}

/** No not-found wording: write creates what is missing, so ENOENT can only come from a race and reads best raw. */
const WRITE_WORDING: ConfinedWording = {
  isDirectory: (shown) => `${shown} is a directory; give the path of a file to write (for example ${joinShown(shown, 'file.txt')})`,
  swappedWhile: 'written',
  usedAs: 'written',
};

export const writeTool: ToolBody<WriteArgs> = async (args, ctx) => {
  if (typeof args.content !== 'string') throw new ToolError('content must be a string: the complete text of the file');
  const shown = args.path;
  if (typeof shown === 'string' && namesDirectory(shown)) {
    throw new ToolError(`Not a directory: ${shown} (a path ending in '/' names a directory; give the path of a file to write)`);
  }
  throwIfCancelled(ctx.signal);
  await writeConfinedFile(ctx.workspace, shown, args.content, { wording: WRITE_WORDING });
  const bytes = Buffer.byteLength(args.content, 'utf8');
  return { text: `Successfully wrote ${bytes} bytes to ${shown}`, structured: { path: shown, bytes } };
};

function joinShown(dir: string, name: string): string {
  return dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`;
}
