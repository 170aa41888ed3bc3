// The `write` tool: creates or overwrites one file inside the workspace, making its parent directories,
// and reports the bytes written.

import { constants } from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, type ToolBody } from './contract.ts';
import { errnoCode, fsError, throwIfCancelled, type FsWording } from './fs-errors.ts';
import { resolveInWorkspace } from './workspace.ts';

export interface WriteArgs {
  path: string;
  content: string;
}

/** No not-found wording: write creates what is missing, so ENOENT can only come from a race and reads best raw. */
const WRITE_WORDING: FsWording = {
  isDirectory: (shown) => `${shown} is a directory; give the path of a file to write`,
  swappedWhile: 'written',
};

export const writeTool: ToolBody<WriteArgs> = async (args, ctx) => {
  if (typeof args.content !== 'string') throw new ToolError('content must be a string: the complete text of the file');
  const shown = args.path;
  const real = await resolveInWorkspace(ctx.workspace, args.path);
  throwIfCancelled(ctx.signal);

  const existing = await lstat(real).catch((err: unknown) => {
    if (isNotFound(err)) return null;
    throw fsError(err, shown, 'inspect', WRITE_WORDING);
  });
  if (existing?.isDirectory()) {
    throw new ToolError(`${shown} is a directory; give the path of a file to write (for example ${joinShown(shown, 'file.txt')})`);
  }
  if (existing && !existing.isFile()) {
    throw new ToolError(`${shown} exists and is not a regular file (device, socket or pipe); it cannot be written`);
  }

  await mkdir(path.dirname(real), { recursive: true }).catch((err: unknown) => {
    const code = errnoCode(err);
    if (code === 'EEXIST' || code === 'ENOTDIR') {
      throw new ToolError(`Cannot create the parent directory of ${shown}: a file is in the way of one of its directories`, { cause: err });
    }
    throw fsError(err, shown, 'create the parent directory of', WRITE_WORDING);
  });
  throwIfCancelled(ctx.signal);

  // O_NOFOLLOW: the path is fully resolved, so a symlink appearing here was swapped in since — do not follow it out.
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0);
  const handle = await open(real, flags, 0o666).catch((err: unknown) => {
    throw fsError(err, shown, 'open', WRITE_WORDING);
  });
  try {
    await handle.writeFile(args.content, 'utf8');
  } catch (err) {
    throw fsError(err, shown, 'write', WRITE_WORDING);
  } finally {
    await handle.close();
  }
  const bytes = Buffer.byteLength(args.content, 'utf8');
  return { text: `Successfully wrote ${bytes} bytes to ${shown}` };
};

function joinShown(dir: string, name: string): string {
  return dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`;
}

function isNotFound(err: unknown): boolean {
  const code = errnoCode(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}
