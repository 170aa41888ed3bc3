// The named limits and defaults an operator or a caller meets, in one place, lowest layer (imports
// nothing): what each bounds, what happens past it, and the flag that changes it where there is one.
// Every figure the README states comes from here (test/architecture/readme-figures.test.ts checks them).
// Purely internal tuning constants stay beside the code they tune.
//
// The constants live by area in src/limits/<area>.ts and are re-exported here, so every file imports
// this one module. The command-line defaults stay below, and new constants are appended at the end.

export * from './limits/protocol.ts';
export * from './limits/actors.ts';
export * from './limits/server.ts';
export * from './limits/connection.ts';
export * from './limits/tools.ts';
export * from './limits/task.ts';
export * from './limits/cluster.ts';
export * from './limits/model.ts';
export * from './limits/observer.ts';
export * from './limits/transports.ts';
export * from './limits/log.ts';
export * from './limits/round-trip.ts';
export * from './limits/oauth.ts';

// ── Command-line defaults and the stop (src/cli).

/** Default deadline of one tool call (`--tool-timeout`); past it the call is aborted and answered with an error. */
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 600;

/**
 * Idle HTTP sessions are closed after this (`--session-idle`). The HTTP transport's own default
 * (`DEFAULT_SESSION_IDLE_MS`, equal: test/cli/options.test.ts) is not imported, so that parsing options
 * does not load the HTTP and WebSocket transport, which a stdio start never uses.
 */
export const DEFAULT_SESSION_IDLE_SECONDS = 1800;

/** Address the HTTP and WebSocket server binds (`--host`): loopback, so nothing is exposed unless asked. */
export const DEFAULT_HOST = '127.0.0.1';

/** Port of the HTTP and WebSocket server (`--port`, `SUPERPI_PORT`). */
export const DEFAULT_PORT = 7777;

/** stderr log threshold (`--log-level`, `SUPERPI_LOG_LEVEL`). */
export const DEFAULT_LOG_LEVEL = 'info';

/** On SIGTERM/SIGINT (or `stop`/`close()`), calls in flight get this long to finish before they are aborted. */
export const DRAIN_GRACE_MS = 10_000;

/**
 * After the stdio server has finished (drained, answered, stopped), how long anything left behind (a
 * stuck handle) may keep the process alive before it exits anyway: a host must see it end.
 */
export const STDIO_EXIT_GRACE_MS = 3000;

/**
 * After an exception or rejection nothing caught (a bug: every event callback is guarded), how long the
 * work in flight gets to be answered with an error before the process exits with code 1 anyway.
 */
export const UNCAUGHT_EXIT_GRACE_MS = 2000;

/**
 * How often a node on a shared (PostgreSQL) store probes it. While the last probe found it unreachable
 * the node refuses new sessions (503, `Retry-After` this interval, rounded up to whole seconds), so a
 * node that lost its database is noticed within one interval plus `HEALTH_STORE_TIMEOUT_MS`.
 */
export const STORE_PROBE_INTERVAL_MS = 2000;
