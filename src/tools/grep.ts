// The `grep` tool: searches file contents with a JavaScript RegExp over a .gitignore-aware walk of the
// workspace (no ripgrep needed), printing ripgrep-style `path:line: text` lines and structured matches.

import { constants, type Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { ToolError, type ToolBody, type ToolOutcome } from './contract.ts';
import { GREP_DEFAULT_LIMIT, GREP_MAX_FILE_BYTES, GREP_MAX_LINE_LENGTH } from './definitions/grep.ts';
import { DEFAULT_MAX_BYTES, formatSize, truncateHead } from './truncate.ts';
import { compileGlob, walkTree } from './walk.ts';
import { displayPath, resolveInWorkspace } from './workspace.ts';

export interface GrepArgs {
  pattern: string;
  path?: string;
  glob?: string;
  ignoreCase?: boolean;
  literal?: boolean;
  context?: number;
  limit?: number;
}

export interface GrepMatch {
  /** Relative to the workspace, `/`-separated. */
  path: string;
  /** 1-based. */
  line: number;
  /** The line, cut at GREP_MAX_LINE_LENGTH characters. */
  text: string;
}

/** Leading bytes searched for a NUL to call a file binary, as git and ripgrep do. */
export const BINARY_SNIFF_BYTES = 8192;
/** Lines matched between two checks of the abort signal inside one file. */
const ABORT_CHECK_LINES = 1024;
const CUT_MARKER = '... [truncated]';

type Candidate = { kind: 'text'; text: string } | { kind: 'binary' | 'large' | 'unreadable' };

interface Search {
  readonly regex: RegExp;
  readonly limit: number;
  readonly context: number;
  readonly signal: AbortSignal;
  /** Output lines (matches, context lines, `--` separators). */
  readonly out: string[];
  /** Each match with the index of its line in `out`. */
  readonly matches: { match: GrepMatch; outIndex: number }[];
  limitReached: boolean;
  linesCut: boolean;
  binary: number;
  large: number;
  unreadable: number;
}

export const grepTool: ToolBody<GrepArgs> = async (args, ctx) => {
  if (typeof args.pattern !== 'string' || args.pattern.length === 0) throw new ToolError('pattern must be a non-empty string');
  const search: Search = {
    regex: compilePattern(args.pattern, args.ignoreCase === true, args.literal === true),
    limit: wholeNumber(args.limit, GREP_DEFAULT_LIMIT, 1, 'limit'),
    context: wholeNumber(args.context, 0, 0, 'context'),
    signal: ctx.signal,
    out: [],
    matches: [],
    limitReached: false,
    linesCut: false,
    binary: 0,
    large: 0,
    unreadable: 0,
  };
  const userPath = args.path ?? '.';
  const target = await resolveInWorkspace(ctx.workspace, userPath);
  const info = await statTarget(target, userPath);
  ctx.signal.throwIfAborted();

  let walkCapped = false;
  if (info.isDirectory()) {
    const searchDir = displayPath(ctx.workspace, target);
    const globMatches = args.glob ? compileGlob(args.glob) : null;
    const tree = walkTree(ctx.workspace, target, { signal: ctx.signal });
    for await (const entry of tree) {
      if (entry.kind !== 'file') continue;
      if (globMatches && !globMatches(entry.path, searchDir)) continue;
      await searchFile(search, entry.absolute, entry.path);
      if (search.limitReached) break;
    }
    walkCapped = tree.capped;
  } else {
    // An explicitly named file is searched whatever the glob says, as ripgrep does.
    await searchFile(search, target, displayPath(ctx.workspace, target));
  }
  ctx.signal.throwIfAborted();
  return render(search, walkCapped);
};

function compilePattern(pattern: string, ignoreCase: boolean, literal: boolean): RegExp {
  const source = literal ? pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : pattern;
  const flags = ignoreCase ? 'i' : '';
  try {
    return new RegExp(source, `${flags}u`);
  } catch {
    // Unicode mode rejects some escapes plain mode accepts (e.g. `\-`, a lone `{`); try plain before failing.
    try {
      return new RegExp(source, flags);
    } catch (err) {
      throw new ToolError(`invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}`, { cause: err });
    }
  }
}

function wholeNumber(value: number | undefined, fallback: number, min: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new ToolError(`${name} must be a number of at least ${min}`);
  }
  return Math.floor(value);
}

