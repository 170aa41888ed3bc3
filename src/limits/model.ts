// The named limits of one area: Model endpoints a harness task calls. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── Model endpoints a harness task calls (src/model).

/** Deadline of one attempt, from sending the request to the last byte of the response. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

/** Attempts after the first one; a request is sent at most 1 + this many times. */
export const DEFAULT_MAX_RETRIES = 3;

/** Largest successful response body read; a model turn is far smaller, so more means something is wrong. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * How much of a sampled model answer (MCP sampling: tool calls written as `<tool_call>` text) its reading may
 * read again, as a multiple of its length: a block that does not parse at its first closing tag is read on to
 * later ones (its arguments may hold the tag), until this budget is spent; then it ends at its first closing tag.
 */
export const SAMPLED_TURN_REREAD_FACTOR = 8;
