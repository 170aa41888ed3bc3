// The `read` tool: streams a text file and returns a window of its lines, cut at 2000 lines / 50 KB,
// with a notice that says how to continue. Memory stays bounded by the window, whatever the file's size.
// An image (png, jpeg, gif, webp by its magic bytes) is read whole, bounded, and handed to ./read-image.ts.
// The body is written once as file-system steps (./fs-steps.ts): run asynchronously by the tool runner,
// or synchronously for a small file by the connection actor's own thread (src/connection/inline-effects.ts).

import { type ConfinedWording, openConfined } from './confined-file.ts';
import { ToolError, type ToolBody, type ToolOutcome } from './contract.ts';
import { throwIfCancelled } from './fs-errors.ts';
import { closeStep, type FsSteps, type OpenFile, readStep, runAsync, runSync } from './fs-steps.ts';
import { type ImageMime, renderImage, sniffImage } from './read-image.ts';
import { formatSize } from './truncate.ts';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, IMAGE_MAX_FILE_BYTES } from '../limits.ts';

export interface ReadArgs {
  path: string;
  /** 1-indexed line to start at. */
  offset?: number;
  /** Most lines to return; the 2000-line / 50 KB limits apply as well. */
  limit?: number;
}

const CHUNK_BYTES = 64 * 1024;
/**
 * Smallest read asked for while the file is not yet read to the size stat gave: a file's size sizes the
 * reads, so a small file costs a buffer of its own size rather than a 64 KB one; below 4 KB,
 * Buffer.allocUnsafe takes its bytes from Node's shared 8 KB pool. Small, so a small read takes a small
 * slice of the pool (4095 bytes emptied the pool every second read: a new pool each time, ~0.5 µs).
 */
const MIN_CHUNK_BYTES = 512;
/** The read that confirms the end, once stat's size is read: small, as it should find nothing. */
const END_PROBE_BYTES = 64;
/** A NUL byte this early means the file is not text. */
const BINARY_SNIFF_BYTES = 8 * 1024;
/**
 * Once the window can take no more (it is full, or the line it is on is too long for it), lines are counted
 * for the notice only this far, so a huge file — or one line that never ends, as a sparse file's zeros
 * can be — costs no more than this.
 */
export const COUNT_SCAN_LIMIT = 64 * 1024 * 1024;
const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);
/** read opens with O_NOFOLLOW, so ELOOP there means a link was swapped in (see fs-errors.ts). */
const READ_WORDING: ConfinedWording = {
  notFound: (shown) => `File not found: ${shown}`,
  isDirectory: (shown) => `${shown} is a directory, not a file; use ls to list its entries`,
  swappedWhile: 'read',
  usedAs: 'read',
};

/** An image found by its magic bytes, read whole through the confined descriptor, not yet decoded. */
interface ImageBytes {
  readonly image: Buffer;
  readonly mime: ImageMime;
}

/**
 * The `read` body for a thread that reads files of at most `maxFileBytes`: the size is the opened
 * descriptor's, and the bytes read stay within it however the file grows meanwhile. A larger file is
 * handed to `elsewhere` (the tool pool's read, which opens it again by its name) with nothing of it kept.
 */
export function readToolWith(maxFileBytes: number, elsewhere: ToolBody<ReadArgs>): ToolBody<ReadArgs> {
  return async (args, ctx) => {
    const outcome = await runAsync(readSteps(args, ctx.workspace, ctx.signal, maxFileBytes, true));
    if (outcome === null) return elsewhere(args, ctx);
    // sharp is handed the bytes, never the path: what it decodes is what the confined descriptor gave.
    if ('image' in outcome) return renderImage(outcome.image, outcome.mime, args.path, ctx.signal);
    return outcome;
  };
}

export const readTool: ToolBody<ReadArgs> = readToolWith(Number.POSITIVE_INFINITY, () => {
  throw new Error('read: a read without a size bound declined the file');
});

/**
 * The same read with synchronous system calls, for a file of at most `maxFileBytes` (null for a larger one,
 * after confinement and stat only: nothing of it was read; null for one that grew past it while read,
 * after at most maxFileBytes + 1 bytes; null too for an image, whose decode is asynchronous work for the
 * owner). Refusals throw ToolError, as readTool's do.
 */
export function readSmallFileSync(args: ReadArgs, workspace: string, maxFileBytes: number): ToolOutcome | null {
  const outcome = runSync(readSteps(args, workspace, null, maxFileBytes, false));
  return outcome === null || 'image' in outcome ? null : outcome;
}

/**
 * The read as file-system steps, for either driver (exported for its tests: test/tools/read-end.test.ts,
 * read-route.test.ts). Null, with nothing answered, for a file past `maxFileBytes` by its descriptor, or
 * one that grows past it while it is read: no more than maxFileBytes + 1 bytes of it are ever read.
 */
