// The `ls` tool: one directory's entries, sorted case-insensitively, directories marked with '/',
// cut at `limit` entries and 50 KB, with the same listing as structured data. A name that could break or
// forge a line of the text is printed quoted (./name-in-text.ts); the structured listing has it as it is.

import { stat } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import path from 'node:path';
import { eachConfinedEntry } from './confined-file.ts';
import { ToolError, type ToolBody } from './contract.ts';
import { errnoCode, fsError, throwIfCancelled, type FsWording } from './fs-errors.ts';
import { LeastItems } from './least.ts';
import { nameInText, notUtf8InText } from './name-in-text.ts';
import { formatSize, truncateHead } from './truncate.ts';
import { displayPath, resolveInWorkspace } from './workspace.ts';
import { DEFAULT_LS_LIMIT, DEFAULT_MAX_BYTES } from '../limits.ts';

export interface LsArgs {
  /** Directory to list; default '.', the workspace root. */
  path?: string;
  /** Most entries to return; default 500. */
  limit?: number;
}

export type LsEntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface LsEntry {
  /** As listed; for a name whose bytes are not UTF-8, Node's decoding of them (U+FFFD for each bad byte). */
  name: string;
  type: LsEntryType;
}

/** The structuredContent of a listing (matches lsDefinition.outputSchema). */
export interface LsListing {
  [key: string]: unknown;
  path: string;
  entries: LsEntry[];
  truncated: boolean;
  /** The notices the text ends with, without their brackets. */
  notices: string[];
}

/** Entries examined between two looks at the cancellation signal. */
const CANCEL_CHECK_EVERY = 256;
/**
 * Entries kept from a directory at most, whatever `limit` says: each takes at least two bytes of the text
 * (a name and a newline), so no listing shows more than this within DEFAULT_MAX_BYTES. Keeping only these,
 * a directory of millions of names (workspace content) costs the memory of these alone.
 */
const MOST_SHOWN = Math.floor(DEFAULT_MAX_BYTES / 2) + 1;
/** ls names what it lists a path, not a file: it is meant to be a directory. */
const LS_WORDING: FsWording = { notFound: (shown) => `Path not found: ${shown}` };

export const lsTool: ToolBody<LsArgs> = async (args, ctx) => {
  const limit = args.limit ?? DEFAULT_LS_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new ToolError(`limit must be a whole number of at least 1 (got ${String(args.limit)})`);
  }
  const shown = args.path || '.';
  const real = await resolveInWorkspace(ctx.workspace, shown);
  throwIfCancelled(ctx.signal);

  const info = await stat(real).catch((err: unknown) => {
    throw fsError(err, shown, 'read directory', LS_WORDING);
  });
  if (!info.isDirectory()) throw new ToolError(`Not a directory: ${shown}; use read to see a file's contents`);
  // Listed through the checked descriptor of the directory, not its name (src/tools/confined-file.ts), a
  // batch at a time, keeping only the first entries by name that the answer can show.
  const least = new LeastItems<Listed>(Math.min(limit, MOST_SHOWN), (a, b) => byName(a.d.name, b.d.name));
  const offer = (d: Dirent, nameIsUtf8: boolean): void => least.offer({ d, nameIsUtf8 });
  await eachConfinedEntry(ctx.workspace, real, shown, offer, { wording: LS_WORDING, signal: ctx.signal });
  throwIfCancelled(ctx.signal);

  const chosen = least.sorted();
  const entryLimitReached = least.offered > limit;

  const entries: LsEntry[] = [];
  const lines: string[] = [];
  for (const [i, { d, nameIsUtf8 }] of chosen.entries()) {
    if (i % CANCEL_CHECK_EVERY === 0) throwIfCancelled(ctx.signal);
    const type = entryType(d);
    const isDir = type === 'directory' || (nameIsUtf8 && type === 'symlink' && (await linksToDirectory(ctx.workspace, path.join(real, d.name))));
    entries.push({ name: d.name, type });
    const mark = isDir ? '/' : '';
    lines.push(nameIsUtf8 ? `${nameInText(d.name)}${mark}` : notUtf8InText(d.name, mark));
  }

  const listing: LsListing = { path: displayPath(ctx.workspace, real), entries, truncated: false, notices: [] };
  if (entries.length === 0) return { text: '(empty directory)', structured: listing };

  // The entry limit already bounds the line count; only the byte limit is left to apply.
  const cut = truncateHead(lines.join('\n'), { maxLines: Number.MAX_SAFE_INTEGER });
  const notices: string[] = [];
  if (entryLimitReached) notices.push(`${limit} entries limit reached. Use limit=${limit * 2} for more`);
  if (cut.truncated) notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
  listing.entries = entries.slice(0, cut.outputLines);
  listing.truncated = notices.length > 0;
  listing.notices = notices;
  const text = notices.length > 0 ? `${cut.content}\n\n[${notices.join('. ')}]` : cut.content;
  return { text, structured: listing };
};

/** A listed entry, and whether its name is UTF-8 (one that is not cannot be named: it is shown so). */
interface Listed {
  readonly d: Dirent;
  readonly nameIsUtf8: boolean;
}

function byName(a: string, b: string): number {
  const folded = a.toLowerCase().localeCompare(b.toLowerCase());
  if (folded !== 0) return folded;
  return a < b ? -1 : a > b ? 1 : 0;
}

function entryType(d: Dirent): LsEntryType {
  if (d.isSymbolicLink()) return 'symlink';
  if (d.isDirectory()) return 'directory';
  if (d.isFile()) return 'file';
  return 'other';
}

/** A symlink gets the '/' mark only when it leads to a directory inside the workspace. */
async function linksToDirectory(workspace: string, linkPath: string): Promise<boolean> {
  let target: string;
  try {
    target = await resolveInWorkspace(workspace, linkPath);
  } catch (err) {
    // A link leading outside, or a loop, is still listed; it is just not followed to see what it names.
    if (err instanceof ToolError) return false;
    throw err;
  }
  try {
    return (await stat(target)).isDirectory();
  } catch (err) {
    // A dangling or unreadable target does not stop the listing: the link is shown without the '/' mark.
    if (errnoCode(err) !== undefined) return false;
    throw err;
  }
}
