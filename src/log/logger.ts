// The operator's log: one line per record on stderr (stdout of a stdio server carries protocol only),
// through a bounded queue that never blocks (stderr-sink.ts).
// Caller text reaches it escaped and capped: no control character, line break or bidi override is
// written raw (JSON-style escapes instead), and no string is longer than MAX_LOGGED_STRING_LENGTH, so a
// caller can neither forge a line nor write a huge one.

import { DEFAULT_LOG_LEVEL, MAX_LOGGED_FIELDS_LENGTH, MAX_LOGGED_STRING_LENGTH } from '../limits.ts';
import { isLogLevel, type LogLevel, passes } from '../mcp/logging-level.ts';
import { stderrSink } from './stderr-sink.ts';

export interface Logger {
  readonly level: LogLevel;
  log(level: LogLevel, message: string, data?: Record<string, unknown>): void;
}

export interface LogSink {
  write(text: string): unknown;
}

/** Keys whose values never reach a log line. */
const SECRET_KEYS = /token|secret|password|authorization|api[-_]?key/i;

/**
 * What is escaped: C0 and C1 controls (line breaks among them), DEL, the Unicode line and paragraph
 * separators, bidi overrides and isolates (they reorder what a terminal shows), and lone surrogates.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const SHORT_ESCAPES: ReadonlyMap<string, string> = new Map([['\n', '\\n'], ['\r', '\\r'], ['\t', '\\t'], ['\b', '\\b'], ['\f', '\\f']]);

export function createLogger(level: LogLevel = DEFAULT_LOG_LEVEL, sink: LogSink = stderrSink(), clock: () => Date = () => new Date()): Logger {
  return {
    level,
    log(recordLevel, message, data) {
      if (!passes(recordLevel, level)) return;
      const fields = data ? ` ${cut(escapeUnsafe(fieldsText(data)), MAX_LOGGED_FIELDS_LENGTH)}` : '';
      sink.write(`${clock().toISOString()} super-pi ${recordLevel}: ${escapeLogText(cut(message, MAX_LOGGED_STRING_LENGTH))}${fields}\n`);
    },
  };
}

/** Text as it may appear in a log line outside JSON: backslashes doubled and every unsafe character escaped, JSON-style. */
export function escapeLogText(text: string): string {
  return escapeUnsafe(text.replaceAll('\\', '\\\\'));
}

function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE, (c) => SHORT_ESCAPES.get(c) ?? `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`);
}

/** `text` up to `max` characters, then how many were left out. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length - max} more characters)`;
}

/** The fields as JSON; a record that cannot be serialised (a cycle, a BigInt) still gets its line, saying so. */
function fieldsText(data: Record<string, unknown>): string {
  try {
    return JSON.stringify(data, redactAndCap);
  } catch (err) {
    return JSON.stringify({ unserialisable: cut(String((err as Error).message), MAX_LOGGED_STRING_LENGTH) });
  }
}

function redactAndCap(key: string, value: unknown): unknown {
  if (key !== '' && SECRET_KEYS.test(key)) return '[redacted]';
  return typeof value === 'string' ? cut(value, MAX_LOGGED_STRING_LENGTH) : value;
}

export function parseLogLevel(v: string | undefined, fallback: LogLevel = DEFAULT_LOG_LEVEL): LogLevel {
  if (v === undefined || v === '') return fallback;
  if (!isLogLevel(v)) throw new Error(`unknown log level "${v}": use one of debug, info, notice, warning, error, critical, alert, emergency`);
  return v;
}
