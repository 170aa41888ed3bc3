// MCP log levels (RFC 5424 severities), least to most severe.

export const logLevels = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof logLevels)[number];

export function isLogLevel(v: unknown): v is LogLevel {
  return typeof v === 'string' && (logLevels as readonly string[]).includes(v);
}

/** True when a record at `level` passes a threshold of `threshold`. */
export function passes(level: LogLevel, threshold: LogLevel): boolean {
  return logLevels.indexOf(level) >= logLevels.indexOf(threshold);
}
