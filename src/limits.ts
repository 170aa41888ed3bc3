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

// --- Multi-round-trip (2026-07-28 `input_required`, docs/multi-round-trip.md) ---

/**
 * How long a sealed `requestState` (a confirmation asked over 2026-07-28) stays valid, by the wall clock
 * of whichever node the retry reaches: long enough for a person to read and answer the question, short
 * enough that an answered state cannot be replayed for long (it carries no single-use mark: the era is
 * stateless, and a store lookup per retry would make it stateful).
 */
export const REQUEST_STATE_TTL_MS = 10 * 60_000;

/** The longest `requestState` a retry may carry (characters): ours are about 300; anything far larger is refused unread. */
export const MAX_REQUEST_STATE_LENGTH = 4096;

/** The shortest state key (`SUPERPI_STATE_KEY`, UTF-8 bytes) a node accepts: an HMAC-SHA256 key shorter than its output weakens it. */
export const MIN_STATE_KEY_BYTES = 32;

// --- OAuth 2.1 resource server (issue 28) ---

/** Allowed difference between this host's clock and an issuer's when checking a token's `exp` and `nbf` (`--oauth-clock-skew`). */
export const OAUTH_CLOCK_SKEW_SECONDS = 60;

/**
 * A token signed with a key id the cached JWKS does not hold makes the issuer's JWKS be read again, at
 * most once per this interval per issuer: key rotation is followed, and a stream of forged `kid`s cannot
 * turn into a stream of requests to the issuer.
 */
export const OAUTH_JWKS_REFETCH_INTERVAL_MS = 30_000;

/** A cached JWKS is read again (at the next token) once it is this old, even if every `kid` is known. */
export const OAUTH_JWKS_MAX_AGE_MS = 10 * 60_000;

/** How long one request to an issuer (metadata, JWKS, introspection) may take before it counts as unreachable. */
export const OAUTH_FETCH_TIMEOUT_MS = 5000;

/** The largest issuer document (metadata, JWKS, introspection answer) read; past it the issuer counts as broken. */
export const OAUTH_MAX_DOCUMENT_BYTES = 256 * 1024;

/** The longest bearer token looked at (bytes of the header value); a longer one is refused with 431 before any parsing. */
export const OAUTH_MAX_TOKEN_BYTES = 8192;

/** `Retry-After` (seconds) of the 503 a request gets while an issuer's keys cannot be read. */
export const OAUTH_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Access tokens already verified, kept (by SHA-256 digest, never the token) until they expire, so the
 * signature of a token a client sends on every request is checked once; the oldest entry goes first.
 */
export const OAUTH_VERIFIED_TOKEN_CACHE_ENTRIES = 10_000;