export function* readSteps(args: ReadArgs, workspace: string, signal: AbortSignal | null, maxFileBytes: number, images: boolean): FsSteps<ToolOutcome | ImageBytes | null> {
  checkLineArg('offset', args.offset);
  checkLineArg('limit', args.limit);
  const shown = args.path;
  // Resolved, opened without blocking and checked on the descriptor: a regular file inside the workspace.
  const opened = yield* openConfined(workspace, args.path, READ_WORDING);
  const { file, stats: info } = opened;
  if (info.size > maxFileBytes) {
    yield* closeStep(file);
    return null;
  }
  try {
    if (signal) throwIfCancelled(signal);
    const window = yield* scan(file, {
      start: args.offset ?? 1,
      maxLines: Math.min(args.limit ?? DEFAULT_MAX_LINES, DEFAULT_MAX_LINES),
      userLimited: args.limit !== undefined && args.limit <= DEFAULT_MAX_LINES,
      maxBytes: DEFAULT_MAX_BYTES,
      sizeHint: info.size,
      readBound: maxFileBytes,
    }, signal);
    if (window === null) return null;
    if (window.binary && window.imageType) {
      if (!images) return null;
      if (info.size > IMAGE_MAX_FILE_BYTES) {
        throw new ToolError(`${shown} is a ${window.imageType} image of ${formatSize(info.size)}, larger than the ${formatSize(IMAGE_MAX_FILE_BYTES)} an image read takes; not shown.`);
      }
      const image = yield* readRest(file, window.head, shown, maxFileBytes);
      return image === null ? null : { image, mime: window.imageType };
    }
    if (window.binary) {
      throw new ToolError(`${shown} is a binary file (${formatSize(info.size)}); not shown. read returns text files only, and png, jpeg, gif and webp images.`);
    }
    return render(window, args, shown);
  } finally {
    yield* closeStep(file);
  }
}

interface WindowOptions {
  start: number;
  maxLines: number;
  /** The caller's own `limit` (not the default) sets maxLines. */
  userLimited: boolean;
  maxBytes: number;
  /** The file's size when it was stat'ed: sizes the reads (the file may still grow or shrink meanwhile). */
  sizeHint: number;
  /**
   * Most bytes read: one more and the scan gives up (null), so a file that grows while it is read costs a
   * bounded read, not one as long as it grows (Infinity where the deadline bounds the thread instead).
   */
  readBound: number;
}

interface Window {
  binary: boolean;
  imageType?: ImageMime;
  /** The first chunk read, kept when the file is binary (an image is then read on from it). */
  head: Buffer;
  /** Decoded lines from `start` on, without their line breaks (empty when `whole` holds the window). */
  lines: string[];
  /**
   * The whole file's text, decoded at once, when the window is the whole file and it came in one read
   * (then `lines` is empty and `totalLines` counts them): a small file is decoded once, not line by line.
   */
  whole: string | null;
  /** Why the window stopped before the end of the file, if it did. */
  closedBy: 'lines' | 'limit' | 'bytes' | null;
  /** Bytes of the first line that did not fit (meaningful when closedBy is 'bytes'). */
  overflowLineBytes: number;
  /** Lines in the file, or the lines counted before COUNT_SCAN_LIMIT stopped the count. */
  totalLines: number;
  totalKnown: boolean;
  endsWithNewline: boolean;
}

