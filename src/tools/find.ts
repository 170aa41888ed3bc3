// The `find` tool: lists workspace paths matching a glob over a .gitignore-aware walk (no fd needed).
// Like fd it lists files, symlinks and directories (directories marked with a trailing `/`). A path that
// could break or forge a line of the text is printed quoted (./name-in-text.ts); `paths` has it as it is.

import { stat } from 'node:fs/promises';
import { ToolError, type ToolBody } from './contract.ts';
import { nameInText, notUtf8InText } from './name-in-text.ts';
import { formatSize, truncateHead } from './truncate.ts';
import { compileGlob, walkTree } from './walk.ts';
import { displayPath, resolveInWorkspace } from './workspace.ts';
import { DEFAULT_MAX_BYTES, FIND_DEFAULT_LIMIT } from '../limits.ts';

export interface FindArgs {
  pattern: string;
  path?: string;
  limit?: number;
}

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

  // Every match is collected (the walk cap bounds them) so the result is sorted and `truncated` exact.
  const found: Found[] = [];
  const tree = walkTree(ctx.workspace, target, { signal: ctx.signal });
  for await (const batch of tree.batches()) {
    for (const entry of batch) {
      if (matches(entry.path, searchDir)) {
        const directory = entry.kind === 'directory';
        found.push({ path: directory ? `${entry.path}/` : entry.path, directory, nameIsUtf8: entry.nameIsUtf8 });
      }
    }
  }
  ctx.signal.throwIfAborted();
  found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

  const notices: string[] = [];
  const limitReached = found.length > max;
  const shown = limitReached ? found.slice(0, max) : found;
  let paths = shown.map((f) => f.path);
  let body = 'No files found matching pattern';
  let bytesCut = false;
  if (paths.length > 0) {
    const truncation = truncateHead(shown.map(lineOf).join('\n'), { maxLines: Number.MAX_SAFE_INTEGER });
    body = truncation.content;
    if (truncation.truncated) {
      bytesCut = true;
      paths = paths.slice(0, truncation.outputLines);
      notices.push(`${formatSize(DEFAULT_MAX_BYTES)} output limit reached; showing ${paths.length} of ${found.length} results. Narrow it with path or a more specific pattern`);
    }
  }
  if (limitReached) notices.push(`${max} results limit reached. Use limit=${max * 2} for more, or refine pattern`);
  if (tree.capped) notices.push('Search stopped early: too many files under this path. Narrow it with path or pattern');
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
