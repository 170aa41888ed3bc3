// The operator's log: one line per record on stderr (stdout of a stdio server carries protocol only).

import { DEFAULT_LOG_LEVEL } from '../limits.ts';
import { isLogLevel, type LogLevel, passes } from '../mcp/logging-level.ts';

export interface Logger {
  readonly level: LogLevel;
  log(level: LogLevel, message: string, data?: Record<string, unknown>): void;
}

export interface LogSink {
  write(text: string): unknown;
}

/** Keys whose values never reach a log line. */
const SECRET_KEYS = /token|secret|password|authorization|api[-_]?key/i;

export function createLogger(level: LogLevel = DEFAULT_LOG_LEVEL, sink: LogSink = process.stderr, clock: () => Date = () => new Date()): Logger {
  return {
    level,
    log(recordLevel, message, data) {
      if (!passes(recordLevel, level)) return;
      const fields = data ? ` ${JSON.stringify(data, redact)}` : '';
      sink.write(`${clock().toISOString()} super-pi ${recordLevel}: ${message}${fields}\n`);
    },
  };
}

function redact(key: string, value: unknown): unknown {
  return key !== '' && SECRET_KEYS.test(key) ? '[redacted]' : value;
}

export function parseLogLevel(v: string | undefined, fallback: LogLevel = DEFAULT_LOG_LEVEL): LogLevel {
  if (v === undefined || v === '') return fallback;
  if (!isLogLevel(v)) throw new Error(`unknown log level "${v}": use one of debug, info, notice, warning, error, critical, alert, emergency`);
  return v;
}
