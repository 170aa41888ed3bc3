// Output truncation shared by the tools: the pi coding-agent limits of 2000 lines / 50 KB.
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES } from '../limits.ts';

export interface TruncationLimits {
  maxLines?: number;
  maxBytes?: number;
}

export interface Truncation {
  /** The kept text. */
  content: string;
  truncated: boolean;
  /** Which limit cut the text, if any. */
  truncatedBy: 'lines' | 'bytes' | null;
  totalLines: number;
  totalBytes: number;
  /** Lines kept whole in `content`. */
  outputLines: number;
  outputBytes: number;
  /** True when the first kept line alone exceeds maxBytes (head) — nothing whole could be kept. */
  firstLineExceedsLimit: boolean;
}

const encoder = new TextEncoder();
const byteLength = (s: string): number => encoder.encode(s).length;

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  // A trailing newline ends the last line rather than starting an empty one.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** What both directions need to know before choosing lines: the text split up, its size, the limits. */
interface Measured {
  lines: string[];
  totalLines: number;
  totalBytes: number;
  maxLines: number;
  maxBytes: number;
}

function measure(text: string, limits: TruncationLimits): Measured {
  const lines = splitLines(text);
  return {
    lines,
    totalLines: text === '' ? 0 : lines.length,
    totalBytes: byteLength(text),
    maxLines: limits.maxLines ?? DEFAULT_MAX_LINES,
    maxBytes: limits.maxBytes ?? DEFAULT_MAX_BYTES,
  };
}

/** The whole text when it is within both limits, otherwise null. */
function whole(text: string, m: Measured): Truncation | null {
  if (m.totalLines > m.maxLines || m.totalBytes > m.maxBytes) return null;
  return { content: text, truncated: false, truncatedBy: null, totalLines: m.totalLines, totalBytes: m.totalBytes,
    outputLines: m.totalLines, outputBytes: m.totalBytes, firstLineExceedsLimit: false };
}

function cut(m: Measured, kept: string[], truncatedBy: 'lines' | 'bytes', firstLineExceedsLimit: boolean): Truncation {
  const content = kept.join('\n');
  return { content, truncated: true, truncatedBy, totalLines: m.totalLines, totalBytes: m.totalBytes,
    outputLines: kept.length, outputBytes: byteLength(content), firstLineExceedsLimit };
}

/** Keeps the first lines of `text` within the limits, never cutting a line in half. */
export function truncateHead(text: string, limits: TruncationLimits = {}): Truncation {
  const m = measure(text, limits);
  const fits = whole(text, m);
  if (fits !== null) return fits;
  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: 'lines' | 'bytes' = 'lines';
  for (const line of m.lines) {
    if (kept.length >= m.maxLines) { truncatedBy = 'lines'; break; }
    const cost = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > m.maxBytes) { truncatedBy = 'bytes'; break; }
    kept.push(line);
    bytes += cost;
  }
  return cut(m, kept, truncatedBy, kept.length === 0 && m.lines.length > 0);
}

/** Keeps the last lines of `text` within the limits (command output: the end matters most). */
export function truncateTail(text: string, limits: TruncationLimits = {}): Truncation {
  const m = measure(text, limits);
  const fits = whole(text, m);
  if (fits !== null) return fits;
  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: 'lines' | 'bytes' = 'lines';
  for (let i = m.lines.length - 1; i >= 0; i--) {
    if (kept.length >= m.maxLines) { truncatedBy = 'lines'; break; }
    const line = m.lines[i] as string;
    const cost = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > m.maxBytes) {
      truncatedBy = 'bytes';
      if (kept.length === 0) {
        // One enormous last line: keep its tail so the caller sees something.
        const tail = lastBytes(line, m.maxBytes);
        kept.unshift(tail);
        bytes = byteLength(tail);
      }
      break;
    }
    kept.unshift(line);
    bytes += cost;
  }
  return cut(m, kept, truncatedBy, false);
}

function lastBytes(line: string, maxBytes: number): string {
  const bytes = encoder.encode(line);
  let start = Math.max(0, bytes.length - maxBytes);
  // Do not start inside a UTF-8 sequence.
  while (start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start++;
  return new TextDecoder().decode(bytes.subarray(start));
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}
