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

/**
 * Bytes of JSON lines one `resources/read` of a transcript returns: one page of it. The page ends before the
 * entry that would take it past this (counted from the sizes the store recorded, so no payload past the cut
 * is read); `_meta["superpi/nextUri"]` names the next page. An entry larger than this alone is a page of its
 * own, whole (an entry is at most 16 MiB, the store's DEFAULT_MAX_PAYLOAD_BYTES). As large as the largest
 * message the server takes in (`--max-message-bytes`), which a host that talks to it handles already.
 */
export const TRANSCRIPT_READ_MAX_BYTES = 4 * 1024 * 1024;

/** Entries one `resources/read` of a transcript returns at most, however small: the rest follow by `_meta["superpi/nextUri"]`. */
export const TRANSCRIPT_READ_MAX_ENTRIES = 1000;
