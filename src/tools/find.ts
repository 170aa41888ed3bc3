// The `find` tool: lists workspace paths matching a glob over a .gitignore-aware walk (no fd needed).
// Like fd it lists files, symlinks and directories (directories marked with a trailing `/`). A path that
// could break or forge a line of the text is printed quoted (./name-in-text.ts); `paths` has it as it is.

import { stat } from 'node:fs/promises';
import { ToolError, type ToolBody } from './contract.ts';
import { LeastItems } from './least.ts';
import { nameInText, notUtf8InText } from './name-in-text.ts';
import { formatSize, truncateHead } from './truncate.ts';
import { compileGlob, ignoreCutNotice, walkTree } from './walk.ts';
import { displayPath, resolveInWorkspace } from './workspace.ts';
import { DEFAULT_MAX_BYTES, FIND_DEFAULT_LIMIT } from '../limits.ts';

export interface FindArgs {
  pattern: string;
  path?: string;
  limit?: number;
}

/**
 * Matches kept at most, whatever `limit` says: each takes at least two bytes of the text (a name and a
 * newline), so no answer shows more within DEFAULT_MAX_BYTES; long paths fewer (the budget below). Only the
 * first ones by path are kept (and the rest counted): every match was kept before, and a cloned repository of
 * 150,000 files 15 directories deep (paths of 3,800 characters, sorted whole) ran a tool thread out of
 * memory, whatever the `limit`.
 */
const MOST_SHOWN = Math.floor(DEFAULT_MAX_BYTES / 2) + 1;

export const findTool: ToolBody<FindArgs> = async (args, ctx) => {
  if (typeof args.pattern !== 'string' || args.pattern.length === 0) throw new ToolError('pattern must be a non-empty string');
  const limit = args.limit === undefined ? FIND_DEFAULT_LIMIT : args.limit;
  if (typeof limit !== 'number' || !Number.isFinite(limit) || limit < 1) throw new ToolError('limit must be a number of at least 1');
  const max = Math.floor(limit);
  const userPath = args.path ?? '.';
  const target = await resolveInWorkspace(ctx.workspace, userPath);
  await requireDirectory(target, userPath);
  const searchDir = displayPath(ctx.workspace, target);
  const matches = compileGlob(args.pattern);

  // Every match is counted, so `truncated` and the totals are exact; only the first by path are kept.
  // A line is at least its path and a newline: once the lesser paths kept fill DEFAULT_MAX_BYTES, a greater one is cut.
  const least = new LeastItems<Found>(Math.min(max, MOST_SHOWN), (a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
    { weight: (f) => f.path.length + 1, max: DEFAULT_MAX_BYTES });
  const tree = walkTree(ctx.workspace, target, { signal: ctx.signal });
  for await (const batch of tree.batches()) {
    for (const entry of batch) {
      if (matches(entry.path, searchDir)) {
        const directory = entry.kind === 'directory';
        least.offer({ path: directory ? `${entry.path}/` : entry.path, directory, nameIsUtf8: entry.nameIsUtf8 });
      }
    }
  }
  ctx.signal.throwIfAborted();

  const notices: string[] = [];
  const total = least.offered;
  const limitReached = total > max;
  const shown = least.sorted();
  let paths = shown.map((f) => f.path);
  let body = 'No files found matching pattern';
  let bytesCut = false;
  if (paths.length > 0) {
    const truncation = truncateHead(shown.map(lineOf).join('\n'), { maxLines: Number.MAX_SAFE_INTEGER });
    body = truncation.content;
    if (truncation.truncated) {
      bytesCut = true;
      paths = paths.slice(0, truncation.outputLines);
      notices.push(`${formatSize(DEFAULT_MAX_BYTES)} output limit reached; showing ${paths.length} of ${total} results. Narrow it with path or a more specific pattern`);
    }
  }
  if (limitReached) notices.push(`${max} results limit reached. Use limit=${max * 2} for more, or refine pattern`);
  if (tree.capped) notices.push('Search stopped early: too many files under this path. Narrow it with path or pattern');
  const ignoreCut = ignoreCutNotice(tree.ignoreCut);
  if (ignoreCut !== null) notices.push(ignoreCut);
  const text = notices.length > 0 ? `${body}\n\n${notices.map((n) => `[${n}]`).join('\n')}` : body;
  return { text, structured: { paths, truncated: limitReached || bytesCut || tree.capped, notices } };
};

/** A match: its workspace path (a directory's with '/', as `paths` has it), whether it is a directory, whether its name is UTF-8. */
interface Found {
  readonly path: string;
  readonly directory: boolean;
  readonly nameIsUtf8: boolean;
}

function lineOf(f: Found): string {
  const [bare, mark] = f.directory ? [f.path.slice(0, -1), '/'] : [f.path, ''];
  return f.nameIsUtf8 ? `${nameInText(bare)}${mark}` : notUtf8InText(bare, mark);
}

async function requireDirectory(target: string, shown: string): Promise<void> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(target)).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new ToolError(`Path not found: ${shown}`, { cause: err });
    throw new ToolError(`cannot search ${shown}: ${(err as Error).message}`, { cause: err });
  }
  if (!isDirectory) throw new ToolError(`${shown} is not a directory; find searches directories (use grep or read for one file)`);
}
