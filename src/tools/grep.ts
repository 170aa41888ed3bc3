// The `grep` tool: searches file contents with an RE2 pattern (re2js: linear time in the text, so no
// pattern can make a search backtrack for hours) over a .gitignore-aware walk of the workspace (no
// ripgrep needed), printing ripgrep-style `path:line: text` lines and structured matches.
//
// Most files of a search hold no match, so the work per file is kept to what proves that: the file is
// read (synchronously, into one reused buffer, see walk.ts), and when the pattern has a literal part
// every match must contain, that is looked for in the raw bytes; a file without it is never decoded.
// Otherwise a pattern that cannot match across a newline is run once over the whole text. Only a file
// that passes is split into lines and matched line by line, exactly as before.
//
// A path that could break or forge a line (./name-in-text.ts), or holds the `:` that ends a match line's
// path, is printed quoted; the structured matches have it as it is. The matched text is left as it is: it is
// the file's content, the same that `read` gives and `edit` needs, and always follows a `path:line: ` prefix.

import { closeSync, readSync, type Stats } from 'node:fs';
import { openRegularFileSync } from './confined-file.ts';
import { stat } from 'node:fs/promises';
import { ToolError, type ToolBody, type ToolOutcome } from './contract.ts';
import { compilePattern, searchNeedle, type TextTest } from './grep-pattern.ts';
import { nameInText, quoted } from './name-in-text.ts';
import { formatSize, truncateHead } from './truncate.ts';
import { compileGlob, ignoreCutNotice, nextTurn, walkTree, YIELD_EVERY_MS } from './walk.ts';
import { displayPath, resolveInWorkspace } from './workspace.ts';
import { DEFAULT_MAX_BYTES, GREP_DEFAULT_LIMIT, GREP_MAX_FILE_BYTES, GREP_MAX_LINE_LENGTH } from '../limits.ts';

// The matcher's parts the tests and benchmarks reach through this module.
export { FOLDED_WORD_MAX_CHARS, lineBound, requiredLiterals, searchNeedle } from './grep-pattern.ts';

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
  /** The lines around the match, when the call asked for context (cut like `text`). */
  context?: { before: GrepLine[]; after: GrepLine[] };
}

export interface GrepLine {
  line: number;
  text: string;
}

/** Leading bytes searched for a NUL to call a file binary, as git and ripgrep do. */
export const BINARY_SNIFF_BYTES = 8192;
/** Lines matched between two checks of the abort signal inside one file. */
const ABORT_CHECK_LINES = 1024;
const CUT_MARKER = '... [truncated]';

/** Bytes of the read buffer a search starts with; it grows to the largest file read (at most GREP_MAX_FILE_BYTES). */
const INITIAL_BUFFER_BYTES = 256 * 1024;

type Candidate = { kind: 'text'; text: string } | { kind: 'binary' | 'large' | 'unreadable' | 'no-match' };

interface Search {
  readonly regex: TextTest;
  /** ASCII bytes every matching line contains (case-sensitive searches only), or null. */
  readonly required: Buffer | null;
  /** The pattern in multi-line mode, run once over a whole file, when no match can span a newline; or null. */
  readonly wholeText: TextTest | null;
  /** The read buffer, reused from file to file. */
  buffer: Buffer;
  readonly limit: number;
  readonly context: number;
  readonly signal: AbortSignal;
  /** Output lines (matches, context lines, `--` separators). */
  readonly out: string[];
  /** Each match with the index of its line in `out`. */
  readonly matches: { match: GrepMatch; outIndex: number }[];
  /** Characters of `out` joined by newlines: UTF-8 takes at least a byte per UTF-16 unit, so past DEFAULT_MAX_BYTES the text is cut before what follows. */
  outChars: number;
  /**
   * The output already passes DEFAULT_MAX_BYTES, so nothing found later could be shown: the search stopped.
   * Without it, the lines a caller's `limit` and `context` allow (no bound of their own) were all kept and
   * then cut: one 4 MB file of short lines with `limit: 1e9`, or `context: 1e8`, took a tool thread past its
   * memory limit instead of answering.
   */
  outputFull: boolean;
  limitReached: boolean;
  linesCut: boolean;
  /** Characters of context lines the structured matches carry so far: at most DEFAULT_MAX_BYTES, as the text. */
  contextChars: number;
  contextCut: boolean;
  binary: number;
  large: number;
  unreadable: number;
  /** Files not searched because their name is not UTF-8: Node's decoding of it names another file, or none. */
  notUtf8: number;
  /** Every file is opened through the confined path, whose descriptor check needs the root. */
  readonly workspace: string;
}