/** Walks the file chunk by chunk: counts lines before the window, keeps the window, then only counts (null past readBound). */
function* scan(file: OpenFile, opts: WindowOptions, signal: AbortSignal | null): FsSteps<Window | null> {
  const lines: string[] = [];
  let outBytes = 0;
  let closedBy: Window['closedBy'] = null;
  let overflowLineBytes = 0;

  let lineNo = 1;
  let parts: Buffer[] = [];
  let lineBytes = 0;
  /** The current line can no longer fit in the window, so its bytes are counted, not kept. */
  let dropping = false;
  let lastByte = -1;
  let scannedAfterClose = 0;
  let totalKnown = true;
  let first = true;

  const inWindow = (): boolean => closedBy === null && lineNo >= opts.start;
  const budget = (): number => opts.maxBytes - outBytes - (lines.length > 0 ? 1 : 0);

  const endLine = (): void => {
    if (inWindow()) {
      if (lines.length >= opts.maxLines) {
        closedBy = opts.userLimited ? 'limit' : 'lines';
      } else if (dropping || lineBytes > budget()) {
        closedBy = 'bytes';
        overflowLineBytes = lineBytes;
      } else {
        let text = (parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, lineBytes)).toString('utf8');
        // The BOM marks the encoding; it is not part of the first line's text.
        if (lineNo === 1 && text.startsWith('\uFEFF')) text = text.slice(1);
        outBytes += lineBytes + (lines.length > 0 ? 1 : 0);
        lines.push(text);
      }
    }
    lineNo++;
    parts = [];
    lineBytes = 0;
    dropping = false;
  };

  let consumed = 0;
  /** The file turned out longer than stat said (it grew, or stat cannot know, as for some special files). */
  let beyondHint = false;
  for (;;) {
    if (signal) throwIfCancelled(signal);
    // The rest of the file as stat saw it, plus one byte; then a small read that should find the end.
    const want = consumed < opts.sizeHint ? Math.max(opts.sizeHint - consumed + 1, MIN_CHUNK_BYTES) : beyondHint ? CHUNK_BYTES : END_PROBE_BYTES;
    const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, want, opts.readBound + 1 - consumed));
    const bytesRead = yield* readStep(file, buf);
    if (bytesRead === 0) break;
    consumed += bytesRead;
    if (consumed > opts.readBound) return null;
    if (consumed > opts.sizeHint) beyondHint = true;
    // Asked for one byte more than stat saw and got exactly what it saw: the end, as of that stat (a
    // regular file's read is short only at its end), so the probe read is saved. A read short of the
    // size (a file truncated meanwhile, or a file system that reads short) goes on to find the end.
    const atEnd = !beyondHint && consumed === opts.sizeHint && bytesRead < buf.length;
    const chunk = buf.subarray(0, bytesRead);
    if (first) {
      first = false;
      const imageType = sniffImage(chunk);
      if (imageType || chunk.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
        return { binary: true, imageType, head: chunk, lines: [], whole: null, closedBy: null, overflowLineBytes: 0, totalLines: 0, totalKnown: false, endsWithNewline: false };
      }
      if (atEnd && opts.start === 1 && bytesRead <= opts.maxBytes) {
        const whole = wholeWindow(chunk, opts.maxLines);
        if (whole !== null) return whole;
      }
    }
    lastByte = chunk[bytesRead - 1] as number;

    if (closedBy !== null) {
      // Past the window only the count matters, and counting newlines needs no decoding.
      lineNo += countNewlines(chunk, 0);
      scannedAfterClose += bytesRead;
      if (scannedAfterClose > COUNT_SCAN_LIMIT) {
        totalKnown = false;
        break;
      }
      if (atEnd) break;
      continue;
    }

    // The window takes nothing more of the line it is on (too long, or past its last line): the bytes
    // until that line ends only count, and count against the same bound as the bytes after the window.
    const countingOnly = inWindow() && (dropping || lines.length >= opts.maxLines);
    let from = 0;
    while (from < bytesRead) {
      const nl = chunk.indexOf(NEWLINE, from);
      const end = nl === -1 ? bytesRead : nl;
      if (inWindow() && !dropping) {
        const piece = chunk.subarray(from, end);
        if (lineBytes + piece.length > budget()) {
          dropping = true;
          parts = [];
        } else {
          parts.push(piece);
        }
      }
      lineBytes += end - from;
      if (nl === -1) break;
      endLine();
      from = nl + 1;
      if (closedBy !== null) {
        lineNo += countNewlines(chunk, from);
        break;
      }
    }
    if (closedBy === null && countingOnly && inWindow() && (dropping || lines.length >= opts.maxLines)) {
      scannedAfterClose += bytesRead;
      if (scannedAfterClose > COUNT_SCAN_LIMIT) {
        // The line still has not ended: the window ends before it, and the count stops here.
        if (lines.length >= opts.maxLines) {
          closedBy = opts.userLimited ? 'limit' : 'lines';
        } else {
          closedBy = 'bytes';
          overflowLineBytes = lineBytes;
        }
        totalKnown = false;
        break;
      }
    }
    if (atEnd) break;
  }

  const endsWithNewline = lastByte === NEWLINE;
  if (totalKnown) {
    // A last line without a trailing newline still counts as a line.
    if (closedBy === null) {
      if (lineBytes > 0 || parts.length > 0) endLine();
    } else if (lastByte !== -1 && !endsWithNewline) {
      lineNo++;
    }
  }
  return { binary: false, head: EMPTY, lines, whole: null, closedBy, overflowLineBytes, totalLines: lineNo - 1, totalKnown, endsWithNewline };
}

/**
 * The window of a file read whole in its first read, when it fits (at most `maxLines` lines; the caller
 * checked the bytes): what the line-by-line walk gives, decoded in one call. UTF-8 resynchronises at
 * every newline byte, so decoding the whole equals decoding each line and joining them with newlines; the
 * BOM is dropped from the first line as the walk drops it. Null when the window would be cut.
 */