async function statTarget(target: string, shown: string): Promise<Stats> {
  try {
    return await stat(target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new ToolError(`Path not found: ${shown}`, { cause: err });
    throw new ToolError(`cannot search ${shown}: ${(err as Error).message}`, { cause: err });
  }
}

async function searchFile(search: Search, absolute: string, shown: string): Promise<void> {
  search.signal.throwIfAborted();
  const candidate = await readCandidate(absolute);
  if (candidate.kind !== 'text') {
    search[candidate.kind]++;
    return;
  }
  const lines = candidate.text.split('\n');
  // A final newline ends the last line; it does not start an empty one.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const hits: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (i % ABORT_CHECK_LINES === 0) search.signal.throwIfAborted();
    if (!search.regex.test(withoutCR(lines[i] as string))) continue;
    if (search.matches.length + hits.length >= search.limit) {
      search.limitReached = true;
      break;
    }
    hits.push(i);
  }
  if (hits.length > 0) emit(search, lines, hits, shown);
}

/** Appends a file's matches (and merged context windows) to the output, ripgrep style. */
function emit(search: Search, lines: string[], hits: number[], shown: string): void {
  const hitSet = new Set(hits);
  let printedUpTo = -1;
  for (const hit of hits) {
    const from = Math.max(0, hit - search.context, printedUpTo + 1);
    const to = Math.min(lines.length - 1, hit + search.context);
    // Like ripgrep, `--` separates context groups that are not contiguous, within and across files.
    const detached = printedUpTo === -1 || from > printedUpTo + 1;
    if (search.context > 0 && search.out.length > 0 && detached) search.out.push('--');
    for (let i = from; i <= to; i++) {
      const text = cut(search, withoutCR(lines[i] as string));
      if (hitSet.has(i)) {
        search.matches.push({ match: { path: shown, line: i + 1, text }, outIndex: search.out.length });
        search.out.push(`${shown}:${i + 1}: ${text}`);
      } else {
        search.out.push(`${shown}-${i + 1}- ${text}`);
      }
    }
    printedUpTo = Math.max(printedUpTo, to);
  }
}

function render(search: Search, walkCapped: boolean): ToolOutcome {
  const notices: string[] = [];
  let kept = search.matches;
  let body = 'No matches found';
  let bytesCut = false;
  if (search.out.length > 0) {
    const truncation = truncateHead(search.out.join('\n'), { maxLines: Number.MAX_SAFE_INTEGER });
    body = truncation.content;
    if (truncation.truncated) {
      bytesCut = true;
      kept = search.matches.filter((m) => m.outIndex < truncation.outputLines);
      notices.push(`[${formatSize(DEFAULT_MAX_BYTES)} output limit reached; showing ${kept.length} of ${search.matches.length} matches. Narrow the search with path, glob or a more specific pattern]`);
    }
  }
  if (search.limitReached) {
    notices.push(`[${search.limit} matches limit reached. Use limit=${search.limit * 2} for more, or refine pattern]`);
  }
  if (search.linesCut) {
    notices.push(`[Some lines truncated to ${GREP_MAX_LINE_LENGTH} chars. Use the read tool to see full lines]`);
  }
  const skipped = [
    count(search.binary, 'binary file', 'binary files'),
    count(search.large, `file larger than ${formatSize(GREP_MAX_FILE_BYTES)}`, `files larger than ${formatSize(GREP_MAX_FILE_BYTES)}`),
    count(search.unreadable, 'unreadable file', 'unreadable files'),
  ].filter((s) => s !== null);
  if (skipped.length > 0) notices.push(`[Skipped ${skipped.join(', ')}]`);
  if (walkCapped) notices.push('[Search stopped early: too many files under this path. Narrow it with path or glob]');
  const text = notices.length > 0 ? `${body}\n\n${notices.join('\n')}` : body;
  return {
    text,
    structured: {
      matches: kept.map((m) => m.match),
      truncated: search.limitReached || bytesCut || walkCapped,
    },
  };
}

function count(n: number, one: string, many: string): string | null {
  if (n === 0) return null;
  return n === 1 ? `1 ${one}` : `${n} ${many}`;
}

function cut(search: Search, line: string): string {
  if (line.length <= GREP_MAX_LINE_LENGTH) return line;
  search.linesCut = true;
  let end = GREP_MAX_LINE_LENGTH;
  // Do not split a surrogate pair.
  const last = line.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return line.slice(0, end) + CUT_MARKER;
}

function withoutCR(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

async function readCandidate(absolute: string): Promise<Candidate> {
  let handle;
  try {
    // O_NOFOLLOW: a file swapped for a symlink mid-walk is not read; O_NONBLOCK: a FIFO cannot hang us.
    handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if (isErrno(err)) return { kind: 'unreadable' };
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { kind: 'unreadable' };
    if (info.size > GREP_MAX_FILE_BYTES) return { kind: 'large' };
    const bytes = await handle.readFile();
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { kind: 'binary' };
    return { kind: 'text', text: bytes.toString('utf8') };
  } catch (err) {
    // An I/O error on one file is reported in the skipped count instead of failing the whole search.
    if (isErrno(err)) return { kind: 'unreadable' };
    throw err;
  } finally {
    await handle.close();
  }
}

function isErrno(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string';
}
