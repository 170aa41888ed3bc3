// The named limits of one area: One MCP session: its connection actor and what it keeps. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── Connections: one MCP session (src/connection).

/**
 * Elements of a JSON-RPC batch handled per turn of the actor. Between slices the thread serves its other
 * actors and answers its heartbeat, so a long batch (up to MAX_BATCH_LENGTH) never holds the thread.
 */
export const BATCH_SLICE_LENGTH = 50;

/** Messages held for a session while its actor is being restarted; past this, requests are refused with -32011 (server busy). */
export const MAX_BUFFERED_MESSAGES = 10_000;

/** After a deadline or cancellation aborts a tool, how long it has to stop; past it the call is answered for (`Stopped: …`) and its late result dropped. */
export const ABORT_GRACE_MS = 2000;

/** Entries of the top-level layout listed; more are summarised as a count. */
export const LAYOUT_LIMIT = 100;

/** Lines of the README shown in the workspace resource. */
export const README_EXCERPT_LINES = 40;

/** Bytes of the README read at most: the excerpt comes from its head, whatever its size. */
export const README_EXCERPT_BYTES = 16 * 1024;

/** Path completions returned at most; the rest are reported as `hasMore`. */
export const PATH_COMPLETION_LIMIT = 100;