export const grepTool: ToolBody<GrepArgs> = async (args, ctx) => {
  if (typeof args.pattern !== 'string' || args.pattern.length === 0) throw new ToolError('pattern must be a non-empty string');
  const pattern = compilePattern(args.pattern, args.ignoreCase === true, args.literal === true);
  const search: Search = {
    regex: pattern.line,
    required: pattern.ignoreCase ? null : searchNeedle(pattern.source),
    wholeText: pattern.whole,
    buffer: Buffer.allocUnsafe(INITIAL_BUFFER_BYTES),
    limit: wholeNumber(args.limit, GREP_DEFAULT_LIMIT, 1, 'limit'),
    context: wholeNumber(args.context, 0, 0, 'context'),
    signal: ctx.signal,
    out: [],
    matches: [],
    outChars: 0,
    outputFull: false,
    limitReached: false,
    linesCut: false,
    contextChars: 0,
    contextCut: false,
    binary: 0,
    large: 0,
    unreadable: 0,
    notUtf8: 0,
    workspace: ctx.workspace,
  };
  const userPath = args.path ?? '.';
  const target = await resolveInWorkspace(ctx.workspace, userPath);
  const info = await statTarget(target, userPath);
  ctx.signal.throwIfAborted();

  let walkCapped = false;
  let ignoreCut: string | null = null;
  if (info.isDirectory()) {
    const searchDir = displayPath(ctx.workspace, target);
    const globMatches = args.glob ? compileGlob(args.glob) : null;
    const tree = walkTree(ctx.workspace, target, { signal: ctx.signal });
    let turn = performance.now();
    search: for await (const batch of tree.batches()) {
      for (const entry of batch) {
        if (entry.kind !== 'file') continue;
        if (globMatches && !globMatches(entry.path, searchDir)) continue;
        if (!entry.nameIsUtf8) {
          search.notUtf8++;
          continue;
        }
        searchFile(search, entry.absolute, entry.path);
        if (search.limitReached || search.outputFull) break search;
        // A batch of large files can take a while; let the event loop see an abort in between.
        if (performance.now() - turn >= YIELD_EVERY_MS) {
          await nextTurn();
          turn = performance.now();
        }
      }
    }
    // The walk runs up to a batch ahead of the search: a cap it met past the match limit never mattered.
    walkCapped = tree.capped && !search.limitReached && !search.outputFull;
    ignoreCut = ignoreCutNotice(tree.ignoreCut);
  } else {
    // An explicitly named file is searched whatever the glob says, as ripgrep does.
    searchFile(search, target, displayPath(ctx.workspace, target));
  }
  ctx.signal.throwIfAborted();
  return render(search, walkCapped, ignoreCut);
};

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

function searchFile(search: Search, absolute: string, shown: string): void {
  search.signal.throwIfAborted();
  const candidate = readCandidate(search, absolute);
  if (candidate.kind === 'no-match') return;
  if (candidate.kind !== 'text') {
    search[candidate.kind]++;
    return;
  }
  const lines = candidate.text.split('\n');
  // A final newline ends the last line; it does not start an empty one.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const hits: number[] = [];
  // The least the hits found so far will print (their own lines, without context): once the output they
  // make passes DEFAULT_MAX_BYTES, later hits would all be cut, so none is looked for.
  const prefixChars = pathInText(shown).length + ':1: '.length;
  let leastChars = search.outChars;
  for (let i = 0; i < lines.length; i++) {
    if (i % ABORT_CHECK_LINES === 0) search.signal.throwIfAborted();
    const line = withoutCR(lines[i] as string);
    if (!search.regex.test(line)) continue;
    if (search.matches.length + hits.length >= search.limit) {
      search.limitReached = true;
      break;
    }
    hits.push(i);
    leastChars += prefixChars + Math.min(line.length, GREP_MAX_LINE_LENGTH);
    if (leastChars > DEFAULT_MAX_BYTES) {
      search.outputFull = true;
      break;
    }
  }
  if (hits.length > 0) emit(search, lines, hits, shown);
}