function wholeWindow(chunk: Buffer, maxLines: number): Window | null {
  const endsWithNewline = chunk[chunk.length - 1] === NEWLINE;
  const totalLines = countNewlines(chunk, 0) + (endsWithNewline ? 0 : 1);
  if (totalLines > maxLines) return null;
  let text = chunk.toString('utf8');
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  return { binary: false, head: EMPTY, lines: [], whole: text, closedBy: null, overflowLineBytes: 0, totalLines, totalKnown: true, endsWithNewline };
}

/** The structuredContent of a text read (matches readDefinition.outputSchema). */
export interface ReadResult {
  [key: string]: unknown;
  path: string;
  /** The window's text, as the text output has it before its notice. */
  content: string;
  offset: number;
  lines: number;
  totalLines: number;
  /** False when the count stopped at COUNT_SCAN_LIMIT: the file has more than totalLines lines. */
  totalLinesKnown: boolean;
  truncated: boolean;
  nextOffset?: number;
  notices: string[];
}

function render(w: Window, args: ReadArgs, shown: string): ToolOutcome {
  const start = args.offset ?? 1;
  const total = w.totalLines;
  // A total not known is a lower bound: the count stopped inside the line after it, which exists.
  if (start > (w.totalKnown ? Math.max(total, 1) : total + 1)) {
    throw new ToolError(`Offset ${start} is beyond end of file (${total} lines total); use an offset between 1 and ${Math.max(total, 1)}`);
  }
  const result: ReadResult = { path: shown, content: '', offset: start, lines: w.whole === null ? w.lines.length : total, totalLines: total, totalLinesKnown: w.totalKnown, truncated: w.closedBy !== null, notices: [] };
  if (w.closedBy === null) {
    result.content = w.whole ?? w.lines.join('\n') + (w.endsWithNewline && w.lines.length > 0 ? '\n' : '');
    return { text: result.content, structured: result };
  }

  const shownTotal = w.totalKnown ? String(total) : `more than ${total}`;
  const end = start + w.lines.length - 1;
  const next = end + 1;
  let notice: string;
  if (w.closedBy === 'bytes' && w.lines.length === 0) {
    const max = DEFAULT_MAX_BYTES;
    const size = w.totalKnown ? formatSize(w.overflowLineBytes) : `more than ${formatSize(w.overflowLineBytes)}`;
    notice = `Line ${start} is ${size}, exceeds ${formatSize(max)} limit. ` +
      `Use bash: sed -n '${start}p' ${shellQuote(shown)} | head -c ${max}`;
  } else {
    result.content = w.lines.join('\n');
    result.nextOffset = next;
    switch (w.closedBy) {
      case 'lines':
        notice = `Showing lines ${start}-${end} of ${shownTotal}. Use offset=${next} to continue.`;
        break;
      case 'bytes':
        notice = `Showing lines ${start}-${end} of ${shownTotal} (${formatSize(DEFAULT_MAX_BYTES)} limit). Use offset=${next} to continue.`;
        break;
      case 'limit': {
        const more = w.totalKnown ? `${total - end} more lines` : `More than ${total - end} more lines`;
        notice = `${more} in file. Use offset=${next} to continue.`;
        break;
      }
    }
  }
  result.notices = [notice];
  return { text: w.lines.length === 0 ? `[${notice}]` : `${result.content}\n\n[${notice}]`, structured: result };
}

/**
 * The rest of an image file after its first chunk, bounded as it is read (the file may grow after stat):
 * null past `maxFileBytes` when that is the tighter bound (the read belongs where large reads go), a
 * refusal past IMAGE_MAX_FILE_BYTES.
 */
function* readRest(file: OpenFile, head: Buffer, shown: string, maxFileBytes: number): FsSteps<Buffer | null> {
  const bound = Math.min(IMAGE_MAX_FILE_BYTES, maxFileBytes);
  const parts: Buffer[] = [head];
  let total = head.length;
  while (total <= bound) {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, bound + 1 - total));
    const n = yield* readStep(file, buf);
    if (n === 0) return Buffer.concat(parts, total);
    total += n;
    parts.push(buf.subarray(0, n));
  }
  if (maxFileBytes < IMAGE_MAX_FILE_BYTES) return null;
  throw new ToolError(`${shown} grew past the ${formatSize(IMAGE_MAX_FILE_BYTES)} an image read takes while it was read; not shown.`);
}

function countNewlines(chunk: Buffer, from: number): number {
  let n = 0;
  for (let at = chunk.indexOf(NEWLINE, from); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) n++;
  return n;
}

function checkLineArg(name: 'offset' | 'limit', value: number | undefined): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < 1) {
    throw new ToolError(`${name} must be a whole number of at least 1 (got ${String(value)})`);
  }
}

function shellQuote(s: string): string {
  return /^[\w./@%+=:,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
