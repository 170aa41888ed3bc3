// The user's own store directory (~/.super-pi) as a run found it, and what the run changed there: the
// runner notes it before the first file and fails the run if anything in it was created, modified or
// removed (a server started without the run's SUPERPI_HOME, say through the SDK's StdioClientTransport,
// whose child gets only a default environment). Not a *.test.ts file.

import { lstat, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The directory a test run must leave as it found it: the default SUPERPI_HOME of the user running it. */
export function guardedHome(): string {
  return path.join(os.homedir(), '.super-pi');
}

/** What is noted of each entry: enough to see a write (SQLite's writes change size or mtime, a new cache file is a new name). */
interface EntryState { readonly kind: 'file' | 'directory' | 'other'; readonly size: number; readonly mtimeMs: number }

/** Entries by path relative to the guarded directory ('.' is the directory itself); empty when it does not exist. */
export type HomeSnapshot = ReadonlyMap<string, EntryState>;

/** The guarded directory and everything under it (the store's files, `cache/` and its entries). */
export async function snapshotHome(dir: string): Promise<HomeSnapshot> {
  const out = new Map<string, EntryState>();
  const visit = async (rel: string): Promise<void> => {
    const full = path.join(dir, rel);
    let st;
    try {
      st = await lstat(full);
    } catch (cause) {
      // Gone between readdir and lstat (SQLite's -journal, say), or never there: not an entry.
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw cause;
    }
    const kind = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
    out.set(rel, { kind, size: st.size, mtimeMs: st.mtimeMs });
    if (kind !== 'directory') return;
    let names: string[];
    try {
      names = await readdir(full);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw cause;
    }
    for (const name of names.sort()) await visit(rel === '.' ? name : path.join(rel, name));
  };
  await visit('.');
  return out;
}

/** Each change from `before` to `after`, named: `created cache/x.v8cache`, `modified super-pi.db`, `removed …`; empty when none. */
export function homeChanges(before: HomeSnapshot, after: HomeSnapshot): string[] {
  const changes: string[] = [];
  const name = (rel: string): string => (rel === '.' ? 'the directory itself' : rel);
  for (const [rel, now] of after) {
    const was = before.get(rel);
    if (was === undefined) changes.push(`created ${name(rel)}`);
    else if (was.kind !== now.kind || was.size !== now.size || was.mtimeMs !== now.mtimeMs) changes.push(`modified ${name(rel)}`);
  }
  for (const rel of before.keys()) if (!after.has(rel)) changes.push(`removed ${name(rel)}`);
  return changes;
}
