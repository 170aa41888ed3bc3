// Looks at the roots a client listed (file: URIs) for the core: each one's real path when it names a
// directory the server can read and enter, else why it is refused. The core decides which one is used.

import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { CheckedRoot } from '../mcp/effects.ts';

export async function checkRoots(uris: readonly string[]): Promise<CheckedRoot[]> {
  const checked: CheckedRoot[] = [];
  for (const uri of uris) checked.push(await checkRoot(uri));
  return checked;
}

async function checkRoot(uri: string): Promise<CheckedRoot> {
  let named: string;
  try {
    named = fileURLToPath(uri);
  } catch (err) {
    return { uri, problem: `it is not a local file URI (${(err as Error).message})` };
  }
  let real: string;
  try {
    real = await realpath(named);
  } catch (err) {
    return { uri, problem: `it does not exist (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  // Checked on the resolved path: the name the client gave may be a symlink to anywhere.
  const info = await stat(real).catch((err: unknown) => err as NodeJS.ErrnoException);
  if (info instanceof Error) return { uri, problem: `it cannot be examined (${info.code ?? info.message})` };
  if (!info.isDirectory()) return { uri, problem: 'it is not a directory' };
  try {
    await access(real, constants.R_OK | constants.X_OK);
  } catch (err) {
    return { uri, problem: `it is not readable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  return { uri, path: real };
}