/** Appends a file's matches (and merged context windows) to the output, ripgrep style. */
function emit(search: Search, lines: string[], hits: number[], shown: string): void {
  const printed = pathInText(shown);
  const hitSet = new Set(hits);
  let printedUpTo = -1;
  for (const hit of hits) {
    const from = Math.max(0, hit - search.context, printedUpTo + 1);
    const to = Math.min(lines.length - 1, hit + search.context);
    // Like ripgrep, `--` separates context groups that are not contiguous, within and across files.
    const detached = printedUpTo === -1 || from > printedUpTo + 1;
    if (search.context > 0 && search.out.length > 0 && detached) pushOut(search, '--');
    for (let i = from; i <= to; i++) {
      // Everything from here on would be cut from the text (and from the structured matches with it).
      if (search.outChars > DEFAULT_MAX_BYTES) {
        search.outputFull = true;
        return;
      }
      const text = cut(search, withoutCR(lines[i] as string));
      if (hitSet.has(i)) {
        const match: GrepMatch = { path: shown, line: i + 1, text };
        if (search.context > 0) {
          const around = contextOf(search, lines, i);
          if (around !== null) match.context = around;
        }
        search.matches.push({ match, outIndex: search.out.length });
        pushOut(search, `${printed}:${i + 1}: ${text}`);
      } else {
        pushOut(search, `${printed}-${i + 1}- ${text}`);
      }
    }
    printedUpTo = Math.max(printedUpTo, to);
  }
}

function pushOut(search: Search, line: string): void {
  search.outChars += (search.out.length > 0 ? 1 : 0) + line.length;
  search.out.push(line);
}

/**
 * A match's own context window, whole even where the text merged it with a neighbour's; null (and the
 * structured result says so) once DEFAULT_MAX_BYTES characters are spent: each match repeats its own window,
 * so overlapping windows (a large `context` over dense matches) would otherwise grow as matches × context.
 */
function contextOf(search: Search, lines: string[], hit: number): { before: GrepLine[]; after: GrepLine[] } | null {
  if (search.contextCut) return null;
  const from = Math.max(0, hit - search.context);
  const to = Math.min(lines.length - 1, hit + search.context);
  let chars = 0;
  for (let i = from; i <= to; i++) if (i !== hit) chars += Math.min((lines[i] as string).length, GREP_MAX_LINE_LENGTH + CUT_MARKER.length);
  if (search.contextChars + chars > DEFAULT_MAX_BYTES) {
    search.contextCut = true;
    return null;
  }
  search.contextChars += chars;
  const around = (a: number, b: number): GrepLine[] => {
    const out: GrepLine[] = [];
    for (let i = a; i <= b; i++) out.push({ line: i + 1, text: cut(search, withoutCR(lines[i] as string)) });
    return out;
  };
  return { before: around(from, hit - 1), after: around(hit + 1, to) };
}

