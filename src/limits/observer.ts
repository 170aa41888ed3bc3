// The named limits of one area: The observer page and /metrics. Imported through src/limits.ts, the one module every
// other file names (test/architecture/readme-figures.test.ts reads them there); imports nothing.

// ── The observer page and /metrics (src/observer).

/** How often a watching observer page gets a snapshot. */
export const OBSERVER_UPDATE_MS = 500;

/** Observer event streams open at once; more are refused with 503. */
export const MAX_OBSERVER_STREAMS = 16;

/** A stream whose client has this much unread is skipped (not buffered further) until it catches up. */
export const MAX_OBSERVER_BACKLOG_BYTES = 1 << 20;

/** Seconds of the call chart sent with each snapshot, once the server has run that long. */
export const CHART_SECONDS = 180;

/**
 * Payload bytes of one `/observer/transcript` answer, cut by the store from the sizes it recorded (no
 * payload past the cut is read); at least one entry, so an entry larger than this comes alone. The page
 * asks again from the last seq it has, a second later.
 */
export const OBSERVER_TRANSCRIPT_PAGE_BYTES = 1 << 20;