function render(search: Search, walkCapped: boolean, ignoreCut: string | null): ToolOutcome {
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
      // Stopped at the output limit, the search does not know how many more there are.
      const shown = search.outputFull ? `the first ${kept.length}` : `${kept.length} of ${search.matches.length}`;
      notices.push(`${formatSize(DEFAULT_MAX_BYTES)} output limit reached; showing ${shown} matches. Narrow the search with path, glob or a more specific pattern`);
    }
  }
  if (search.limitReached) {
    notices.push(`${search.limit} matches limit reached. Use limit=${search.limit * 2} for more, or refine pattern`);
  }
  if (search.linesCut) {
    notices.push(`Some lines truncated to ${GREP_MAX_LINE_LENGTH} chars. Use the read tool to see full lines`);
  }
  const skipped = [
    count(search.binary, 'binary file', 'binary files'),
    count(search.large, `file larger than ${formatSize(GREP_MAX_FILE_BYTES)}`, `files larger than ${formatSize(GREP_MAX_FILE_BYTES)}`),
    count(search.unreadable, 'unreadable file', 'unreadable files'),
    count(search.notUtf8, 'file whose name is not valid UTF-8', 'files whose names are not valid UTF-8'),
  ].filter((s) => s !== null);
  if (skipped.length > 0) notices.push(`Skipped ${skipped.join(', ')}`);
  if (walkCapped) notices.push('Search stopped early: too many files under this path. Narrow it with path or glob');
  if (ignoreCut !== null) notices.push(ignoreCut);
  const text = notices.length > 0 ? `${body}\n\n${notices.map((n) => `[${n}]`).join('\n')}` : body;
  // Told in the structured result only: the text itself shows every context line.
  if (search.contextCut) notices.push(`Context lines of later matches are left out of the structured result (${formatSize(DEFAULT_MAX_BYTES)} of context given); the text output has them`);
  return {
    text,
    structured: {
      matches: kept.map((m) => m.match),
      truncated: search.limitReached || bytesCut || walkCapped,
      notices,
    },
  };
}

/**
 * A match line's path: quoted as any name (./name-in-text.ts), and also when it holds the `:` that ends it
 * or opens with `[` (the line's text, file content, could close the bracket of a fake notice).
 */
function pathInText(shown: string): string {
  return shown.includes(':') || /^[ \t]*\[/.test(shown) ? quoted(shown) : nameInText(shown);
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

/**
 * Reads a file into the search's buffer and tells what it is: binary (a NUL in its first
 * BINARY_SNIFF_BYTES), too large, unreadable, text that cannot match (a cheap proof), or text to search.
 */
function readCandidate(search: Search, absolute: string): Candidate {
  // The confined open (src/tools/confined-file.ts): no link followed, no FIFO waited on, a regular file
  // whose descriptor is inside the workspace even if a directory on its path was swapped mid-walk.
  const opened = openRegularFileSync(search.workspace, absolute);
  if (opened === null) return { kind: 'unreadable' };
  const { fd, stats: info } = opened;
  try {
    if (info.size > GREP_MAX_FILE_BYTES) return { kind: 'large' };
    const length = readAll(search, fd, info.size);
    if (length < 0) return { kind: 'large' };
    const bytes = search.buffer.subarray(0, length);
    if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return { kind: 'binary' };
    if (search.required !== null && !bytes.includes(search.required)) return { kind: 'no-match' };
    const text = bytes.toString('utf8');
    if (search.wholeText !== null && !search.wholeText.test(text)) return { kind: 'no-match' };
    return { kind: 'text', text };
  } catch (err) {
    // An I/O error on one file is reported in the skipped count instead of failing the whole search.
    if (isErrno(err)) return { kind: 'unreadable' };
    throw err;
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the whole file into `search.buffer` (grown as needed) and returns its length, or -1 when it
 * turns out longer than GREP_MAX_FILE_BYTES. Like fs.readFile, it reads `size` bytes (a size of 0, as
 * some special files report, means: until the end).
 */
function readAll(search: Search, fd: number, size: number): number {
  const want = size > 0 ? size : GREP_MAX_FILE_BYTES + 1;
  // Room for the whole file up front when its size is known, so it is read in one call.
  if (size > search.buffer.length) search.buffer = Buffer.allocUnsafe(Math.min(GREP_MAX_FILE_BYTES + 1, Math.max(search.buffer.length * 2, size)));
  let length = 0;
  for (;;) {
    if (length === search.buffer.length) {
      if (length >= GREP_MAX_FILE_BYTES + 1) return -1;
      const grown = Buffer.allocUnsafe(Math.min(GREP_MAX_FILE_BYTES + 1, Math.max(search.buffer.length * 2, want)));
      search.buffer.copy(grown, 0, 0, length);
      search.buffer = grown;
    }
    const room = Math.min(search.buffer.length, want) - length;
    if (room <= 0) break;
    const read = readSync(fd, search.buffer, length, room, null);
    if (read === 0) break;
    length += read;
    if (length >= want) break;
  }
  return length > GREP_MAX_FILE_BYTES ? -1 : length;
}

function isErrno(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string';
}
